// Guards the task-life trace: one trace links the API submit, attempts on two pollers and the upstream call.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { apiKeyFor, bearer, catalogEntry, publishCatalog } from '../helpers/api';
import { useFleet } from '../helpers/fleet';
import { demoServerEntry, writeServersFile } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

/** One exported span as the loopback collector keeps it (OTLP/HTTP JSON encoding). */
interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  pid: number;
  attributes: Record<string, unknown>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
}
interface OtlpKeyValue {
  key: string;
  value: OtlpValue;
}
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: {
      spans?: (Omit<CollectedSpan, 'pid' | 'attributes'> & { attributes?: OtlpKeyValue[] })[];
    }[];
  }[];
}

const valueOf = (v: OtlpValue): unknown => v.stringValue ?? v.intValue ?? undefined;
const toMap = (kvs: OtlpKeyValue[] = []) =>
  Object.fromEntries(kvs.map((kv) => [kv.key, valueOf(kv.value)]));

/** A loopback OTLP/HTTP collector that keeps every span in memory. */
async function startCollector(): Promise<{ url: string; spans: CollectedSpan[]; server: Server }> {
  const spans: CollectedSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.headers['content-type']?.includes('json')) {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as OtlpExport;
        for (const rs of body.resourceSpans ?? []) {
          const pid = Number(toMap(rs.resource?.attributes)['process.pid']);
          for (const ss of rs.scopeSpans ?? []) {
            for (const span of ss.spans ?? []) {
              spans.push({ ...span, pid, attributes: toMap(span.attributes) });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, server };
}

// Each test's pollers and demo server stop after it, so none of the first test's pollers exports
// spans during the second.
const fleet = useFleet({ perTest: true });
let collector: Awaited<ReturnType<typeof startCollector>>;

beforeAll(async () => {
  collector = await startCollector();
});
// After the fleet's own afterAll: its APIs have stopped by then.
afterAll(() => {
  collector.server.close();
});

it('one trace: the API submit, a submit on one poller, a poll on another, and the upstream call', async () => {
  const tracing = {
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_BSP_SCHEDULE_DELAY: '100',
  };
  const api = await fleet.api(tracing);
  const auth = bearer(await apiKeyFor({ db: fleet.database }, 'user-1'));
  const demo = await fleet.demo();
  const serversFile = writeServersFile({ demo: demoServerEntry(demo.url, 'traced') });
  const first = await fleet.poller(serversFile, { env: tracing });
  const db = fleet.db;
  await waitUntil(async () => {
    const res = await request(api.url).get('/v1/toolsets').set('Authorization', auth);
    return (res.body.items as { name: string }[] | undefined)?.some((t) => t.name === 'traced')
      ? true
      : undefined;
  }, 'the toolset in the catalog');

  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const submitted = await request(api.url)
    .post('/v1/threads/thread-1/tasks')
    .set('Authorization', auth)
    .set('traceparent', `00-${traceId}-00f067aa0ba902b7-01`)
    // Long enough to outlive the first poller, which stops right after the submit; the second
    // one polls it, running or ended.
    .send({ toolset: 'traced', arguments: { duration_ms: 3_000, tag: 'traced' } })
    .expect(201);
  const taskId = submitted.body.task_id as string;

  // Submitted upstream by the first poller, which then stops gracefully (flushing its spans).
  await waitUntil(async () => {
    const rows = await db.query<{ remote: string | null }>(
      `SELECT remote_task_id AS remote FROM tasks WHERE id = $1`,
      [taskId],
    );
    return rows[0]?.remote ? true : undefined;
  }, 'the task submitted upstream');
  expect(await first.terminate(15_000)).toBe(0);
  const second = await fleet.poller(serversFile, { env: tracing });
  await waitUntil(
    async () => {
      const rows = await db.query<{ status: string }>(`SELECT status FROM tasks WHERE id = $1`, [
        taskId,
      ]);
      return rows[0]?.status === 'completed' ? true : undefined;
    },
    'the task completed by the second poller',
    30_000,
  );

  const inTrace = () => collector.spans.filter((s) => s.traceId === traceId);
  const spans = await waitUntil(
    async () => {
      const all = inTrace();
      const polled = all.some((s) => s.name === 'poller.poll' && s.pid === second.child.pid);
      return all.some((s) => s.name === 'task.submit') && polled ? all : undefined;
    },
    'the spans of the task exported',
    15_000,
  );
  const submit = spans.find((s) => s.name === 'task.submit' && s.pid === api.process.child.pid);
  expect(submit).toBeDefined();
  expect(submit!.parentSpanId).toBe('00f067aa0ba902b7');
  expect(submit!.attributes['task.outcome']).toBe('created');

  const upstreamSubmit = spans.find((s) => s.name === 'poller.submit');
  expect(upstreamSubmit?.pid).toBe(first.child.pid);
  expect(upstreamSubmit?.parentSpanId).toBe(submit!.spanId);
  expect(upstreamSubmit?.attributes).toEqual({
    'task.phase': 'submit',
    'task.toolset': 'traced',
    'task.outcome': 'ok',
  });
  const polls = spans.filter((s) => s.name === 'poller.poll' && s.pid === second.child.pid);
  expect(polls.length).toBeGreaterThan(0);
  for (const poll of polls) expect(poll.parentSpanId).toBe(submit!.spanId);

  // The upstream saw the attempts' own spans, in the HTTP header and in _meta alike.
  const stats = (await demo.stats()) as unknown as {
    traceparents: { method: string; header?: string; meta?: string }[];
  };
  const seen = stats.traceparents.filter((t) => t.header?.split('-')[1] === traceId);
  expect(seen.length).toBeGreaterThan(1);
  // Each one names an attempt span of this trace (the last may still be on its way here).
  const attempts = await waitUntil(
    () => {
      const ids = new Set(
        inTrace()
          .filter((s) => s.name.startsWith('poller.') && s.parentSpanId === submit!.spanId)
          .map((s) => s.spanId),
      );
      return seen.every((t) => ids.has(t.header!.split('-')[2])) ? ids : undefined;
    },
    'the attempt spans the upstream saw',
    10_000,
  );
  for (const t of seen) {
    // The session's initialize (sent by the SDK inside the first attempt) has the header only.
    if (t.meta !== undefined) expect(t.meta).toBe(t.header);
    expect(attempts.has(t.header!.split('-')[2])).toBe(true);
  }
  expect(seen.filter((t) => t.method === 'tools/call' && t.meta === t.header).length).toBe(
    seen.filter((t) => t.method === 'tools/call').length,
  );
  const seenSpans = new Set(seen.map((t) => t.header!.split('-')[2]));
  expect(seenSpans.has(upstreamSubmit!.spanId)).toBe(true);
  // A poll of the second poller that the upstream saw, looked for among all the spans exported by
  // now, not in the snapshot taken above: in one CI run on a slow host that snapshot held only
  // poll spans the upstream had not seen (an attempt may end before it sends). The wait for the
  // attempt spans above has them all by now; the wait here only names what is missing.
  await waitUntil(
    () =>
      inTrace().some(
        (s) => s.name === 'poller.poll' && s.pid === second.child.pid && seenSpans.has(s.spanId),
      )
        ? true
        : undefined,
    "a poll of the second poller's that the upstream saw",
    10_000,
  );

  // Nothing in the trace names a remote handle.
  const remote = (await db.query<{ r: string }>(`SELECT remote_task_id AS r FROM tasks`))[0].r;
  expect(JSON.stringify(spans)).not.toContain(remote);
});

it('an API stopped by SIGTERM exports the spans it still buffers', async () => {
  const stopped = await fleet.api({
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_BSP_SCHEDULE_DELAY: '600000',
  });
  const auth = bearer(await apiKeyFor({ db: fleet.database }, 'user-1'));
  await publishCatalog({ db: fleet.database }, [catalogEntry({ name: 'flushed' })]);
  const traceId = '0af7651916cd43dd8448eb211c80319c';
  await request(stopped.url)
    .post('/v1/threads/thread-1/tasks')
    .set('Authorization', auth)
    .set('traceparent', `00-${traceId}-b7ad6b7169203331-01`)
    .send({ toolset: 'flushed', arguments: { title: 'x' } })
    .expect(201);
  expect(collector.spans.filter((s) => s.traceId === traceId)).toEqual([]);
  await stopped.process.kill('SIGTERM');
  const names = collector.spans.filter((s) => s.traceId === traceId).map((s) => s.name);
  expect(names).toEqual(['task.submit']);
});
