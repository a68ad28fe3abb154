// Every project's Jest settings in one run, closed by a plain "N passed, N failed" line. `npm test` runs this
// twice through tools/jest/run-phases.js (unit tests, then integration tests; see jest.preset.js).
const { readdirSync, existsSync } = require('node:fs');
const path = require('node:path');

const projects = [
  ...['apps', 'libs'].flatMap((dir) =>
    readdirSync(path.join(__dirname, dir)).map((name) => path.join(__dirname, dir, name, 'jest.config.js')),
  ),
  path.join(__dirname, 'deploy', 'jest.config.js'),
  path.join(__dirname, 'e2e', 'jest.config.js'),
].filter((file) => existsSync(file));

module.exports = {
  projects,
  // A global option: in a multi-project run the projects' own testTimeout is ignored.
  testTimeout: require('./jest.preset.js').testTimeout,
  reporters: ['default', path.join(__dirname, 'tools/jest/summary-reporter.js')],
};
