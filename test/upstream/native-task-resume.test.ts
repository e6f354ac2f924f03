// Guards against native tasks tied to one process: another process must poll them on the stored session.
import { compileMcpLib, fixture } from './compiled-lib.helper';
import { useProcesses } from '../helpers/process-scope';
import { startDemoServer } from '../helpers/processes';
import { closePools, demoHttp, openPool } from './mcp-test.helper';
import { serverConfig } from '../helpers/server-config';

afterEach(closePools);
// What a test starts stops after it (docs/testing.md, "Processes go through a fixture").
const processes = useProcesses({ perTest: true });

interface CreatedTask {
  task: { taskId: string; status: string };
}

describe('native task session binding', () => {
  it('lets a second process poll a task created here through its stored session ID', async () => {
    const demo = await startDemoServer();
    const { pool } = openPool([demoHttp('demo', demo.url)]);
    const pooled = await pool.session('demo');
    const taskSession = await pool.taskSession('demo');
    // Kept apart from the pooled session (contracts.md, mcp-tasks).
    expect(taskSession.sessionId).toBeDefined();
    expect(taskSession.sessionId).not.toBe(pooled.sessionId);
    expect(taskSession.protocolVersion).toBeDefined();

    const created = (await taskSession.request(
      'tools/call',
      {
        name: 'demo_task_required',
        arguments: { duration_ms: 400, result: { ok: 1 } },
        task: { ttl: 60_000 },
      },
      { idempotent: false },
    )) as CreatedTask;
    expect(created.task.status).toBe('working');

    const run = await processes.run(process.execPath, [fixture('resume-poller')], {
      env: {
        ...process.env,
        MCP_LIB: compileMcpLib(),
        SERVER_CONFIG: JSON.stringify(
          serverConfig({
            name: 'demo',
            transport: 'http',
            url: `${demo.url}/mcp`,
            connectTimeoutMs: 10_000,
            callTimeoutMs: 10_000,
            maxConcurrentCalls: 1,
            connectAttempts: 1,
          }),
        ),
        SESSION_ID: taskSession.sessionId!,
        PROTOCOL_VERSION: taskSession.protocolVersion!,
        TASK_ID: created.task.taskId,
      },
      timeoutMs: 30_000,
    });
    if (run.code !== 0) {
      throw new Error(`resume-poller ended ${run.code ?? run.signal}: ${run.stderr}`);
    }
    const seen = JSON.parse(run.stdout.trim()) as {
      sessionId: string;
      statuses: string[];
      result: { structuredContent?: unknown; content: unknown[] };
    };
    expect(seen.sessionId).toBe(taskSession.sessionId);
    expect(seen.statuses.at(-1)).toBe('completed');
    expect(JSON.stringify(seen.result)).toContain('"ok":1');

    // The second process closed its transport without DELETE: the session still works here.
    const again = await taskSession.request(
      'tasks/get',
      { taskId: created.task.taskId },
      { idempotent: true },
    );
    expect(again).toMatchObject({ status: 'completed' });
  });
});
