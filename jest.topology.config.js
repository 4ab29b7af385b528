const base = require('./jest.config');

/** Cluster-with-replicas and Sentinel-group suites: several servers per file, one file at a time. */
module.exports = {
  ...base,
  testPathIgnorePatterns: ['/node_modules/'],
  testMatch: ['**/spec/topology/**/*.spec.ts'],
  maxWorkers: 1,
  reporters: ['default', ['<rootDir>/spec/helpers/suite-recorder.js', { suite: 'topology' }]],
  testTimeout: 180_000,
};
