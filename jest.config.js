/** Jest: unit specs sit beside the code; integration and e2e tests live in test/. */
const swc = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
    keepClassNames: true,
    // Path aliases are rewritten at transform time, so global setup (loaded outside jest's
    // module registry) resolves them too.
    baseUrl: __dirname,
    paths: { '@app/*': ['libs/*/src'] },
  },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
};

const shared = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest', swc] },
  rootDir: __dirname,
};

module.exports = {
  testTimeout: 120000,
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  maxWorkers: 2,
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs}/**/*.spec.ts'] },
    { ...shared, displayName: 'integration', testMatch: ['<rootDir>/test/**/*.test.ts'] },
  ],
};
