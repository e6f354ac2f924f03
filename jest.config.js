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
    paths: {
      '@app/*': ['libs/*/src'],
      '@mcp-task-gateway/client': ['clients/typescript/src'],
    },
  },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
};

const shared = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest', swc] },
  rootDir: __dirname,
  // tsc copies package.json into dist/ (libs/common/src/version.ts imports it): one package name
  // twice is a haste-map collision warning on every run. Only that file is hidden, so tests that
  // load the built apps and libraries from dist/ still can.
  modulePathIgnorePatterns: ['<rootDir>/dist/package.json'],
};

module.exports = {
  testTimeout: 120000,
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
  // Five workers on the 2-core CI machine: most of a test's time is spent waiting on the
  // processes it spawned (pollers, APIs, demo servers, Postgres), not on its own CPU. Measured
  // on a quiet machine: 2 workers took 315 s of wall time for 282 s of CPU (jest and what it
  // spawned, Postgres not counted); 4 workers took 202 s with the two cores 81 % busy (all of
  // the machine's CPU, /proc/stat). Machines of one kind differ: AMD EPYC VMs took 494 to 527 s
  // on one host and 210 to 215 s on another (2026-12-02, 82 to 87 % busy). On a slow host
  // (2026-12-02, start costs 2.2 times the fast one's) 4 workers took 453 s and 5 took 598 s:
  // there the CPU is the limit, and a fifth worker only adds contention. On 2026-12-05 (an AMD
  // EPYC host, 4 workers 85 % busy) 4 workers took 238 s and 5 took 226 s, all passing; on
  // 2026-12-06 (an AMD EPYC host of the slow kind, 99 % busy either way) 4 took 567 s and 5 took
  // 561 s, the same CPU (docs/testing.md, "How long it takes"). Five workers' processes with
  // pools of 10 peaked at 97 client connections of the machine's max_connections of 100 (on
  // 2026-12-02 five and six failed a test with "too many clients"), so every app the tests start
  // keeps 5 (TEST_POOL_SIZE in test/helpers/global-setup.ts). A run starts about 120 pollers, 74
  // APIs, 46 CLIs and 217 demo servers (counted on 2026-12-06); what each start costs is
  // `npm run bench -- --only start-cost` (docs/benchmarks.md, "Process start").
  maxWorkers: 5,
  // Longest files first, also in a fresh clone with no duration cache (see the file).
  testSequencer: '<rootDir>/test/helpers/slow-first.sequencer.js',
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs}/**/*.spec.ts'] },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      // Node's environment plus the leak guard: a file that leaves a child process or an open
      // handle behind fails, naming them (docs/testing.md, "The leak guard"); a failed test's
      // report ends with its processes' latest output ("A failed test's processes").
      testEnvironment: '<rootDir>/test/helpers/leak-guard.environment.ts',
    },
  ],
};
