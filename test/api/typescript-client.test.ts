// Guards against the typed TypeScript client (clients/typescript) drifting from openapi.json or failing against a running gateway: it submits and waits, lists, streams and resumes events, answers a question and verifies a real webhook signature, and the README's example runs as written.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  answerQuestion,
  createGatewayClient,
  followEvents,
  GatewayProblem,
  listAllTasks,
  submitAndWait,
  unwrap,
  verifyWebhookSignature,
  type GatewayClient,
  type StreamedEvent,
} from '@mcp-task-gateway/client';
import { apiKeyFor } from '../helpers/api';
import { useFleet } from '../helpers/fleet';
import { demoServerEntry, type DemoServerProcess } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';
import { WebhookReceiver } from '../events/webhook-receiver';

const ROOT = join(__dirname, '..', '..');
const CLIENT = join(ROOT, 'clients', 'typescript');
const fleet = useFleet();
const receiver = new WebhookReceiver();
let demo: DemoServerProcess;
let baseUrl: string;
let token: string;
let client: GatewayClient;

beforeAll(async () => {
  await receiver.start();
  demo = await fleet.demo();
  const env = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };
  const api = await fleet.api(env);
  baseUrl = api.url;
  await fleet.poller(
    {
      classic: demoServerEntry(demo.url, 'demo-ordinary'),
      modern: {
        url: `${demo.url}/mcp`,
        connectTimeoutMs: 1000,
        callTimeoutMs: 1900,
        taskToolsets: [{ name: 'ask', contract: 'mcp-tasks', tool: 'demo_ask_one' }],
      },
    },
    { env: { ...env, LEASE_MS: '8000' } },
  );
  token = await apiKeyFor({ db: fleet.database }, 'client-user');
  client = createGatewayClient({ baseUrl, token });
  await waitUntil(
    async () => {
      const { items } = unwrap(await client.GET('/v1/toolsets'));
      return items.filter((t) => t.available).length === 2 ? true : undefined;
      // A 2026-07-28 toolset is available once the poller has read the server's tool list.
    },
    'both toolsets to be available',
    30_000,
    200,
  );
});

afterAll(() => receiver.stop());

it('its generated schema is what openapi-typescript makes of openapi.json today', () => {
  const generated = execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'openapi-typescript', 'bin', 'cli.js'), join(ROOT, 'openapi.json')],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
  );
  expect(readFileSync(join(CLIENT, 'src', 'schema.ts'), 'utf8')).toBe(generated);
});

it('submits and waits, lists with filters across pages, and reads a refusal by its type', async () => {
  const done = await submitAndWait(client, {
    threadId: 'c1',
    body: { toolset: 'demo-ordinary', arguments: { duration_ms: 300, result: { n: 1 } } },
  });
  expect(done).toMatchObject({ status: 'completed', result: { n: 1 } });
  const failed = await submitAndWait(client, {
    threadId: 'c2',
    body: { toolset: 'demo-ordinary', arguments: { duration_ms: 100, outcome: 'fail' } },
  });
  expect(failed.status).toBe('failed');
  const all: string[] = [];
  for await (const task of listAllTasks(client, { limit: 1 })) all.push(task.task_id);
  expect(all).toEqual([failed.task_id, done.task_id]);
  const onlyFailed: string[] = [];
  for await (const task of listAllTasks(client, { status: 'failed' }))
    onlyFailed.push(task.task_id);
  expect(onlyFailed).toEqual([failed.task_id]);
  // A retry, linked to the failed task; a second retry of a completed task is refused by type.
  const retried = unwrap(
    await client.POST('/v1/threads/{thread_id}/tasks/{task_id}/retry', {
      params: { path: { thread_id: 'c2', task_id: failed.task_id } },
    }),
  );
  expect(retried.retry_of).toBe(failed.task_id);
  const refused = await client.POST('/v1/threads/{thread_id}/tasks/{task_id}/retry', {
    params: { path: { thread_id: 'c1', task_id: done.task_id } },
  });
  expect(() => unwrap(refused)).toThrow(GatewayProblem);
  expect(refused.error?.type).toMatch(/\/not-retryable$/);
});

it('answers a question and sees the task go on to complete', async () => {
  const asking = await submitAndWait(client, {
    threadId: 'c3',
    body: { toolset: 'ask', arguments: {} },
  });
  expect(asking.status).toBe('input_required');
  expect(Object.keys(asking.input_required?.requests ?? {})).toEqual(['confirm']);
  const answered = await answerQuestion(client, asking, {
    confirm: { action: 'accept', content: { confirm: true } },
  });
  expect(answered.task_id).toBe(asking.task_id);
  const ended = await waitUntil(async () => {
    const task = unwrap(
      await client.GET('/v1/tasks/{task_id}', { params: { path: { task_id: asking.task_id } } }),
    );
    return task.status === 'completed' ? task : undefined;
  }, 'the answered task to complete');
  expect(ended.status).toBe('completed');
});

it('follows the events of every thread and resumes after the last one handled', async () => {
  const controller = new AbortController();
  const seen: StreamedEvent[] = [];
  const stream = followEvents({ baseUrl, token, signal: controller.signal });
  for await (const event of stream) {
    seen.push(event);
    if (seen.length === 3) break;
  }
  expect(seen.map((e) => e.event)).toEqual(
    expect.arrayContaining([expect.stringMatching(/^task\./)]),
  );
  const resumed: StreamedEvent[] = [];
  for await (const event of followEvents({ baseUrl, token, lastEventId: seen[1].id })) {
    resumed.push(event);
    if (resumed.length === 1) break;
  }
  controller.abort();
  expect(resumed[0].id).toBe(seen[2].id);
});

it('verifies the signature of a real webhook delivery, and refuses a tampered one', async () => {
  const hook = unwrap(
    await client.POST('/v1/webhooks', {
      body: { url: `${receiver.base}/client`, description: 'client test' },
    }),
  );
  receiver.route('/client', hook.secret);
  await submitAndWait(client, {
    threadId: 'c4',
    body: { toolset: 'demo-ordinary', arguments: { duration_ms: 100 } },
  });
  const delivery = await waitUntil(
    () => receiver.at('/client').find((r) => r.verified),
    'a delivery to the receiver',
  );
  const check = (overrides: Partial<Parameters<typeof verifyWebhookSignature>[0]>) =>
    verifyWebhookSignature({
      secret: hook.secret,
      headers: delivery.headers,
      body: delivery.body,
      ...overrides,
    });
  expect(check({})).toBe(true);
  expect(check({ body: delivery.body.replace('task.', 'tusk.') })).toBe(false);
  expect(check({ secret: `whsec_${Buffer.from('another secret').toString('base64')}` })).toBe(
    false,
  );
  expect(check({ nowSeconds: Math.floor(Date.now() / 1000) + 3600 })).toBe(false);
});

it("the README's example is the example file, and runs as written against the gateway", async () => {
  const example = readFileSync(join(CLIENT, 'examples', 'quickstart.ts'), 'utf8');
  expect(readFileSync(join(CLIENT, 'README.md'), 'utf8')).toContain(example.trim());
  const run = fleet.node('clients/typescript/examples/quickstart.js', [], {
    GATEWAY_URL: baseUrl,
    GATEWAY_TOKEN: token,
  });
  expect(await run.exited).toBe(0);
  expect(run.lines[0]).toMatch(/^task_[a-z2-7]{26} completed /);
  expect(run.lines.length).toBeGreaterThanOrEqual(2);
});
