// Guards at-least-once webhook delivery: with delivery workers SIGKILLed mid-delivery, a real receiver still gets every terminal event of a few hundred tasks, each correctly signed.
import { publicEventId } from '@app/views';
import { newWebhookSecret } from '@app/webhooks';
import { WebhookRepository } from '@app/persistence';
import { useFleet } from '../helpers/fleet';
import type { NodeProcess } from '../helpers/node-process';
import { waitUntil } from '../helpers/wait';
import { insertTasks } from '../helpers/tasks';
import { WebhookReceiver } from './webhook-receiver';

const TASKS = 300;
const fleet = useFleet();
let receiver: WebhookReceiver;
const workers: NodeProcess[] = [];

function deliverer(name: string): NodeProcess {
  const child = fleet.node(
    'test/fixtures/events-deliverer.js',
    ['--worker', name, '--lease-ms', '3000', '--timeout-ms', '2000', '--slots', '8'],
    { DATABASE_URL: fleet.url },
  );
  workers.push(child);
  return child;
}

beforeAll(async () => {
  receiver = new WebhookReceiver();
  await receiver.start();
});

// After the fleet's own afterAll: the delivery workers have stopped by then.
afterAll(async () => {
  await receiver.stop();
});

/** Waits until `name` holds at least one live lease, i.e. is in the middle of a delivery. */
async function busy(name: string): Promise<number> {
  return waitUntil(
    async () => {
      const [row] = await fleet.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_deliveries
          WHERE lease_owner = $1 AND lease_token IS NOT NULL AND lease_expires_at > now()`,
        [name],
      );
      return row.n > 0 ? row.n : undefined;
    },
    `${name} to hold a delivery`,
    20_000,
  );
}

it('delivers every terminal event at least once across SIGKILLed workers', async () => {
  const secret = newWebhookSecret();
  // 150 ms per answer keeps deliveries in flight, so each kill lands mid-delivery.
  const url = receiver.route('/crash', secret, 200, 150);
  await new WebhookRepository(fleet.db).create({
    id: 'wh_crash',
    userId: 'u-crash',
    url,
    description: null,
    secret,
  });
  const ids = await insertTasks(fleet.db, TASKS, { userId: 'u-crash', threadId: 'crash' });
  const workersUp = [deliverer('d1'), deliverer('d2'), deliverer('d3')];
  await Promise.all(workersUp.map((w) => w.waitForLine(/deliverer ready/)));

  // Status changes in batches, as a fleet of pollers would make them, ending in all three
  // terminal statuses.
  for (let i = 0; i < TASKS; i += 50) {
    const batch = ids.slice(i, i + 50);
    await fleet.db.query(`UPDATE tasks SET status = 'working' WHERE id = ANY($1)`, [batch]);
    await fleet.db.query(
      `UPDATE tasks SET status = (ARRAY['completed', 'failed', 'cancelled'])[1 + (abs(hashtext(id)) % 3)],
              error_code = 'upstream_failed', completed_at = now()
        WHERE id = ANY($1)`,
      [batch],
    );
    if (i === 100) {
      expect(await busy('d1')).toBeGreaterThan(0);
      await workers[0].kill('SIGKILL');
      deliverer('d4');
    }
    if (i === 200) {
      expect(await busy('d2')).toBeGreaterThan(0);
      await workers[1].kill('SIGKILL');
    }
  }

  const terminal = (
    await fleet.db.query<{ task_id: string; sequence: number }>(
      `SELECT task_id, sequence FROM task_events
        WHERE type IN ('task.completed', 'task.failed', 'task.cancelled')`,
    )
  ).map((e) => ({ id: publicEventId(e.task_id, e.sequence) }));
  expect(terminal).toHaveLength(TASKS);
  const wanted = new Set(terminal.map((e) => e.id));
  await waitUntil(
    async () => {
      const got = new Set(receiver.at('/crash').map((r) => r.headers['webhook-id'] as string));
      return [...wanted].every((id) => got.has(id)) ? true : undefined;
    },
    'every terminal event at the receiver',
    60_000,
  );
  const received = receiver.at('/crash');
  expect(received.every((r) => r.verified)).toBe(true);
  // Everything else arrived too, and the killed workers' claims were taken over.
  await waitUntil(
    async () => {
      const [row] = await fleet.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status <> 'delivered'`,
      );
      return row.n === 0 ? true : undefined;
    },
    'every delivery delivered',
    30_000,
  );
  const [{ rescued }] = await fleet.db.query<{ rescued: number }>(
    `SELECT count(*)::int AS rescued FROM webhook_deliveries WHERE attempts > 1`,
  );
  expect(rescued).toBeGreaterThan(0);
});
