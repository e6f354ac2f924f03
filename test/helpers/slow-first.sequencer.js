// Orders test files longest first, so no long file starts last and stretches the run's tail.
// Jest does this itself from its cache of earlier durations; a fresh clone (CI) has no cache,
// and jest then orders by file size, which put the slowest files (each a fleet of processes)
// wherever their size fell. This sequencer uses the cached duration when there is one, else the
// estimate below, else the file size. Order only: no test depends on it.
const { join, relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const ROOT = join(__dirname, '..', '..');

/** Wall-clock seconds of the slowest files, measured on the 2-core CI machine (4 workers). */
const ESTIMATE_SECONDS = {
  'test/chaos/chaos-short.test.ts': 42,
  'test/poller/held-call.test.ts': 38,
  'test/events/webhook-fleet.test.ts': 38,
  'test/front-door/front-door-durability.test.ts': 31,
  'test/api/api-lifecycle.test.ts': 30,
  'test/front-door/front-door-conformance.test.ts': 30,
  'test/ops/admin-commands.test.ts': 25,
  'test/demo-server/conformance-suite.test.ts': 24,
  'test/poller/attempt-deadline.test.ts': 22,
  'test/metrics/metrics-scrape.test.ts': 19,
  'test/ops/traces.test.ts': 17,
  'test/api/tasks-2026.test.ts': 16,
  'test/poller/submit-at-most-once.test.ts': 14,
  'test/poller/task-deadlines.test.ts': 14,
  'test/poller/group-commit.test.ts': 14,
  'test/poller/postgres-restart.test.ts': 13,
};

class SlowFirstSequencer extends Sequencer {
  sort(tests) {
    const weight = (test) => {
      const cached = this.time(test);
      if (cached != null) return cached;
      const estimate = ESTIMATE_SECONDS[relative(ROOT, test.path)];
      if (estimate !== undefined) return estimate * 1000;
      // Below any estimate or real duration: a byte of test file weighs a hundredth of a ms.
      return (test.context.hasteFS.getSize(test.path) ?? 0) / 100;
    };
    return [...tests].sort((a, b) => weight(b) - weight(a));
  }
}

module.exports = SlowFirstSequencer;
