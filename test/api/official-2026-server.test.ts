// Guards against an upstream built on the official SDK v2 being shown unavailable, or misread:
// in its strictest serving mode it speaks 2026-07-28 only (initialize refused), has no tasks
// extension, and answers every request with an SSE stream that carries keep-alive comments and
// notifications before the response; on its defaults it serves both eras without sessions
// (test/upstream/official-2026-server.mjs), over HTTP and over stdio. Every other 2026
// fixture here was written to fit the gateway; this one was not (docs/connections.md, "A server
// of the official SDK").
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { useFleet } from '../helpers/fleet';
import { startScriptServer, writeServersFile } from '../helpers/processes';
import { waitForStatus, waitUntil } from '../helpers/wait';
import { ApiProcess, apiKeyFor, bearer } from '../helpers/api';

const SERVER_SCRIPT = join(__dirname, '..', 'upstream', 'official-2026-server.mjs');
/** Where the stdio servers list the calls they aborted. */
const ABORTED_DIR = mkdtempSync(join(tmpdir(), 'mtg-official-'));
const ABORTED_FILE = join(ABORTED_DIR, 'aborted');
afterAll(() => rmSync(ABORTED_DIR, { recursive: true, force: true }));

interface TaskBody {
  task_id: string;
  status: string;
  result: { content?: Array<{ type: string; text?: string }>; isError?: boolean } | null;
  progress: { current?: number; total?: number; message?: string } | null;
  error: { code: string; message: string } | null;
  input_required: { requests: Record<string, { method: string; params: Record<string, unknown> }> };
}

const fleet = useFleet();
let api: ApiProcess;
let alice: string;
/** Each server entry's base URL, for its /aborted list. */
const serverUrl: Record<string, string> = {};

beforeAll(async () => {
  const [strict, defaults, started] = await Promise.all([
    startScriptServer(SERVER_SCRIPT),
    startScriptServer(SERVER_SCRIPT, ['--defaults']),
    fleet.api(),
  ]);
  api = started;
  serverUrl.pinned = serverUrl.strict = strict.url;
  alice = await apiKeyFor({ db: fleet.database }, 'alice');
  const entry = (url: string, toolsets: Array<[string, string, string]>, pin?: string) => ({
    url: `${url}/mcp`,
    ...(pin ? { protocolVersion: pin } : {}),
    // A child's spawn and handshake, or a server's answer, can take seconds on a loaded host;
    // a connect that times out is retried and then parked, and a parked server would not come
    // back within the wait below.
    connectTimeoutMs: 10_000,
    callTimeoutMs: 1900,
    // A held call's own deadline is long, so that only a cancel ends one early.
    taskToolsets: toolsets.map(([name, contract, tool]) =>
      contract === 'sync-call'
        ? { name, contract, tool, callTimeoutMs: 60_000 }
        : { name, contract, tool },
    ),
  });
  const stdioEntry = (toolsets: Array<[string, string, string]>, args: string[], pin?: string) => {
    const { url: _, ...rest } = entry('', toolsets, pin);
    const env = { ABORTED_FILE };
    return { ...rest, command: process.execPath, args: [SERVER_SCRIPT, ...args], env };
  };
  const tasks = (prefix: string): Array<[string, string, string]> => [
    [`${prefix}-echo`, 'mcp-tasks', 'slow_echo'],
    [`${prefix}-confirm`, 'mcp-tasks', 'confirm_echo'],
  ];
  // The longest chain (an unpinned submit over HTTP: two connects, discovery and the call) fits
  // the lease (docs/leases.md, "Attempt deadlines").
  await fleet.poller(
    writeServersFile({
      found: entry(strict.url, tasks('found')),
      pinned: entry(strict.url, tasks('pinned'), '2026-07-28'),
      defaults: entry(defaults.url, tasks('defaults')),
      // A server binds a tool to one toolset: the held calls go through entries of their own.
      held: entry(defaults.url, [['defaults-held', 'sync-call', 'slow_echo']]),
      // Unpinned, its refused session and server/discover find it needs none (and pinned, it
      // needs none from the start): a held call is a stateless tools/call.
      'strict-held': entry(strict.url, [['strict-held', 'sync-call', 'slow_echo']]),
      'pinned-held': entry(strict.url, [['pinned-held', 'sync-call', 'slow_echo']], '2026-07-28'),
      'pinned-ask': entry(strict.url, [['pinned-ask', 'sync-call', 'confirm_echo']], '2026-07-28'),
      // The same library's server over stdio, a child of the poller. Strict (initialize
      // refused), it serves pinned to 2026-07-28, and unpinned once its refused session and
      // server/discover find it needs none; on its defaults, unpinned, on a session.
      stdio: stdioEntry(tasks('stdio'), ['--stdio'], '2026-07-28'),
      'stdio-found': stdioEntry(tasks('stdio-found'), ['--stdio']),
      'stdio-held': stdioEntry(
        [['stdio-held', 'sync-call', 'slow_echo']],
        ['--stdio'],
        '2026-07-28',
      ),
      'stdio-unpinned': stdioEntry(
        [['stdio-unpinned-held', 'sync-call', 'slow_echo']],
        ['--stdio'],
      ),
      'stdio-defaults': stdioEntry(
        [['stdio-defaults-held', 'sync-call', 'slow_echo']],
        ['--stdio', '--defaults'],
      ),
    }),
    { env: { LEASE_MS: '30000' } },
  );
  // A server shown unavailable fails here: found by server/discover or pinned, it serves.
  const names = await waitUntil(
    async () => {
      const res = await request(api.url).get('/v1/toolsets').set('Authorization', bearer(alice));
      const items = (res.body as { items: Array<{ name: string; available: boolean }> }).items;
      const available = items.filter((t) => t.available).map((t) => t.name);
      return available.length === 17 ? available.sort() : undefined;
    },
    'the official servers toolsets to be available',
    // Five stdio children start first, and the two unpinned strict servers start another each
    // once refused: room for a slow host.
    60_000,
    200,
  );
  expect(names).toEqual([
    'defaults-confirm',
    'defaults-echo',
    'defaults-held',
    'found-confirm',
    'found-echo',
    'pinned-ask',
    'pinned-confirm',
    'pinned-echo',
    'pinned-held',
    'stdio-confirm',
    'stdio-defaults-held',
    'stdio-echo',
    'stdio-found-confirm',
    'stdio-found-echo',
    'stdio-held',
    'stdio-unpinned-held',
    'strict-held',
  ]);
});

