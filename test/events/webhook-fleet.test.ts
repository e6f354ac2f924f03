// Guards end-to-end webhook delivery by the real poller fleet: with one poller SIGKILLed mid-run, a subscriber still gets every terminal event of its API-submitted tasks (ordinary ones, and 2026-07-28 ones on a strict server), correctly signed and in per-task sequence order.
import { createHmac } from 'node:crypto';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import request from 'supertest';
import { publicEventId } from '@app/views';
import { ApiProcess, apiKeyFor, bearer } from '../helpers/api';
import { useFleet } from '../helpers/fleet';
import {
  DemoServerProcess,
  PollerProcess,
  demoServerEntry,
  demoTasksEntry,
  writeServersFile,
} from '../helpers/processes';
import { waitUntil } from '../helpers/wait';
import { WebhookReceiver } from './webhook-receiver';

const TASKS = 40;
// Also on a --strict-2026 demo server (it refuses initialize): 2026-07-28 tasks only.
const STRICT_TASKS = 8;
const STRICT_TOOLSET = 'fleet-strict';
const THREAD = 'fleet-hooks';
const TOOLSET = 'fleet-demo';
const PATH = '/fleet';
// Every poller and the API must allow the loopback receiver (and plain http).
const PRIVATE_OK = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };

const fleet = useFleet();
let api: ApiProcess;
let demo: DemoServerProcess;
let strictDemo: DemoServerProcess;
let serversFile: string;
const pollers: PollerProcess[] = [];
let receiver: WebhookReceiver;
let auth: string;

beforeAll(async () => {
  api = await fleet.api(PRIVATE_OK);
  demo = await fleet.demo();
  strictDemo = await fleet.demo(['--strict-2026']);
  serversFile = writeServersFile({
    'fleet-srv': demoServerEntry(demo.url, TOOLSET),
    'strict-srv': demoTasksEntry(
      strictDemo.url,
      { [STRICT_TOOLSET]: 'demo_task' },
      { pinned: true },
    ),
  });
  for (let i = 0; i < 2; i++) {
    // FAST_POLLER_ENV: LEASE_MS=3000, so the killed poller's tasks are rescued within seconds.
    pollers.push(await fleet.poller(serversFile, { env: PRIVATE_OK }));
  }
  receiver = new WebhookReceiver();
  await receiver.start();
  auth = bearer(await apiKeyFor({ db: fleet.database }, 'hook-owner'));
  await waitUntil(
    async () => {
      const res = await request(api.url).get('/v1/toolsets').set('Authorization', auth);
      const items = (res.body.items ?? []) as Array<{ name: string; available: boolean }>;
      const up = items.filter((t) => t.available && [TOOLSET, STRICT_TOOLSET].includes(t.name));
      return up.length === 2 ? true : undefined;
    },
    `${TOOLSET} and ${STRICT_TOOLSET} available`,
    30_000,
  );
}, 60_000);

// After the fleet's own afterAll: its pollers, demo servers and API have stopped by then.
afterAll(async () => {
  await receiver?.stop();
  if (serversFile) rmSync(dirname(serversFile), { recursive: true, force: true });
});

/** The signature as api.md specifies it, computed here rather than by the library under test. */
function specSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

interface ReceivedEvent {
  id: string;
  type: string;
  sequence: number;
  task: { task_id: string; status: string };
}

/** The live webhook leases of a poller (deliveries are leased under its WORKER_ID), by ID. */
async function webhookLeasesOf(poller: PollerProcess): Promise<Map<string, Date>> {
  const rows = await fleet.db.query<{ id: string; lease_expires_at: Date }>(
    `SELECT id::text AS id, lease_expires_at FROM webhook_deliveries
      WHERE lease_owner = $1 AND lease_token IS NOT NULL AND lease_expires_at > now()`,
    [poller.workerId],
  );
  return new Map(rows.map((r) => [r.id, r.lease_expires_at]));
}

