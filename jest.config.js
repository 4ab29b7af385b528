/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/spec'],
  testMatch: ['**/*.spec.ts'],
  // Fault-injection and soak runs: `npm run test:chaos` (jest.chaos.config.js); the packed package, README
  // snippets and demo: `npm run test:packaging` (jest.packaging.config.js); replicated topologies:
  // `npm run test:topology` (jest.topology.config.js); the randomized history check: `npm run test:histories`
  // (jest.histories.config.js).
  testPathIgnorePatterns: ['/node_modules/', '/spec/chaos/', '/spec/packaging/', '/spec/topology/', '/spec/histories/'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    '^.+\\.lua$': '<rootDir>/spec/helpers/lua-transform.js',
  },
  moduleFileExtensions: ['ts', 'js', 'lua', 'json'],
  testTimeout: 60_000,
  reporters: ['default', ['<rootDir>/spec/helpers/suite-recorder.js', { suite: 'main' }]],
};
