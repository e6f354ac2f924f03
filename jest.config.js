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
  // One worker per core of the 2-core CI machine, no more: the suite is CPU-bound, not waiting.
  // Measured with /usr/bin/time -v: 772 s of CPU (user + sys, children included) in 1,063 s of
  // wall time at load 7-20, while a quiet run takes ~324 s; each poller, API or CLI process
  // spends ~1.7 s of CPU loading its ~2,000 modules before it does anything. Extra workers would
  // queue for the same two cores and stretch every test's waits.
  maxWorkers: 2,
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs}/**/*.spec.ts'] },
    { ...shared, displayName: 'integration', testMatch: ['<rootDir>/test/**/*.test.ts'] },
  ],
};