it('delivers every terminal event, signed, in sequence, across a SIGKILLed poller', async () => {
  const created = await request(api.url)
    .post('/v1/webhooks')
    .set('Authorization', auth)
    .send({ url: `${receiver.base}${PATH}`, description: 'fleet test' });
  expect(created.status).toBe(201);
  const secret = created.body.secret as string;
  expect(secret).toMatch(/^whsec_/);
  // 200 ms per answer keeps deliveries in flight, so the kill lands on a held webhook lease.
  receiver.route(PATH, secret, 200, 200);

  const submitted = await Promise.all(
    Array.from({ length: TASKS }, async (_, i) => {
      const res = await request(api.url)
        .post(`/v1/threads/${THREAD}/tasks`)
        .set('Authorization', auth)
        .send({
          toolset: TOOLSET,
          arguments: {
            duration_ms: 1000 + (i % 8) * 300,
            outcome: i % 4 === 0 ? 'fail' : 'complete',
            tag: `fleet-${i}`,
          },
        });
      expect(res.status).toBe(201);
      return res.body.task_id as string;
    }),
  );
  // The same mix on the strict server: demo_task ends a tool error `completed` with isError.
  submitted.push(
    ...(await Promise.all(
      Array.from({ length: STRICT_TASKS }, async (_, i) => {
        const res = await request(api.url)
          .post(`/v1/threads/${THREAD}/tasks`)
          .set('Authorization', auth)
          .send({
            toolset: STRICT_TOOLSET,
            arguments: {
              duration_ms: 1000 + (i % 8) * 300,
              outcome: i % 4 === 0 ? 'tool_error' : 'complete',
              tag: `fleet-strict-${i}`,
            },
          });
        expect(res.status).toBe(201);
        return res.body.task_id as string;
      }),
    )),
  );
  const taskIds = new Set(submitted);
  const strictIds = submitted.slice(TASKS);

  // Mid-run: the victim holds a webhook delivery lease while some tasks are still active. It is
  // frozen (SIGSTOP) before its leases are read and killed frozen, so it cannot finish a held
  // delivery between the read and the kill (a run on a 2-core host once lost every held one
  // that way); only a write already sent when it froze can still land.
  const [victim, survivor] = pollers;
  const heldAtKill = await waitUntil(
    async () => {
      victim.pause();
      const held = await webhookLeasesOf(victim);
      const [{ active, strict }] = await fleet.db.query<{ active: number; strict: number }>(
        `SELECT count(*)::int AS active, (count(*) FILTER (WHERE id = ANY($1)))::int AS strict
           FROM tasks WHERE status NOT IN ('completed', 'failed', 'cancelled')`,
        [strictIds],
      );
      // Strict-server tasks too are still running when it dies.
      if (held.size > 0 && active > 0 && strict > 0) return held;
      victim.resume();
      return undefined;
    },
    'the victim poller to hold a webhook lease mid-run',
    20_000,
    20,
  );
  await victim.kill();

  // Every task ends through the API, completed or failed as its arguments say; a task caught
  // mid-submit by the kill may end failed/outcome_uncertain instead (submits are at most once).
  const finished = await waitUntil(
    async () => {
      const res = await request(api.url)
        .get(`/v1/threads/${THREAD}/tasks?status=terminal&limit=100`)
        .set('Authorization', auth);
      return res.body.items?.length === TASKS + STRICT_TASKS
        ? (res.body.items as Array<{
            task_id: string;
            status: string;
            error: { code: string } | null;
          }>)
        : undefined;
    },
    'every task terminal',
    30_000,
    100,
  );
  const finalStatus = new Map(finished.map((t) => [t.task_id, t.status]));
  expect([...finalStatus.keys()].sort()).toEqual([...taskIds].sort());
  for (const task of finished) {
    const index = submitted.indexOf(task.task_id);
    const failing = (index < TASKS ? index : index - TASKS) % 4 === 0;
    const expected =
      task.error?.code === 'outcome_uncertain'
        ? { status: 'failed', code: 'outcome_uncertain' }
        : failing
          ? { status: 'failed', code: 'upstream_failed' }
          : { status: 'completed', code: undefined };
    expect({ task: task.task_id, status: task.status, code: task.error?.code }).toEqual({
      task: task.task_id,
      ...expected,
    });
  }
  // The strict server's tasks ran to their own ends, not only to outcome_uncertain.
  expect(strictIds.filter((id) => finalStatus.get(id) === 'completed').length).toBeGreaterThan(0);

  // The receiver gets a terminal event for each task, those the victim held included: the
  // survivor takes them once the victim is dead by the workers' rule, not at their leases' end
  // (at least 30 s; docs/events.md, "Delivery").
  const terminalOf = (): Map<string, ReceivedEvent> => {
    const seen = new Map<string, ReceivedEvent>();
    for (const r of receiver.at(PATH)) {
      const event = JSON.parse(r.body) as ReceivedEvent;
      if (event.type === 'task.completed' || event.type === 'task.failed')
        seen.set(event.task.task_id, event);
    }
    return seen;
  };
  await waitUntil(
    () => (terminalOf().size === TASKS + STRICT_TASKS ? true : undefined),
    'a terminal event of every task at the receiver',
    45_000,
    100,
  );
  for (const [taskId, event] of terminalOf()) {
    expect(taskIds.has(taskId)).toBe(true);
    expect(event.type).toBe(`task.${finalStatus.get(taskId)}`);
    expect(event.task.status).toBe(finalStatus.get(taskId));
  }

  // Let the redeliveries of the victim's leases land, then judge everything received.
  await waitUntil(
    async () => {
      const [{ open }] = await fleet.db.query<{ open: number }>(
        `SELECT count(*)::int AS open FROM webhook_deliveries WHERE status <> 'delivered'`,
      );
      return open === 0 ? true : undefined;
    },
    'every delivery recorded as delivered',
    45_000,
    200,
  );
  const received = receiver.at(PATH);
  const nowS = Date.now() / 1000;
  const bodyById = new Map<string, string>();
  const byTask = new Map<string, Map<string, number>>();
  for (const r of received) {
    const id = r.headers['webhook-id'] as string;
    const timestamp = r.headers['webhook-timestamp'] as string;
    expect(r.verified).toBe(true);
    expect(r.headers['webhook-signature']).toBe(specSignature(secret, id, timestamp, r.body));
    expect(Math.abs(nowS - Number(timestamp))).toBeLessThan(300);
    const event = JSON.parse(r.body) as ReceivedEvent;
    expect(event.id).toBe(id);
    // A redelivery is the same message, byte for byte.
    expect(bodyById.get(id) ?? r.body).toBe(r.body);
    bodyById.set(id, r.body);
    const events = byTask.get(event.task.task_id) ?? new Map<string, number>();
    events.set(id, event.sequence);
    byTask.set(event.task.task_id, events);
  }
  expect([...byTask.keys()].sort()).toEqual([...taskIds].sort());
  // Public event IDs are opaque: the outbox order comes from the outbox itself.
  const outboxOrder = new Map(
    (
      await fleet.db.query<{ id: string; task_id: string; sequence: number }>(
        `SELECT id::text AS id, task_id, sequence FROM task_events`,
      )
    ).map((e) => [publicEventId(e.task_id, e.sequence), Number(e.id)]),
  );
  const outboxId = (id: string): number => outboxOrder.get(id) ?? Number.NaN;
  for (const [taskId, events] of byTask) {
    // In outbox order (the event ID), each task's sequence strictly increases, ending terminal.
    for (const [id] of events)
      expect({ id, known: outboxOrder.has(id) }).toEqual({ id, known: true });
    const ordered = [...events].sort(([a], [b]) => outboxId(a) - outboxId(b));
    const sequences = ordered.map(([, sequence]) => sequence);
    for (let i = 1; i < sequences.length; i++)
      expect({ taskId, sequences, ok: sequences[i] > sequences[i - 1] }).toMatchObject({
        ok: true,
      });
    expect(ordered.at(-1)?.[0]).toBe(terminalOf().get(taskId)?.id);
  }

  // The deliveries the victim held were finished by the survivor on a later claim (one may have
  // been recorded by a write the victim had sent just before it froze), before the victim's
  // leases on them ended: the survivor did not wait them out.
  const rescued = await fleet.db.query<{
    id: string;
    attempts: number;
    status: string;
    finished_at: Date;
  }>(
    `SELECT id::text AS id, attempts, status, finished_at
       FROM webhook_deliveries WHERE id = ANY($1::bigint[])`,
    [[...heldAtKill.keys()]],
  );
  expect(rescued).toHaveLength(heldAtKill.size);
  expect(rescued.every((row) => row.status === 'delivered')).toBe(true);
  const retaken = rescued.filter((row) => row.attempts >= 2);
  expect(retaken.length).toBeGreaterThan(0);
  for (const row of retaken) {
    expect({ id: row.id, beforeLeaseEnd: row.finished_at < heldAtKill.get(row.id)! }).toEqual({
      id: row.id,
      beforeLeaseEnd: true,
    });
  }
  expect(survivor.child.exitCode).toBeNull();
}, 150_000);
