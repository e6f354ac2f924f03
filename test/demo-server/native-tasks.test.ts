// Guards native MCP tasks: lifecycle through tasks/get and tasks/result, cancel, session binding.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  ErrorCode,
  GetTaskResultSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { waitForStatus } from '../helpers/wait';
import { startDemoServer } from '../helpers/processes';
import {
  call,
  callStructured,
  connectHttp,
  connectStdio,
  useDemoProcesses,
} from './demo-process.helper';

const transports: Array<[string, () => Promise<Client>]> = [
  ['stdio', async () => (await connectStdio()).client],
  ['http', async () => connectHttp((await startDemoServer()).url)],
];

useDemoProcesses();

async function createTask(
  client: Client,
  args: Record<string, unknown>,
  name = 'demo_task_required',
) {
  const created = await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: { ttl: 60_000 } } },
    CreateTaskResultSchema,
  );
  return created.task;
}

const getTask = (client: Client, taskId: string) =>
  client.request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema);

describe.each(transports)('native tasks over %s', (_name, open) => {
  it('advertises tasks for tools/call and the tools taskSupport', async () => {
    const client = await open();
    expect(client.getServerCapabilities()?.tasks?.requests?.tools?.call).toBeDefined();
    const { tools } = await client.listTools();
    const support = Object.fromEntries(
      tools.map((tool) => [tool.name, tool.execution?.taskSupport]),
    );
    expect(support).toMatchObject({
      demo_task_required: 'required',
      demo_task_optional: 'optional',
    });
    // The SDK lists plain tools as "forbidden"; absent would mean the same.
    expect(support.demo_echo ?? 'forbidden').toBe('forbidden');
    expect(support.demo_slow ?? 'forbidden').toBe('forbidden');
  });

  it('runs working → input_required → completed and returns the result', async () => {
    const client = await open();
    const task = await createTask(client, {
      duration_ms: 600,
      input_required_after_ms: 0,
      input_required_for_ms: 300,
      poll_interval_ms: 250,
      result: { ok: true },
      tag: 'native',
    });
    expect(task).toMatchObject({ status: 'input_required', pollInterval: 250, ttl: 60_000 });
    expect(task.statusMessage).toContain('needs input');
    await waitForStatus(() => getTask(client, task.taskId), 'completed');
    const result = await client.request(
      { method: 'tasks/result', params: { taskId: task.taskId } },
      CallToolResultSchema,
    );
    expect(result.structuredContent).toEqual({ ok: true });
    expect(result.isError).toBeFalsy();
    const stats = await callStructured(client, 'demo_stats', { tag: 'native' });
    expect(stats.tasks).toMatchObject({ creates: 1, results: 1 });
    expect(stats.tasks.gets).toBeGreaterThanOrEqual(1);
    expect(stats.by_tag.native).toMatchObject({ submits: 1, state: 'completed' });
  });

  it('fails with statusMessage and an isError result', async () => {
    const client = await open();
    const task = await createTask(client, {
      duration_ms: 0,
      outcome: 'fail',
      fail_message: 'it broke',
    });
    const failed = await waitForStatus(() => getTask(client, task.taskId), 'failed');
    expect(failed.statusMessage).toBe('it broke');
    const result = await client.request(
      { method: 'tasks/result', params: { taskId: task.taskId } },
      CallToolResultSchema,
    );
    expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text: 'it broke' }] });
  });

  it('cancels a running task and refuses to cancel it again with -32602', async () => {
    const client = await open();
    const task = await createTask(client, { duration_ms: 60_000, tag: 'nc' });
    const cancelled = await client.request(
      { method: 'tasks/cancel', params: { taskId: task.taskId } },
      CancelTaskResultSchema,
    );
    expect(cancelled.status).toBe('cancelled');
    await expect(
      client.request(
        { method: 'tasks/cancel', params: { taskId: task.taskId } },
        CancelTaskResultSchema,
      ),
    ).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
    expect((await getTask(client, task.taskId)).status).toBe('cancelled');
    const stats = await callStructured(client, 'demo_stats', { tag: 'nc' });
    expect(stats.by_tag.nc).toMatchObject({ cancelled: true, cancels: 2 });
    expect(stats.live_jobs).toBe(0);
  });

  it('runs demo_task_optional synchronously without params.task', async () => {
    const client = await open();
    const result = await call(client, 'demo_task_optional', {
      duration_ms: 100,
      poll_interval_ms: 20,
      result: { sync: 1 },
    });
    expect(result.structuredContent).toEqual({ sync: 1 });
  });
});

describe('native task session binding (http)', () => {
  it('answers -32602 Task not found on another session, and keeps serving the owner', async () => {
    const demo = await startDemoServer();
    const owner = await connectHttp(demo.url);
    const other = await connectHttp(demo.url);
    const task = await createTask(owner, { duration_ms: 60_000 });
    const error = await getTask(other, task.taskId).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: -32602 });
    expect((error as Error).message).toContain('Task not found');
    expect((await getTask(owner, task.taskId)).status).toBe('working');
  });
});
