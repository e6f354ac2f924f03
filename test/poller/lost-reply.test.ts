// Guards against a commit whose reply was lost being taken for one that never landed: a poller
// behind a TCP proxy that swallows Postgres' answer to a committed handle write (or submit-started
// mark) and closes the connection, or leaves it silent until the statement bound, must not cancel
// upstream work whose handle is stored, nor end an unsent task outcome_uncertain (docs/leases.md,
// "Ambiguous commits"), nor take a held call's stored end for a lost one ("A call's end").
import { useFleet } from '../helpers/fleet';
import {
  insertFleetTasks,
  submitViolations,
  taskStates,
  waitAllTerminal,
  waitTaskEnd,
} from '../helpers/fleet-tasks';
import { demoServerEntry, type PollerProcess } from '../helpers/processes';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { waitUntil } from '../helpers/wait';

const fleet = useFleet({ perTest: true });
let proxy: TcpProxy | undefined;

afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

/** What the client sends for each write: its SQL text (batches are unnamed statements). */
const HANDLE_WRITE = 'submitted_at = now(), last_success_at = now()';
const SUBMIT_MARK = 'submit_started_at = now(), submit_attempts';
/** An attempt's terminal write (FINISH in attempt-write.sql.ts), not the catalog sweep's. */
const END_WRITE = 'poll_count = tasks.poll_count + 1, completed_at = now()';

const TASKS = 12;
/** DATABASE_STATEMENT_TIMEOUT_MS of the silence case: only it ends a wait for a lost reply. */
const STATEMENT_BOUND_MS = 2000;

/** The demo server, and a poller whose DATABASE_URL goes through a new proxy (`proxy`). */
async function pollerBehindProxy(env: Record<string, string> = {}, sync = false) {
  const target = new URL(fleet.url);
  const started = await startTcpProxy(Number(target.port || 5432));
  proxy = started;
  const viaProxy = new URL(fleet.url);
  viaProxy.port = String(started.port);
  const demo = await fleet.demo();
  const poller = await fleet.poller(
    { demo: demoServerEntry(demo.url, 'lost-reply', { sync }) },
    { env: { DATABASE_URL: viaProxy.toString(), ...env } },
  );
  return { proxy: started, demo, poller };
}

/** Waits until the proxy has lost `times` replies, naming the poller's last words if it never does. */
async function waitFired(
  fired: Promise<void>,
  times: number,
  poller: PollerProcess,
): Promise<void> {
  let lost = false;
  void fired.then(() => (lost = true));
  await waitUntil(
    () => lost || undefined,
    () =>
      `the proxy to lose ${times} replies; poller said ${JSON.stringify(poller.logs.slice(-5))}`,
    15_000,
  );
}

/**
 * One poller whose DATABASE_URL goes through the proxy, 12 ordinary tasks against the demo
 * server, and the replies to the first `times` statements holding `sql` lost after they
 * committed. Every task must complete, submitted once and never cancelled upstream.
 */
