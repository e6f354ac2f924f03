// Guards against operator text (servers, remote IDs, workers, URLs, paths) reaching a consumer through a task's error or last_error.
import { TaskErrorCode, TaskStatus } from '@app/common';
import type { TaskRow } from '@app/persistence';
import {
  ERROR_TEMPLATES,
  TransientClass,
  consumerError,
  consumerLastError,
  transientClass,
} from './error-text.projection';

function row(overrides: Partial<TaskRow>): TaskRow {
  return {
    status: TaskStatus.Failed,
    toolset: 'reports',
    server: 'srv-internal-7',
    remoteTaskId: 'job_9f8e7d6c5b4a',
    remoteSessionId: null,
    pinnedWorkerId: null,
    leaseOwner: null,
    errorCode: null,
    errorMessage: null,
    lastError: null,
    cancelRequestedAt: null,
    ...overrides,
  } as TaskRow;
}

it('shows the fixed sentence of each code, whatever was stored', () => {
  for (const code of Object.values(TaskErrorCode)) {
    const stored = `server "srv-internal-7" answered error -32602: task job_9f8e7d6c5b4a at /opt/srv/run.py on 10.0.0.7:8080 via worker-host-1a2b3c4d5e6f`;
    const shown = consumerError(row({ errorCode: code, errorMessage: stored }))!;
    expect(shown.code).toBe(code);
    expect(shown.message.startsWith(ERROR_TEMPLATES[code].slice(0, -1))).toBe(true);
    expect(shown.message).not.toMatch(/srv-internal|job_9f|\/opt|10\.0\.0\.7|worker-host|32602/);
  }
});

it('keeps the upstream words of submit_rejected and upstream_failed, scrubbed', () => {
  const shown = consumerError(
    row({
      errorCode: TaskErrorCode.SubmitRejected,
      errorMessage: 'quota exceeded for srv-internal-7, see https://status.example/x',
    }),
  )!;
  expect(shown.message).toBe(
    'The upstream server refused the task: quota exceeded for [redacted], see [redacted]',
  );
});

it('names the silence of a tracking timeout from the stored wording', () => {
  const shown = consumerError(
    row({
      errorCode: TaskErrorCode.TrackingTimeout,
      errorMessage: 'no successful poll for 86 s (TRACKING_TIMEOUT_MS); last error: server "x" …',
    }),
  )!;
  expect(shown.message).toContain('for 86 s');
  expect(shown.message).not.toContain('"x"');
});

it('classifies transient errors and says what the gateway was doing', () => {
  expect(transientClass('server "demo" did not answer within 1900 ms')).toBe(
    TransientClass.Timeout,
  );
  expect(transientClass('submit not sent: server "demo" is connecting: ECONNREFUSED')).toBe(
    TransientClass.Unreachable,
  );
  expect(transientClass('toolset "a" is not in this worker\'s mcpServers config')).toBe(
    TransientClass.NotConfigured,
  );
  expect(transientClass('no such job job_123456789abc')).toBe(TransientClass.UpstreamError);
  expect(
    transientClass(
      'server "demo": the answer stream broke: the server sent a message longer than 65536 bytes (maxMessageBytes); it was refused',
    ),
  ).toBe(TransientClass.TooLarge);
  expect(transientClass('gateway database: timeout exceeded when trying to connect')).toBe(
    TransientClass.Database,
  );
  expect(
    consumerLastError(
      row({ status: TaskStatus.Working, lastError: 'gateway database: invalid input syntax' }),
      false,
    ),
  ).toBe(
    "The gateway could not store the task's state while the gateway was checking the task's status; the gateway retries with backoff.",
  );
  const working = consumerLastError(
    row({ status: TaskStatus.Working, lastError: 'job_123456789abc exploded in /srv/x' }),
    false,
  );
  expect(working).toBe(
    "The upstream server answered with an error while the gateway was checking the task's status; the gateway retries with backoff.",
  );
  expect(consumerLastError(row({ status: TaskStatus.Queued, lastError: null }), true)).toBe(
    'Toolset reports is unavailable right now; the task waits until it is available.',
  );
});

it('names the deadline of deadline_exceeded from the fixed stored wording, nothing else', () => {
  const shown = consumerError(
    row({
      errorCode: TaskErrorCode.DeadlineExceeded,
      errorMessage:
        'deadline exceeded: no end within 30 s of submit; the upstream work was cancelled',
    }),
  )!;
  expect(shown.message).toBe(
    "The task did not end within its toolset's deadline (30 s after submit), so the gateway cancelled it.",
  );
});
