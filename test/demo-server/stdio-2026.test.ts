// Guards the demo server's strict 2026-07-28 side over stdio (`--transport stdio --strict-2026`)
// against drifting from docs/demo-server.md, "Strict and 2025-only modes": the body the only
// signal, initialize refused, a cancelled request aborted and left unanswered, and a
// subscription's messages told apart by its ID and ended by a cancel.
import { useProcesses } from '../helpers/process-scope';
import { waitUntil } from '../helpers/wait';

const processes = useProcesses({ perTest: true });

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'stdio-test', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {
    extensions: { 'io.modelcontextprotocol/tasks': {} },
  },
};

type Message = Record<string, unknown> & { id?: unknown; method?: string };

function startStrict() {
  const demo = processes.node('apps/demo-server/main.js', [
    '--transport',
    'stdio',
    '--strict-2026',
  ]);
  const send = (message: object) => demo.child.stdin!.write(`${JSON.stringify(message)}\n`);
  const messages = () => demo.lines.map((line) => JSON.parse(line) as Message);
  const answerTo = (id: number) =>
    waitUntil(() => messages().find((m) => m.id === id), `the answer to request ${id}`);
  return { send, messages, answerTo };
}

it('refuses initialize, which carries no envelope, and serves server/discover', async () => {
  const { send, answerTo } = startStrict();
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25' } });
  expect(await answerTo(1)).toMatchObject({ error: { code: -32602 } });
  send({ jsonrpc: '2.0', id: 2, method: 'server/discover', params: { _meta: META } });
  expect(await answerTo(2)).toMatchObject({
    result: {
      supportedVersions: ['2026-07-28'],
      capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    },
  });
});

it('streams a call progress as lines, and a cancelled call gets no answer', async () => {
  const { send, messages, answerTo } = startStrict();
  const call = (id: number, ms: number) =>
    send({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        name: 'demo_slow',
        arguments: { duration_ms: ms },
        _meta: { ...META, progressToken: id },
      },
    });
  call(1, 1000);
  await waitUntil(
    () => messages().find((m) => m.method === 'notifications/progress'),
    'the call to report progress',
  );
  send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } });
  // Not cancelled, call 1 (1 s) would answer before call 2 (1.5 s, sent after it).
  call(2, 1500);
  expect(await answerTo(2)).toMatchObject({ result: { resultType: 'complete' } });
  expect(messages().filter((m) => m.id === 1)).toEqual([]);
});

it('pushes a task change on a listen, as lines stamped with its ID, until it is cancelled', async () => {
  const { send, messages, answerTo } = startStrict();
  const task = async (id: number, ms: number): Promise<string> => {
    send({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'demo_task', arguments: { duration_ms: ms }, _meta: META },
    });
    const created = (await answerTo(id)) as { result: { resultType: string; taskId: string } };
    expect(created.result.resultType).toBe('task');
    return created.result.taskId;
  };
  const listen = (id: number, taskIds: string[]) =>
    send({
      jsonrpc: '2.0',
      id,
      method: 'subscriptions/listen',
      params: { notifications: { taskIds }, _meta: META },
    });
  const on = (subscription: number, method: string) =>
    messages().filter(
      (m) =>
        m.method === method &&
        (m.params as { _meta?: Record<string, unknown> })._meta?.[
          'io.modelcontextprotocol/subscriptionId'
        ] === subscription,
    );
  const quick = await task(1, 300);
  const slow = await task(2, 2500);
  listen(3, [quick, slow, 'unknown']);
  expect(
    await waitUntil(() => on(3, 'notifications/subscriptions/acknowledged')[0], 'the ack'),
  ).toMatchObject({ params: { notifications: { taskIds: [quick, slow] } } });
  // The quick task ends 300 ms in: pushed, with the whole task.
  expect(await waitUntil(() => on(3, 'notifications/tasks')[0], 'the end pushed')).toMatchObject({
    params: { taskId: quick, status: 'completed' },
  });
  // Cancelled, the listen gets no answer and pushes no more. A second listen on the slow task
  // sees its end; the first, written to first were it still open, does not.
  send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } });
  listen(4, [slow]);
  await waitUntil(() => on(4, 'notifications/tasks')[0], "the slow task's end pushed");
  expect(on(3, 'notifications/tasks')).toHaveLength(1);
  expect(messages().filter((m) => m.id === 3)).toEqual([]);
});
