import type {
  CreateTaskOptions,
  TaskStore,
} from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import type { Request, RequestId, Result, Task } from '@modelcontextprotocol/sdk/types.js';
import type { JobRecord, JobRegistry } from './job.registry';
import { completedJobResult, failedJobResult, jobFailMessage } from './job-result.util';
import { isTerminalStatus, type JobPhase } from './job-timeline.util';

interface TaskEntry {
  sessionId?: string;
  ttl: number | null;
  pollInterval: number;
  createdAt: number;
}

const DEFAULT_POLL_INTERVAL_MS = 500;

/**
 * The TaskStore behind native MCP tasks. It stores only the binding (session, ttl, poll interval);
 * the status is read from the job timeline on every call, so no timers drive the tasks.
 *
 * Session binding is strict: a task is visible only to the session that created it (stdio has one
 * session, whose id is undefined). The SDK's InMemoryTaskStore lets a caller without a sessionId
 * see every task; contracts.md needs "-32602 Task not found" on any other session, so we compare
 * with ===. Expired tasks (ttl after the last change) read as not found, like the SDK's store.
 */
export class DemoTaskStore implements TaskStore {
  private readonly entries = new Map<string, TaskEntry>();
  /** Told of each cancel: the push side reports the change at once. */
  onCancelled?: (taskId: string) => void;

  constructor(private readonly registry: JobRegistry) {}

  /** `options.context.jobId` names the job the tool handler already created. */
  async createTask(
    options: CreateTaskOptions,
    _requestId: RequestId,
    _request: Request,
    sessionId?: string,
  ): Promise<Task> {
    const jobId = options.context?.jobId;
    const job = typeof jobId === 'string' ? this.registry.get(jobId) : undefined;
    if (!job) throw new Error('createTask needs context.jobId of an existing job');
    this.entries.set(job.id, {
      sessionId,
      ttl: options.ttl ?? null,
      pollInterval: options.pollInterval ?? DEFAULT_POLL_INTERVAL_MS,
      createdAt: job.submittedAt,
    });
    return this.toTask(job, this.entries.get(job.id)!);
  }

  async getTask(taskId: string, sessionId?: string): Promise<Task | null> {
    const found = this.lookup(taskId, sessionId);
    return found ? this.toTask(found.job, found.entry) : null;
  }

  /** Results come from the timeline; an explicit store is refused so the two never disagree. */
  async storeTaskResult(taskId: string): Promise<void> {
    throw new Error(`Task ${taskId}: demo tasks derive their result from the job timeline`);
  }

  async getTaskResult(taskId: string, sessionId?: string): Promise<Result> {
    const found = this.lookup(taskId, sessionId);
    if (!found) throw new Error(`Task with ID ${taskId} not found`);
    const phase = this.registry.phase(found.job);
    if (phase.status === 'completed') return completedJobResult(found.job.args);
    if (phase.status === 'failed') return failedJobResult(found.job.args);
    if (phase.status === 'cancelled') {
      return { content: [{ type: 'text', text: 'The task was cancelled.' }], isError: true };
    }
    throw new Error(`Task ${taskId} has no result yet (status ${phase.status})`);
  }

  /** Only cancel can change a demo task from outside; other moves are the timeline's. */
  async updateTaskStatus(taskId: string, status: Task['status'], _m?: string, sessionId?: string) {
    const found = this.lookup(taskId, sessionId);
    if (!found) throw new Error(`Task with ID ${taskId} not found`);
    const current = this.registry.phase(found.job).status;
    if (isTerminalStatus(current)) {
      throw new Error(`Cannot update task ${taskId} from terminal status '${current}'`);
    }
    if (status !== 'cancelled') throw new Error(`Demo tasks cannot be moved to '${status}'`);
    this.registry.cancel(found.job);
    this.onCancelled?.(taskId);
  }

  async listTasks(_cursor?: string, sessionId?: string): Promise<{ tasks: Task[] }> {
    const tasks: Task[] = [];
    for (const taskId of this.entries.keys()) {
      const task = await this.getTask(taskId, sessionId);
      if (task) tasks.push(task);
    }
    return { tasks };
  }

  private lookup(
    taskId: string,
    sessionId?: string,
  ): { job: JobRecord; entry: TaskEntry } | undefined {
    const entry = this.entries.get(taskId);
    const job = this.registry.get(taskId);
    if (!entry || !job || entry.sessionId !== sessionId) return undefined;
    const phase = this.registry.phase(job);
    const lastChange = isTerminalStatus(phase.status) ? phase.since : entry.createdAt;
    if (entry.ttl !== null && this.registry.now() > lastChange + entry.ttl) {
      this.entries.delete(taskId);
      return undefined;
    }
    return { job, entry };
  }

  private toTask(job: JobRecord, entry: TaskEntry): Task {
    const phase = this.registry.phase(job);
    return {
      taskId: job.id,
      status: phase.status === 'running' ? 'working' : phase.status,
      ...statusMessage(job, phase),
      ttl: entry.ttl,
      createdAt: new Date(entry.createdAt).toISOString(),
      lastUpdatedAt: new Date(phase.since).toISOString(),
      pollInterval: entry.pollInterval,
    };
  }
}

function statusMessage(job: JobRecord, phase: JobPhase): { statusMessage?: string } {
  if (phase.status === 'input_required') return { statusMessage: phase.question };
  if (phase.status === 'failed') return { statusMessage: jobFailMessage(job.args) };
  if (phase.status === 'cancelled') return { statusMessage: 'Client cancelled task execution.' };
  return {};
}
