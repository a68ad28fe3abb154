// Shared Jest settings: swc transpiles TypeScript (no type-checking here; `build` type-checks), and the
// workspace path aliases from tsconfig.base.json resolve to library sources.
const path = require('node:path');
const { compilerOptions } = require('./tsconfig.base.json');

const root = __dirname;
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
  // PGlite loads Node built-ins with dynamic import(), which Jest's VM refuses without a flag; swc
  // rewrites those to require() when the package goes through the transform. eventsource-parser ships
  // ESM only, and so does the OpenAPI validator (@apidevtools); Jest's CommonJS runtime needs them transpiled like our own sources.
  transformIgnorePatterns: ['/node_modules/(?!(@electric-sql/pglite|eventsource-parser|@apidevtools|parse5|entities)/)'],
  moduleFileExtensions: ['ts', 'js', 'cjs', 'json'],
  moduleNameMapper,
  testMatch: ['**/*.test.ts'],
  globalSetup: path.join(root, 'libs/testing/src/global-setup.ts'),
  globalTeardown: path.join(root, 'libs/testing/src/global-teardown.ts'),
  testTimeout: 30000,
};
