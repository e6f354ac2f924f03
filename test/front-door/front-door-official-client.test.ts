// Guards against the front door working only with clients written here: the official task client
// (@modelcontextprotocol/ext-tasks over the SDK v2 Client) creates a task and hands it off, the API
// replica that created it is killed, and it resumes from another replica and answers the task's
// question, in both eras; it cancels another; the SDK v2 Client discovers, lists tools and
// listens. The clients run on their libraries' defaults (official-client.mjs says where not). And
// against the README's MCP client snippets drifting from the code these tests run.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiProcess } from '../helpers/api';
import { useProcesses } from '../helpers/process-scope';
import { waitForStatus } from '../helpers/wait';
import { useFrontDoor } from './front-door-harness';

const SCRIPT = join(__dirname, 'official-client.mjs');
const README = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
/** The README's section on MCP clients, up to the next heading. */
const CLIENT_SECTION = README.split('### Use it from an MCP client')[1].split('\n#')[0];
const ERAS = ['2025-11-25', '2026-07-28'] as const;

const fd = useFrontDoor({
  server: { protocolVersion: '2026-07-28' },
  toolsets: [
    { name: 'ask', contract: 'mcp-tasks', tool: 'demo_ask_one' },
    { name: 'work', contract: 'mcp-tasks', tool: 'demo_task' },
  ],
});
/** The steps' Node processes, stopped with the file if one outlives its test. */
const processes = useProcesses();

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the step's JSON output
type Json = any;

/** Runs one step of official-client.mjs in its own Node process and parses what it prints. */
async function step(name: string, input: Record<string, unknown>): Promise<Json> {
  const run = await processes.run(process.execPath, [SCRIPT, name, JSON.stringify(input)], {
    timeoutMs: 60_000,
  });
  if (run.code !== 0)
    throw new Error(`${name} failed: ${run.stderr || `exited ${run.code ?? run.signal}`}`);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!);
}

const mcp = (api: { url: string }) => `${api.url}/mcp`;

/** The task as `GET /v1` shows it to its owner (MCP tasks land in the default thread, `mcp`). */
async function v1Task(taskId: string): Promise<Json> {
  const res = await fetch(`${fd.api.url}/v1/threads/mcp/tasks/${taskId}`, {
    headers: { authorization: `Bearer ${fd.keys.alice}` },
  });
  return res.json();
}

const CONFIRM = { confirm: { action: 'accept', content: { confirm: true } } };

describe.each(ERAS)('the official task client on %s', (era) => {
  let doomed: ApiProcess;

  // Killed by the test; the front door stops it after the file if the test did not get there.
  beforeAll(async () => {
    doomed = await fd.addApi();
  });

  it('creates a task with handoff, loses its replica, resumes on another and answers its question', async () => {
    const created = await step('create', {
      url: mcp(doomed),
      key: fd.keys.alice,
      era,
      tool: 'ask',
      arguments: { ask_after_ms: 300, resume_ms: 200 },
    });
    const reference = JSON.parse(created.reference);
    expect(reference).toMatchObject({
      generation: era === '2025-11-25' ? 'v1' : 'v2',
      originalOperation: 'tools/call',
    });
    await doomed.process.kill('SIGKILL');

    const resuming = step('resume', {
      url: mcp(fd.api),
      key: fd.keys.alice,
      era,
      reference: created.reference,
      ...(era === '2026-07-28' && { answer: CONFIRM }),
    });
    if (era === '2025-11-25') {
      // The package's 2025-11-25 driver polls tasks/get and never calls tasks/result before the
      // task ends, so it is never sent the question (docs/mcp.md, "The official clients"): the
      // answer goes in through /v1 while the resumed execution waits.
      await waitForStatus(() => v1Task(reference.taskId), 'input_required', {
        timeoutMs: 30_000,
      });
      const res = await fetch(`${fd.api.url}/v1/threads/mcp/tasks/${reference.taskId}/input`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${fd.keys.alice}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ responses: CONFIRM }),
      });
      expect(res.status).toBe(202);
    }
    const resumed = await resuming;
    expect(resumed.status).toBe('completed');
    expect(resumed.result.structuredContent.answers).toEqual(CONFIRM);
    if (era === '2026-07-28') expect(resumed.questions).toEqual(['confirm']);
    else expect(resumed.updateRefused).toBe('TaskInputUpdateUnsupportedError');
  });

  it('cancels a task it created; the task ends cancelled', async () => {
    const cancelled = await step('cancel', {
      url: mcp(fd.api),
      key: fd.keys.alice,
      era,
      tool: 'work',
      arguments: { duration_ms: 60_000 },
    });
    expect(cancelled.status).toBe('cancelled');
    await waitForStatus(() => v1Task(cancelled.taskId), 'cancelled', { timeoutMs: 30_000 });
  });
});

it('the SDK v2 Client discovers, lists the tools and listens to a task until it ends', async () => {
  const created = await step('create', {
    url: mcp(fd.api),
    key: fd.keys.alice,
    era: '2026-07-28',
    tool: 'work',
    arguments: { duration_ms: 1500 },
  });
  const { taskId } = JSON.parse(created.reference);
  const heard = await step('listen', { url: mcp(fd.api), key: fd.keys.alice, taskIds: [taskId] });
  expect(heard.era).toBe('modern');
  expect(heard.discover).toMatchObject({
    supportedVersions: ['2026-07-28'],
    capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  });
  expect(heard.tools.map((t: Json) => t.name).sort()).toEqual(['ask', 'work']);
  expect(heard.notifications.at(-1)).toEqual({ taskId, status: 'completed' });
  expect(heard.ended).toBe('graceful');
});

describe("the README's MCP client snippets", () => {
  /** The section's fenced code blocks of one language, in order. */
  const blocks = (lang: string): string[] =>
    [...CLIENT_SECTION.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map(
      (m) => m[1],
    );

  it('the code is the client code the tests run, word for word', () => {
    const script = readFileSync(SCRIPT, 'utf8');
    const region = script.split('// README: begin\n')[1]?.split('// README: end\n')[0];
    expect(region).toBeDefined();
    expect(blocks('js')).toEqual([region]);
  });

  it('the client config reaches the tools with its URL and headers as written', async () => {
    const [config] = blocks('json');
    const gateway = JSON.parse(config).mcpServers.gateway;
    expect(gateway.type).toBe('http');
    const url = gateway.url.replace('http://127.0.0.1:3000', fd.api.url);
    expect(url).toBe(mcp(fd.api));
    const headers = JSON.parse(
      JSON.stringify(gateway.headers).replace('<the key in .data/dev-api-key>', fd.keys.alice),
    );
    const listed = await step('list', { url, headers });
    expect(listed.tools.sort()).toEqual(['ask', 'work']);
  });
});