async function loseRepliesTo(
  sql: string,
  times: number,
  env: Record<string, string> = {},
  then: 'close' | 'silence' = 'close',
) {
  const { proxy, demo, poller } = await pollerBehindProxy(env);
  const fired = proxy.loseReplyTo((chunk) => chunk.includes(sql), times, then);
  const tag = (i: number) => `lost-${i}`;
  const ids = await insertFleetTasks(
    fleet.db,
    Array.from({ length: TASKS }, (_, i) => ({
      toolset: 'lost-reply',
      server: 'demo',
      input: { duration_ms: 1500, tag: tag(i) },
    })),
  );
  await waitFired(fired, times, poller);
  await waitAllTerminal(fleet.db, ids, 'every task to end', 30_000);
  if (then === 'silence') {
    // A task can end (polled by a later claim) before the bound ends the silent wait: the
    // checks below must see the writes that waited settle first. A submit attempt ends (its
    // `attempt` line) only once its handle write has settled, so every task's submit line is the
    // sign. Not a count of "storing the remote handle failed" lines: on a slow machine the bound
    // can end a wait after the lease did, and the writer then goes straight to its check.
    const submits = () =>
      new Map(
        poller.logs
          .filter((l) => l.msg === 'attempt' && l.phase === 'submit')
          .map((l) => [String(l.task_id), Number(l.ms)]),
      );
    await waitUntil(
      () => {
        const ended = submits();
        return ids.every((id) => ended.has(id)) ? ended : undefined;
      },
      () =>
        `every submit attempt to end (${submits().size} of ${TASKS}); poller said ${JSON.stringify(poller.logs.slice(-5))}`,
      20_000,
    );
    // A write whose reply was lost had landed: the poller found its handle stored, after a
    // wait that only the statement bound ended (nothing closed the connection).
    const found = poller.logs
      .filter((l) =>
        /had been stored by a write whose reply was lost|stored the remote handle after the lease/.test(
          String(l.msg),
        ),
      )
      .map((l) => String(l.task_id));
    expect(found.length).toBeGreaterThan(0);
    const ended = submits();
    for (const id of found) expect(ended.get(id)).toBeGreaterThanOrEqual(STATEMENT_BOUND_MS);
  }

  const states = [...(await taskStates(fleet.db, ids)).values()];
  expect(states.map((s) => [s.status, s.error_code])).toEqual(
    Array.from({ length: TASKS }, () => ['completed', null]),
  );
  const stats = await demo.stats();
  // Nothing cancelled upstream, and each task sent exactly once.
  const cancelled = Object.entries(stats.by_tag).filter(([, counts]) => counts.cancels > 0);
  expect(cancelled).toEqual([]);
  expect(stats.ordinary.cancels).toBe(0);
  expect(await submitViolations(fleet.db, ids, stats.by_tag)).toEqual([]);
  expect(poller.logs.filter((l) => /could not be stored/.test(String(l.msg)))).toEqual([]);
}

it('a lost reply to a committed handle write: the stored handle is kept, nothing cancelled', async () => {
  await loseRepliesTo(HANDLE_WRITE, 2);
});

it('a lost reply to a committed submit-started mark: the mark is re-read, the task sent once', async () => {
  await loseRepliesTo(SUBMIT_MARK, 2);
});

it('row by row (no group commit), a lost reply to a handle write keeps the handle too', async () => {
  await loseRepliesTo(HANDLE_WRITE, 2, { WRITE_BATCH_WINDOW_MS: '0' });
});

it('a lost reply to a committed handle write, then silence: the statement bound ends the wait, the handle is kept', async () => {
  // No close tells the poller anything: only DATABASE_STATEMENT_TIMEOUT_MS ends each wait, and
  // the silent connection must be dropped, not handed out again.
  await loseRepliesTo(
    HANDLE_WRITE,
    2,
    { DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_BOUND_MS) },
    'silence',
  );
});

it("a lost reply to a held call's committed end: the end is found stored under its claim, not reported lost", async () => {
  // The end of a held call is in the poller alone (docs/leases.md, "A call's end"). Its write
  // committed, the reply was lost, and the lease row went with the end: the renewal finds no
  // lease, and the task row shows the end under this claim.
  const { proxy, demo, poller } = await pollerBehindProxy({}, true);
  const fired = proxy.loseReplyTo((chunk) => chunk.includes(END_WRITE));
  const [id] = await insertFleetTasks(fleet.db, [
    {
      toolset: 'lost-reply-sync',
      server: 'demo',
      contract: 'sync-call',
      input: { duration_ms: 300, tag: 'lost-end' },
    },
  ]);
  await waitFired(fired, 1, poller);
  expect(await waitTaskEnd(fleet.db, id)).toEqual({
    status: 'completed',
    error_code: null,
    claim_count: 1,
  });
  await waitUntil(
    () =>
      poller.logs.some(
        (l) => l.msg === "the call's end had been stored by a try whose reply was lost",
      )
        ? true
        : undefined,
    () => `the poller to find its end stored; it said ${JSON.stringify(poller.logs.slice(-5))}`,
    15_000,
  );
  expect(poller.logs.filter((l) => /could not be stored/.test(String(l.msg)))).toEqual([]);
  expect((await demo.stats('lost-end')).sync.completed).toBe(1);
});
