// Shared Jest settings: swc transpiles TypeScript (no type-checking here; `build` type-checks), and the
// workspace path aliases from tsconfig.base.json resolve to library sources.
const path = require('node:path');
const { compilerOptions } = require('./tsconfig.base.json');

const root = __dirname;

// `npm test` runs two phases, unit tests (`*.test.ts`) and then integration tests (`*.int.test.ts`, which boot
// real apps), chosen by SBC_TEST_PHASE; unset (a project's own `nx test`, or `npx jest <file>`) runs both.
const TEST_MATCH_BY_PHASE = {
  unit: ['**/*.test.ts', '!**/*.int.test.ts'],
  int: ['**/*.int.test.ts'],
};
const phase = process.env.SBC_TEST_PHASE;
if (phase !== undefined && !(phase in TEST_MATCH_BY_PHASE)) {
  throw new Error(
    `SBC_TEST_PHASE=${phase}: expected one of ${Object.keys(TEST_MATCH_BY_PHASE).join(', ')}, or unset for all tests`,
  );
}
const moduleNameMapper = {};
for (const [alias, [target]] of Object.entries(compilerOptions.paths)) {
  const from = '^' + alias.replace('*', '(.*)') + '$';
  moduleNameMapper[from] = path.join(root, target.replace('*', '$1'));
}

module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.(t|c?j)s$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        module: { type: 'commonjs' },
      },
    ],
  },
  // PGlite and the OTLP/HTTP exporter (otlp-exporter-base) load Node built-ins with dynamic import(), which Jest's
  // VM refuses without a flag; swc rewrites those to require() when the package goes through the transform. eventsource-parser ships
  // ESM only, and so does the OpenAPI validator (@apidevtools); Jest's CommonJS runtime needs them transpiled like our
  // own sources.
  transformIgnorePatterns: [
    '/node_modules/(?!(@electric-sql/pglite|@opentelemetry/otlp-exporter-base|eventsource-parser|@apidevtools|parse5|entities)/)',
  ],
  moduleFileExtensions: ['ts', 'js', 'cjs', 'json'],
  moduleNameMapper,
  testMatch: TEST_MATCH_BY_PHASE[phase] ?? ['**/*.test.ts'],
  globalSetup: path.join(root, 'libs/testing/src/global-setup.ts'),
  globalTeardown: path.join(root, 'libs/testing/src/global-teardown.ts'),
  testTimeout: 30000,
};