async function submit(toolset: string, args: Record<string, unknown>): Promise<string> {
  const res = await request(api.url)
    .post('/v1/threads/th-official/tasks')
    .set('Authorization', bearer(alice))
    .send({ toolset, arguments: args });
  expect(res.status).toBe(201);
  return (res.body as TaskBody).task_id;
}

async function read(id: string): Promise<TaskBody> {
  const res = await request(api.url)
    .get(`/v1/threads/th-official/tasks/${id}`)
    .set('Authorization', bearer(alice));
  expect(res.status).toBe(200);
  return res.body as TaskBody;
}

const untilStatus = (id: string, statuses: string | string[]) =>
  waitForStatus(() => read(id), statuses, { timeoutMs: 20_000, intervalMs: 100 });

const ENDED = ['completed', 'failed', 'cancelled'];

/** Submits a held call of a minute, waits until it reports progress, cancels it; its end. */
async function cancelRunningHeldCall(toolset: string, text: string): Promise<TaskBody> {
  const id = await submit(toolset, { text, ms: 60_000 });
  // The progress notification shows the call is running on the server.
  await waitUntil(
    async () => ((await read(id)).progress ? true : undefined),
    'the held call to report progress',
    20_000,
    100,
  );
  const res = await request(api.url)
    .post(`/v1/threads/th-official/tasks/${id}/cancel`)
    .set('Authorization', bearer(alice));
  expect(res.status).toBe(202);
  return untilStatus(id, ENDED);
}

/** The texts of the calls the stdio servers aborted (ABORTED_FILE). */
function readAborted(): string[] {
  return existsSync(ABORTED_FILE) ? readFileSync(ABORTED_FILE, 'utf8').split('\n') : [];
}

const SERVERS = ['found', 'pinned', 'defaults', 'stdio', 'stdio-found'];

it.each(SERVERS)(
  '%s: a call whose stream has a notification before the result completes with it',
  async (prefix) => {
    // A log notification first, then 300 ms (on the strict server: six keep-alive comments).
    const id = await submit(`${prefix}-echo`, { text: 'über 🌍', ms: 300 });
    const task = await untilStatus(id, ENDED);
    expect(task.error).toBeNull();
    expect(task.status).toBe('completed');
    expect(task.result?.content).toEqual([{ type: 'text', text: 'echo: über 🌍' }]);
  },
);

