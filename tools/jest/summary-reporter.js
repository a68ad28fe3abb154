// Prints the run's totals as one plain line ("12 passed, 0 failed, 1 skipped") after Jest's own summary,
// so CI logs end with a count any reader can parse. Under tools/jest/run-phases.js (SBC_TEST_TOTALS_FILE set)
// it writes the totals to that file instead, and the runner prints one line for all its phases.
const { writeFileSync } = require('node:fs');

function totalsOf(results) {
  return {
    passed: results.numPassedTests,
    failed: results.numFailedTests + results.numRuntimeErrorTestSuites,
    skipped: results.numPendingTests + results.numTodoTests,
  };
}

function summaryLine({ passed, failed, skipped }) {
  return `${passed} passed, ${failed} failed, ${skipped} skipped`;
}

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const totals = totalsOf(results);
    const file = process.env.SBC_TEST_TOTALS_FILE;
    if (file) writeFileSync(file, JSON.stringify(totals));
    else process.stdout.write(`\n${summaryLine(totals)}\n`);
  }
}

module.exports = SummaryReporter;
module.exports.summaryLine = summaryLine;
