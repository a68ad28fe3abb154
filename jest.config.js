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
  // With one worker (a 2-core machine) Jest runs every file in its own main process, one after the other, and the
  // integration phase's hundred files grew that one heap past V8's 4 GB limit (each file leaves some of what it
  // loaded behind). A limit makes Jest run the files in a worker instead, replaced once it holds more than this
  // after a file.
  workerIdleMemoryLimit: '1GB',
  // Jest's default on a 2-core machine is one worker. An integration file spends most of its time waiting on the
  // processes, simulators and timers it starts, so two files at a time cut the phase's wall time; databases are
  // per file, Redis keys per file or per random id, ports picked free. A --maxWorkers argument still overrides it.
  ...(process.env.SBC_TEST_PHASE === 'int' && { maxWorkers: 2 }),
  reporters: ['default', path.join(__dirname, 'tools/jest/summary-reporter.js')],
};
