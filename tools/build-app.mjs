// Bundles one app into dist/apps/<app>/main.js with esbuild. Workspace libraries are bundled from source
// (tsconfig paths); packages from node_modules stay external and load at run time.
import { build } from 'esbuild';
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const app = process.argv[2];
if (!app) {
  console.error('usage: node tools/build-app.mjs <app>');
  process.exit(2);
}

await build({
  entryPoints: [path.join(root, 'apps', app, 'src', 'main.ts')],
  outfile: path.join(root, 'dist', 'apps', app, 'main.js'),
  bundle: true,
  platform: 'node',
  // The oldest Node the engines field admits, so every bundle runs on each supported line.
  target: 'node20',
  format: 'cjs',
  packages: 'external',
  sourcemap: true,
  tsconfig: path.join(root, 'tsconfig.base.json'),
  logLevel: 'warning',
  // Lets the app's main.ts know it is the entry point of this bundle (see libs/lifecycle).
  define: { SBC_BUNDLE_ENTRY: JSON.stringify(app) },
});

// SQL migrations travel with the bundle: dist/apps/<app>/migrations/<service>/. The embedded bundle holds
// every service, so it gets every service's migrations.
const services = app === 'embedded' ? readdirSync(path.join(root, 'apps')) : [app];
for (const service of services) {
  const from = path.join(root, 'apps', service, 'prisma', 'migrations');
  if (!existsSync(from)) continue;
  const to = path.join(root, 'dist', 'apps', app, 'migrations', service);
  rmSync(to, { recursive: true, force: true });
  cpSync(from, to, { recursive: true });
}
