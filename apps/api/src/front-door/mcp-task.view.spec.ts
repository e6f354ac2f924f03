// Guards against the MCP front door showing a failed task's stored operator text (servers, remote IDs, paths) instead of the consumer's sentence.
import { TaskErrorCode, TaskStatus } from '@app/common';
import type { TaskRow } from '@app/persistence';
import { ERROR_TEMPLATES } from '@app/views';
import { statusMessage, toolResult } from './mcp-task.view';

it('shows the fixed sentence of the error code, not the stored text', () => {
  const row = {
    status: TaskStatus.Failed,
    server: 'srv-hidden-9',
    remoteTaskId: 'job_77aa88bb99cc',
    errorCode: TaskErrorCode.UpstreamTaskLost,
    errorMessage:
      'upstream no longer knows task job_77aa88bb99cc on server "srv-hidden-9" at /opt/x',
    result: null,
    progress: null,
  } as unknown as TaskRow;
  const shown = [statusMessage(row), JSON.stringify(toolResult(row))].join('\n');
  expect(statusMessage(row)).toBe(
    `upstream_task_lost: ${ERROR_TEMPLATES[TaskErrorCode.UpstreamTaskLost]}`,
  );
  expect(shown).not.toMatch(/job_77|srv-hidden|\/opt\/x/);
});
