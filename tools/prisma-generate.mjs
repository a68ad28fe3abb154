// Generates one app's Prisma client from apps/<app>/prisma/schema.prisma into apps/<app>/src/generated/prisma.
// Prisma 7's client needs no native engine, but the CLI still looks for a schema engine binary and would
// try to download one; pointing it at any existing file lets `generate` run offline.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const app = process.argv[2];
if (!app) {
  console.error('usage: node tools/prisma-generate.mjs <app>');
  process.exit(2);
}
const result = spawnSync(
  process.execPath,
  [
    path.join(root, 'node_modules/prisma/build/index.js'),
    'generate',
    '--schema',
    path.join(root, 'apps', app, 'prisma/schema.prisma'),
  ],
  {
    stdio: 'inherit',
    env: {
      ...process.env,
      PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY ?? process.execPath,
      PRISMA_HIDE_UPDATE_MESSAGE: '1',
      CHECKPOINT_DISABLE: '1',
    },
  },
);
process.exit(result.status ?? 1);
