import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { missingFromProduction, packageOf, runtimePackages } from './runtime-packages';

// An image's runtime stage holds the bundle and `npm prune --omit=dev`: a package the bundle loads that is
// only a devDependency is missing there, and the app dies at start. `npm test` builds the bundles first.

const ROOT = path.resolve(__dirname, '../..');
const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};
const apps = readdirSync(path.join(ROOT, 'apps')).filter((app) =>
  existsSync(path.join(ROOT, 'apps', app, 'src/main.ts')),
);

describe('what each app bundle loads at run time', () => {
  it.each(apps)('%s loads only production dependencies and Node built-ins', (app) => {
    const file = path.join(ROOT, 'dist/apps', app, 'main.js');
    if (!existsSync(file)) throw new Error(`${file} is missing: run "npm run build" first (npm test does)`);
    const packages = runtimePackages(readFileSync(file, 'utf8'));
    // A bundle that loads nothing would mean the scan no longer matches esbuild's output.
    expect(packages).toContain('zod');
    expect({ app, notInDependencies: missingFromProduction(packages, manifest) }).toEqual({
      app,
      notInDependencies: [],
    });
  });
});

describe('the bundle scan', () => {
  it('names the package of every external require and lazy import, and skips built-ins and relative files', () => {
    const bundle = [
      'var a = require("undici");',
      'var b = require("@prisma/client/runtime/client");',
      'var c = await import("@prisma/client/runtime/query_compiler_fast_bg.postgresql.js");',
      'var d = require("node:crypto"), e = require("fs"), f = require("fs/promises"), g = require("./local");',
      'var h = require( "gpt-tokenizer/encoding/o200k_base" );',
    ].join('\n');
    expect(runtimePackages(bundle)).toEqual(['@prisma/client', 'gpt-tokenizer', 'undici']);
    expect(packageOf('@scope/name/deep/path')).toBe('@scope/name');
  });

  it('reports a runtime import that sits in devDependencies', () => {
    const devOnly = { dependencies: { zod: '^4' }, devDependencies: { undici: '^7' } };
    expect(missingFromProduction(['undici', 'zod'], devOnly)).toEqual(['undici']);
  });
});
