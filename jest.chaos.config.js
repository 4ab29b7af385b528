const base = require('./jest.config');

/** Fault-injection, soak and hostile-environment runs; slower than `npm test`, one file at a time. */
module.exports = {
  ...base,
  testPathIgnorePatterns: ['/node_modules/'],
  testMatch: ['**/spec/chaos/**/*.spec.ts'],
  maxWorkers: 1,
  reporters: ['default', ['<rootDir>/spec/helpers/suite-recorder.js', { suite: 'chaos' }]],
  testTimeout: 300_000,
};