it.each(SERVERS)(
  "%s: the server's question reaches the consumer, and the answer reaches the server",
  async (prefix) => {
    const id = await submit(`${prefix}-confirm`, { text: 'ship it' });
    const waiting = await untilStatus(id, ['input_required', ...ENDED]);
    expect(waiting.error).toBeNull();
    expect(Object.keys(waiting.input_required.requests)).toEqual(['confirm']);
    const question = waiting.input_required.requests.confirm;
    expect(question.method).toBe('elicitation/create');
    expect(question.params.message).toBe('Echo "ship it"?');
    const res = await request(api.url)
      .post(`/v1/threads/th-official/tasks/${id}/input`)
      .set('Authorization', bearer(alice))
      .send({ responses: { confirm: { action: 'accept', content: { confirm: true } } } });
    expect(res.status).toBe(202);
    const task = await untilStatus(id, ENDED);
    expect(task.status).toBe('completed');
    expect(task.result?.content).toEqual([{ type: 'text', text: 'confirmed: ship it' }]);
  },
);

it.each(['defaults', 'pinned', 'strict', 'stdio', 'stdio-unpinned', 'stdio-defaults'])(
  '%s: a sync-call toolset holds the call to its result, with its progress',
  async (prefix) => {
    const id = await submit(`${prefix}-held`, { text: 'held', ms: 300 });
    const task = await untilStatus(id, ENDED);
    expect(task.error).toBeNull();
    expect(task.status).toBe('completed');
    expect(task.result?.content).toEqual([{ type: 'text', text: 'echo: held' }]);
    // On a session (defaults, stdio-defaults), on the call's own SSE stream (pinned, strict) or
    // on the child's stdout (stdio, stdio-unpinned), progress arrives alike.
    expect(task.progress).toEqual({ current: 1, total: 2, message: 'half way' });
  },
);

it.each(['pinned', 'strict'])(
  '%s: a cancelled held call ends its request, and the server aborts the call',
  async (prefix) => {
    // Without a session there is no notifications/cancelled: leaving the request is the cancel
    // (docs/connections.md, "Which side serves").
    const text = `cancel me (${prefix})`;
    expect((await cancelRunningHeldCall(`${prefix}-held`, text)).status).toBe('cancelled');
    const aborted = await waitUntil(
      async () => {
        const list = (await (await fetch(`${serverUrl[prefix]}/aborted`)).json()) as string[];
        return list.includes(text) ? list : undefined;
      },
      'the server to see its client leave',
      10_000,
      100,
    );
    expect(aborted).toContain(text);
  },
);

it('stdio: a cancelled held call is cancelled on the child, which serves the next call', async () => {
  // notifications/cancelled on the child's stdin aborts the call (the SDK's request signal).
  const text = 'cancel me (stdio)';
  expect((await cancelRunningHeldCall('stdio-held', text)).status).toBe('cancelled');
  await waitUntil(
    () => (readAborted().includes(text) ? true : undefined),
    'the server to abort the call',
    10_000,
    100,
  );
  const next = await untilStatus(await submit('stdio-held', { text: 'after', ms: 0 }), ENDED);
  expect(next.result?.content).toEqual([{ type: 'text', text: 'echo: after' }]);
});

it('pinned: a held call whose tool asks a question ends failed as a broken contract', async () => {
  // A held call has nowhere to put a question (docs/connections.md, "Which side serves").
  const id = await submit('pinned-ask', { text: 'ship it' });
  const task = await untilStatus(id, ENDED);
  expect(task.status).toBe('failed');
  expect(task.error?.code).toBe('protocol_error');
});

it('arguments its schema refuses get a 422 naming the field; no task is made', async () => {
  const count = async () => {
    const listed = await request(api.url)
      .get('/v1/threads/th-official/tasks')
      .set('Authorization', bearer(alice));
    return (listed.body as { items: TaskBody[] }).items.length;
  };
  const before = await count();
  const res = await request(api.url)
    .post('/v1/threads/th-official/tasks')
    .set('Authorization', bearer(alice))
    .send({ toolset: 'found-echo', arguments: { text: 'x', ms: -1 } });
  expect(res.status).toBe(422);
  // The server's own schema (zod, as its SDK publishes it) is what the API checked against.
  expect((res.body as { errors: Array<{ path: string }> }).errors).toEqual([
    expect.objectContaining({ path: '/arguments/ms' }),
  ]);
  expect(await count()).toBe(before);
});

it("a tool that throws ends the task failed with the server's message", async () => {
  const id = await submit('found-echo', { text: 'fail', ms: 0 });
  const task = await untilStatus(id, ENDED);
  expect(task.status).toBe('failed');
  expect(task.error?.code).toBe('upstream_failed');
  expect(task.error?.message).toContain('asked to fail');
  expect(task.result?.isError).toBe(true);
});
