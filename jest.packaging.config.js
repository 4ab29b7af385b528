const base = require('./jest.config');

/** What a user of the published package meets: the packed tarball, the README's snippets, the demo. Slow (npm pack, tsc). */
module.exports = {
  ...base,
  testPathIgnorePatterns: ['/node_modules/'],
  testMatch: ['**/spec/packaging/**/*.spec.ts'],
  maxWorkers: 1,
  reporters: ['default', ['<rootDir>/spec/helpers/suite-recorder.js', { suite: 'packaging' }]],
  testTimeout: 300_000,
};
