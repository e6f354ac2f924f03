// Guards the stored schedule: backoff doubles inside ±20 %, success delays honour hints, clamps and ±10 %.
import { useFleet } from '../helpers/fleet';
import { insertFleetTasks } from '../helpers/fleet-tasks';
import { demoServerEntry, startDemoServer, writeServersFile } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

const fleet = useFleet();
// The clamp falls inside the five errors observed (250 * 2^4 > 2000). Each error count is seen
// only while its backoff runs, the six failing tasks in step: the first lasts 200 to 300 ms, so
// a short stall of this process or of Postgres is less likely to skip it.
const BASE = 250;
const MAX = 2000;
const POLL = 300;
const MIN = 100;

/** Each write sets next_attempt_at = now() + delay and updated_at = now() in one statement. */
interface Observation {
  tag: string;
  errors: number;
  polls: number;
  delayMs: number;
}

async function observe(ids: string[]): Promise<Observation[]> {
  return fleet.db.query<Observation>(
    `SELECT input->>'tag' AS tag, consecutive_errors AS errors, poll_count AS polls,
            extract(epoch FROM next_attempt_at - updated_at) * 1000 AS "delayMs"
       FROM task_rows WHERE id = ANY($1) AND lease_token IS NULL AND next_attempt_at IS NOT NULL
        AND status <> 'queued'`,
    [ids],
  );
}

it('keeps every stored due time inside its band', async () => {
  const demo = await startDemoServer();
  const serversFile = writeServersFile({ demo: demoServerEntry(demo.url, 'demo-ordinary') });
  await fleet.poller(serversFile, {
    env: { BACKOFF_BASE_MS: String(BASE), MAX_BACKOFF_MS: String(MAX) },
  });
  const seeds = [
    ...Array.from({ length: 6 }, (_, i) => ({ tag: `err-${i}`, fault: 'error_status' })),
    ...Array.from({ length: 4 }, (_, i) => ({ tag: `plain-${i}` })),
    ...Array.from({ length: 4 }, (_, i) => ({ tag: `hint-${i}`, poll_after_seconds: 0.5 })),
    ...Array.from({ length: 4 }, (_, i) => ({ tag: `tiny-${i}`, poll_after_seconds: 0.001 })),
  ];
  const ids = await insertFleetTasks(
    fleet.db,
    seeds.map((input) => ({
      toolset: 'demo-ordinary',
      server: 'demo',
      input: { duration_ms: 600_000, ...input },
    })),
  );
  const seen: Observation[] = [];
  await waitUntil(
    async () => {
      const rows = await observe(ids);
      seen.push(...rows.map((r) => ({ ...r, delayMs: Number(r.delayMs) })));
      return seen.some((o) => o.tag.startsWith('err') && o.errors >= 6) ? true : undefined;
    },
    'six consecutive errors on a failing task',
    30_000,
    20,
  );
  const bands: Record<string, [number, number]> = {};
  for (const o of seen) {
    let band: [number, number];
    if (o.tag.startsWith('err')) {
      if (o.errors === 0) continue; // the submit's first schedule, before any error
      const raw = Math.min(BASE * 2 ** Math.min(o.errors - 1, 16), MAX);
      band = [raw * 0.8, raw * 1.2];
    } else if (o.polls === 0) {
      // Scheduled by the submit: no hint is known before the first status answer.
      band = [POLL * 0.9, POLL * 1.1];
    } else if (o.tag.startsWith('hint')) band = [450, 550];
    else if (o.tag.startsWith('tiny')) band = [MIN, MIN * 1.1];
    else band = [POLL * 0.9, POLL * 1.1];
    bands[`${o.tag.split('-')[0]}:${o.errors}:${Math.min(o.polls, 1)}`] = band;
    // 1 ms for timestamp rounding in the database.
    expect(o.delayMs).toBeGreaterThanOrEqual(band[0] - 1);
    expect(o.delayMs).toBeLessThanOrEqual(band[1] + 1);
  }
  const covered = [1, 2, 3, 4, 5].map((k) => `err:${k}:0`);
  covered.push('plain:0:1', 'hint:0:1', 'tiny:0:1');
  expect(Object.keys(bands)).toEqual(expect.arrayContaining(covered));
  // Jitter is real: the plain interval is not one fixed number.
  const plain = new Set(
    seen.filter((o) => o.tag.startsWith('plain')).map((o) => Math.round(o.delayMs)),
  );
  expect(plain.size).toBeGreaterThan(1);
});
