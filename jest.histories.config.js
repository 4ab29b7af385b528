const base = require('./jest.config');

/** The randomized mixed-client history check (spec/histories): `npm run test:histories`. */
module.exports = {
  ...base,
  testPathIgnorePatterns: ['/node_modules/'],
  testMatch: ['**/spec/histories/**/*.spec.ts'],
  maxWorkers: 1,
  reporters: ['default', ['<rootDir>/spec/helpers/suite-recorder.js', { suite: 'histories' }]],
};
