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
  // Four workers on the 2-core CI machine: most of a test's time is spent waiting on the
  // processes it spawned (pollers, APIs, demo servers, Postgres), not on its own CPU. Measured
  // on a quiet machine: 2 workers took 315 s of wall time for 282 s of CPU (jest and what it
  // spawned, Postgres not counted); 4 workers take 202 s with the two cores 81 % busy (all of
  // the machine's CPU, /proc/stat). More would queue for the same two cores. Machines differ: on
  // a 2-core AMD EPYC VM (2026-12-02) a run takes 494 to 527 s (Node 20); jest and what it spawns
  // use 750 to 800 s of CPU (1.5 of the 2 cores) and the Postgres server most of the rest. A
  // start there costs, idle, to its ready line: poller 1.05 s of CPU, API 1.2 s, CLI 0.84 s, a
  // stdio demo server 0.39 s; a run starts about 50 APIs, 25 CLIs and 100 demo servers.
  maxWorkers: 4,
  // Longest files first, also in a fresh clone with no duration cache (see the file).
  testSequencer: '<rootDir>/test/helpers/slow-first.sequencer.js',
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs}/**/*.spec.ts'] },
    { ...shared, displayName: 'integration', testMatch: ['<rootDir>/test/**/*.test.ts'] },
  ],
};
