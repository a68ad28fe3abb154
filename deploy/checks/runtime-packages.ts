import { builtinModules } from 'node:module';

// What an app bundle loads from node_modules at run time. tools/build-app.mjs bundles our own sources and
// leaves every package external, so esbuild's CommonJS output names each one in a literal `require("…")`,
// or `import("…")` where the source loads it lazily (Prisma's query compiler).

const LOAD = /\b(?:require|import)\(\s*"([^"]+)"\s*\)/g;
const BUILTINS = new Set(builtinModules);

/** The package a bare specifier belongs to: `@scope/name/sub/path` → `@scope/name`, `name/sub` → `name`. */
export function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** The packages a bundle loads, without Node's built-in modules and relative files. */
export function runtimePackages(bundle: string): string[] {
  const found = new Set<string>();
  for (const match of bundle.matchAll(LOAD)) {
    const specifier = match[1]!;
    if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) continue;
    if (BUILTINS.has(specifier) || BUILTINS.has(packageOf(specifier))) continue;
    found.add(packageOf(specifier));
  }
  return [...found].sort();
}

/** Of the packages a bundle loads, those a production-only install (`npm install --omit=dev`) would not provide. */
export function missingFromProduction(
  packages: string[],
  manifest: { dependencies?: Record<string, string> },
): string[] {
  return packages.filter((name) => !Object.hasOwn(manifest.dependencies ?? {}, name));
}
