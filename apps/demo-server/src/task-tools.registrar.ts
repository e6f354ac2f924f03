import { randomBytes } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { jobArgsShape, pollIntervalArg } from './job-args.schema';
import type { JobRegistry } from './job.registry';
import type { TaskPush2025 } from './push/task-push-2025';

/** When the client asks for no ttl, keep the task an hour rather than forever. */
const DEFAULT_TASK_TTL_MS = 3_600_000;

const taskArgsShape = { ...jobArgsShape, poll_interval_ms: pollIntervalArg };

/**
 * The `mcp-tasks` contract: two tools that run as native MCP tasks (revision 2025-11-25). The
 * SDK answers tasks/get, tasks/result and tasks/cancel from DemoTaskStore; these handlers only
 * create the job and its task.
 */
export function registerTaskTools(
  server: McpServer,
  registry: JobRegistry,
  push?: TaskPush2025,
): void {
  const describe = (extra: string): string =>
    'Runs a demo job as a native MCP task: poll it with tasks/get, fetch its result with ' +
    'tasks/result, stop it with tasks/cancel. The task is bound to the session that created it. ' +
    extra;
  const tools = [
    ['demo_task_required', 'required', describe('Must be called with params.task.')],
    [
      'demo_task_optional',
      'optional',
      describe('Without params.task the call waits for the job and returns its result directly.'),
    ],
  ] as const;

  for (const [name, taskSupport, description] of tools) {
    server.experimental.tasks.registerToolTask(
      name,
      { description, inputSchema: taskArgsShape, execution: { taskSupport } },
      {
        createTask: async (args, extra) => {
          registry.count('tasks', 'creates');
          registry.countTag(args.tag, 'submits');
          const job = registry.create('tasks', args, `task_${randomBytes(12).toString('hex')}`);
          const task = await extra.taskStore.createTask({
            ttl: extra.taskRequestedTtl ?? DEFAULT_TASK_TTL_MS,
            pollInterval: args.poll_interval_ms,
            context: { jobId: job.id },
          });
          const store = extra.taskStore;
          push?.watch(
            job,
            () => store.getTask(job.id),
            (status) =>
              server.server.notification({ method: 'notifications/tasks/status', params: status }),
          );
          return { task };
        },
        getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
        // DemoTaskStore only ever returns CallToolResults; the store interface says Result.
        getTaskResult: async (_args, extra) =>
          (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
      },
    );
  }
}
