import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');

// The edge serves the build at /console/: hashed file names under assets/ (cached for a year), index.html
// revalidated. No inline script anywhere, so the edge's CSP can forbid it.
export default defineConfig({
  root: here,
  base: '/console/',
  resolve: {
    alias: {
      '@sbc/scopes': path.join(root, 'libs/scopes/src/index.ts'),
      '@sbc/agent-setup': path.join(root, 'libs/agent-setup/src/index.ts'),
    },
  },
  esbuild: { jsx: 'automatic' },
  build: {
    outDir: path.join(root, 'dist/apps/console'),
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    rolldownOptions: {
      // TanStack Query marks its modules "use client" for React Server Components; a plain SPA has none.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
  logLevel: 'warn',
});
