// A Jest reporter that records what a suite run took, for the figures the README quotes: with
// IOREDISSON_RECORD_SUITES=1 it writes the run's test count and wall time into
// docs/generated/test-suites.json under the suite's name (its option `suite`). `npm run docs:sync`
// then renders them into the README. Without the variable it does nothing.
const { execFileSync } = require('node:child_process');
const { existsSync, readFileSync, writeFileSync, mkdirSync } = require('node:fs');
const { join } = require('node:path');

const FILE = join(__dirname, '..', '..', 'docs', 'generated', 'test-suites.json');

class SuiteRecorder {
  constructor(globalConfig, options = {}) {
    this.suite = options.suite ?? 'main';
    // A run of some files or tests only (`jest spec/x`, `-t name`) is not the suite's figure.
    const paths = globalConfig.testPathPatterns;
    this.partial =
      Boolean(globalConfig.testNamePattern) ||
      (Array.isArray(paths) ? paths.length > 0 : (paths?.patterns?.length ?? 0) > 0);
  }

  onRunComplete(_contexts, results) {
    if (process.env.IOREDISSON_RECORD_SUITES !== '1' || this.partial) return;
    const recorded = existsSync(FILE) ? JSON.parse(readFileSync(FILE, 'utf8')) : {};
    recorded[this.suite] = {
      tests: results.numTotalTests,
      failed: results.numFailedTests,
      seconds: Math.round((Date.now() - results.startTime) / 1000),
      commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim(),
      at: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
      cores: require('node:os').availableParallelism(),
    };
    mkdirSync(join(FILE, '..'), { recursive: true });
    writeFileSync(FILE, `${JSON.stringify(recorded, null, 2)}\n`);
  }
}

module.exports = SuiteRecorder;
