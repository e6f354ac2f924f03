// Orders test files longest first, so no long file starts last and stretches the run's tail.
// Jest does this itself from its cache of earlier durations; a fresh clone (CI) has no cache,
// and jest then orders by file size, which put the slowest files (each a fleet of processes)
// wherever their size fell. This sequencer uses the cached duration when there is one, else the
// estimate below, else the file size. Order only: no test depends on it.
const { join, relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const ROOT = join(__dirname, '..', '..');

/** Wall-clock seconds of the slowest files on the 2-core CI machine (5 workers, 2026-12-05). */
const ESTIMATE_SECONDS = {
  'test/poller/held-call.test.ts': 52,
  'test/chaos/chaos-short.test.ts': 46,
  'test/front-door/front-door-conformance.test.ts': 43,
  'test/front-door/front-door-client-cancel.test.ts': 37,
  'test/front-door/front-door-durability.test.ts': 31,
  'test/demo-server/conformance-suite.test.ts': 27,
  'test/poller/pinned-stdio.test.ts': 23,
  'test/poller/attempt-deadline.test.ts': 21,
  'test/api/tasks-2026.test.ts': 21,
  'test/console/console-browser.test.ts': 20,
  'test/front-door/front-door-client-timeout.test.ts': 18,
  'test/api/tasks-2026-strict.test.ts': 18,
  'test/api/tasks-2026-pinned.test.ts': 18,
  'test/ops/traces.test.ts': 17,
  'test/front-door/front-door-official-client.test.ts': 17,
  'test/api/api-lifecycle.test.ts': 15,
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
