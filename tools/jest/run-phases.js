// `npm test`: the unit tests, then the integration tests, as two Jest runs over the same projects (the phase is
// chosen in jest.preset.js), closed by one "N passed, N failed, N skipped" line with the totals of both, which
// CI reads. Arguments are passed to both runs (e.g. a path pattern). Both phases always run, so one report
// names every failure; the exit code is non-zero when either failed.
const { spawnSync } = require('node:child_process');
const { mkdtempSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');
const { summaryLine } = require('./summary-reporter');

const PHASES = [
  { name: 'unit', title: 'unit tests' },
  { name: 'int', title: 'integration tests' },
];

const jest = require.resolve('jest/bin/jest');
const dir = mkdtempSync(path.join(tmpdir(), 'sbc-test-phases-'));
const totals = { passed: 0, failed: 0, skipped: 0 };
let exitCode = 0;
try {
  for (const phase of PHASES) {
    process.stdout.write(`\n== ${phase.title} (SBC_TEST_PHASE=${phase.name})\n`);
    const totalsFile = path.join(dir, `${phase.name}.json`);
    // A filter that matches only one phase's files leaves the other with none, which is not a failure.
    const run = spawnSync(process.execPath, [jest, '--passWithNoTests', ...process.argv.slice(2)], {
      stdio: 'inherit',
      env: { ...process.env, SBC_TEST_PHASE: phase.name, SBC_TEST_TOTALS_FILE: totalsFile },
    });
    if (run.status !== 0) exitCode = 1;
    let phaseTotals;
    try {
      phaseTotals = JSON.parse(readFileSync(totalsFile, 'utf8'));
    } catch {
      // Jest stopped before its reporters ran (a bad configuration, a crash): count the phase as one failure.
      phaseTotals = { passed: 0, failed: 1, skipped: 0 };
      exitCode = 1;
    }
    for (const key of Object.keys(totals)) totals[key] += phaseTotals[key];
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(`\n${summaryLine(totals)}\n`);
process.exitCode = exitCode;
