// Prints the run's totals as one plain line ("12 passed, 0 failed, 1 skipped") after Jest's own summary,
// so CI logs end with a count any reader can parse.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    process.stdout.write(
      `\n${results.numPassedTests} passed, ${failed} failed, ${results.numPendingTests + results.numTodoTests} skipped\n`,
    );
  }
}
module.exports = SummaryReporter;
