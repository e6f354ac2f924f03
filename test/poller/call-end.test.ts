// Guards the end of a call that cannot be repeated against a database that is down when the call
// answers (docs/leases.md, "A call's end"): a held call's answer, and a submit the upstream
// answers at once with its result. The end is the only record of the call, so its write waits for
// the database with the claim kept, and the task completes, called once.
import { insertFleetTasks, waitCallReceived, waitTaskEnd } from '../helpers/fleet-tasks';
import { useOwnPostgres } from '../helpers/postgres-process';
import { startDemoServer, startPoller, writeServersFile } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

// The lease (20 s, renewed every 6.7 s) outlasts the outage: the claim is kept through it.
const ENV = { LEASE_MS: '20000' };

const postgres = useOwnPostgres('call-end', 4);

/** demo_slow answers its call after `duration_ms`: held, or as a submit answered at once. */
const CASES: Array<[string, Record<string, unknown>, string, 'sync-call' | 'mcp-tasks']> = [
  [
    'a held call',
    { name: 'held', contract: 'sync-call', tool: 'demo_slow', callTimeoutMs: 60_000 },
    '/mcp',
    'sync-call',
  ],
  [
    'a submit answered at once (2026-07-28, no task made)',
    { name: 'answered', contract: 'mcp-tasks', tool: 'demo_slow' },
    '/mcp-2026',
    'mcp-tasks',
  ],
];

it.each(CASES)(
  '%s that answers while Postgres is down has its end stored once it is back',
  async (_, toolset, path, contract) => {
    const demo = await startDemoServer();
    const name = toolset.name as string;
    const serversFile = writeServersFile({
      demo: {
        url: `${demo.url}${path}`,
        connectTimeoutMs: 3000,
        callTimeoutMs: 5000,
        taskToolsets: [toolset],
      },
    });
    const poller = await startPoller({ databaseUrl: postgres.url, serversFile, env: ENV });
    const tag = `call-end-${name}-${Date.now()}`;
    const [id] = await insertFleetTasks(postgres.db, [
      { toolset: name, server: 'demo', contract, input: { duration_ms: 1500, tag } },
    ]);
    // Sent: the upstream has the call.
    await waitCallReceived(demo, tag);
    await postgres.stop();
    // The call answers 1.5 s in, with the database down: its end has nowhere to go yet.
    await waitUntil(
      async () => {
        const stats = await demo.stats(tag);
        return stats.sync.completed > 0 ? true : undefined;
      },
      'the call to answer',
      20_000,
    );
    await postgres.restart();
    const ended = await waitTaskEnd(postgres.db, id);
    expect(ended).toEqual({ status: 'completed', error_code: null, claim_count: 1 });
    // It waited for the database, with the claim kept.
    expect(poller.logs.some((l) => l.msg === "storing the call's end failed; retrying")).toBe(true);
    // The next case's rows are not this poller's to claim.
    await poller.kill();
  },
  90_000,
);
