/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/spec'],
  testMatch: ['**/*.spec.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    '^.+\\.lua$': '<rootDir>/spec/helpers/lua-transform.js',
  },
  moduleFileExtensions: ['ts', 'js', 'lua', 'json'],
  testTimeout: 60_000,
};
