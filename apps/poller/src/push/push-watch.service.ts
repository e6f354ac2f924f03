import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { Contract, isRoundHandle } from '@app/common';
import { SETTINGS, Settings } from '@app/config';
import { GatewayMetrics } from '@app/metrics';
import { TaskWakeRepository } from '@app/persistence';
import { UpstreamPool, pushSessionKey } from '@app/upstream';
import { ServerListen } from './server-listen';
import { SessionPush } from './session-push';

/** The revision whose upstreams are asked to push through `subscriptions/listen`. */
const LISTEN_ERA = '2026-07-28';
const BACKOFF_INITIAL_MS = 1000;
const BACKOFF_MAX_MS = 60_000;
const BACKOFF_JITTER = 0.2;

/** What the attempt knows of a task when it decides when to poll it next. */
export interface PolledTask {
  id: string;
  server: string;
  contract: Contract;
  remoteTaskId: string | null;
  remoteSessionId: string | null;
  remoteProtocolVersion: string | null;
}

/**
 * Upstreams that push (docs/connections.md, "Push"; docs/leases.md, "Pushed changes"): per
 * server one subscription for the tasks this poller has polled there, a notification wakes its
 * task through the database (so whichever poller claims next polls it, at once), and while the
 * subscription covers a task its next poll is only the slow safety poll. The map from remote
 * task IDs to local tasks lives here and nowhere else.
 */
@Injectable()
export class PushWatchService {
  private readonly servers = new Map<string, ServerListen>();
  private readonly sessions: SessionPush;
  private readonly waking = new Set<string>();
  private flushing?: Promise<void>;
  private closed = false;

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly pool: UpstreamPool,
    private readonly wakes: TaskWakeRepository,
    private readonly metrics: GatewayMetrics,
    private readonly log: PinoLogger,
  ) {
    const { pollIntervalMs, pushSafetyPollFactor } = settings.scheduling;
    this.sessions = new SessionPush({
      wake: (local, server) => this.wake(local, server),
      lost: (locals, reason, server) => this.lost(server, locals, reason),
      forgetAfterMs: 3 * pollIntervalMs * pushSafetyPollFactor,
    });
    pool.onTaskPush((event) => {
      if (!settings.scheduling.push || this.closed) return;
      if (event.kind === 'status')
        this.sessions.status(event.server, event.sessionId, event.taskId);
      else this.sessions.ended(event.sessionId, event.reason);
    });
    // A server whose serving side is no longer ready, or that stopped speaking 2026-07-28,
    // cannot be trusted to push: its tasks go back to the normal interval at once.
    pool.onStateChange((server) => {
      const listen = this.servers.get(server);
      if (!listen?.covering) return;
      const status = pool.status(server);
      if (status.state !== 'ready') listen.drop(`the upstream is ${status.state}`);
      else if (status.taskProtocol !== LISTEN_ERA) listen.drop('the upstream changed its era');
    });
  }

  /**
   * After a poll that left the task active: whether a live subscription covers it, so its next
   * poll may be the slow safety poll. Tracks the task on its server's subscription.
   */
  covered(task: PolledTask): boolean {
    const remote = task.remoteTaskId;
    if (!this.settings.scheduling.push || this.closed) return false;
    // Only native tasks are pushed: an `ordinary` job is read through its status tool.
    if (task.contract !== Contract.McpTasks || remote === null || isRoundHandle(remote)) {
      return false;
    }
    if (task.remoteProtocolVersion === LISTEN_ERA) {
      // Over HTTP or stdio; an SSE server has no 2026-07-28 side to listen on.
      return this.pool.canListen(task.server) && this.listenOf(task.server).note(remote, task.id);
    }
    // A 2025-11-25 native task: covered while its session's stream pushes (over stdio, the
    // child's one session, which has no ID; a task without one on HTTP is never pushed to).
    const session = pushSessionKey(task.server, task.remoteSessionId);
    return this.sessions.note(task.server, session, remote, task.id);
  }

  /** The task ended: its subscription no longer needs it. */
  ended(task: PolledTask): void {
    if (task.remoteTaskId === null) return;
    this.servers.get(task.server)?.forget(task.remoteTaskId);
    this.sessions.forget(pushSessionKey(task.server, task.remoteSessionId), task.remoteTaskId);
  }

  /** Ends every subscription (shutdown), before the connection layer closes. */
  async close(): Promise<void> {
    this.closed = true;
    for (const listen of this.servers.values()) listen.close();
    await this.flushing;
  }

  private listenOf(server: string): ServerListen {
    let listen = this.servers.get(server);
    if (listen) return listen;
    const { pollIntervalMs, pushSafetyPollFactor } = this.settings.scheduling;
    const log = this.log.logger.child({ component: 'push', server });
    listen = new ServerListen({
      server,
      open: (taskIds, handlers) => this.pool.listenTasks(server, taskIds, handlers),
      wake: (local) => this.wake(local, server),
      lost: (locals, reason) => this.lost(server, locals, reason),
      backoffMs: backoff,
      log: (fields, message) => log.info(fields, message),
      // Noted at every poll by this poller; a task another poller now polls is let go after
      // three of its safety polls.
      forgetAfterMs: 3 * pollIntervalMs * pushSafetyPollFactor,
    });
    this.servers.set(server, listen);
    return listen;
  }

  /** Wakes gather while a wake statement runs: one statement per batch, not per notification. */
  private wake(localTaskId: string, server: string): void {
    this.metrics.pushWakes.inc({ server });
    this.waking.add(localTaskId);
    this.flushing ??= this.flush();
  }

  private async flush(): Promise<void> {
    try {
      while (this.waking.size > 0) {
        const ids = [...this.waking];
        this.waking.clear();
        try {
          await this.wakes.wake(ids);
        } catch (error) {
          // The safety poll still comes: a lost wake costs latency, never the task.
          this.log.warn({ err: error, tasks: ids.length }, 'could not wake pushed tasks');
        }
      }
    } finally {
      // Set in the same turn as the loop's last check: a wake after it starts a new flush.
      this.flushing = undefined;
    }
  }

  private lost(server: string, locals: string[], reason: string): void {
    this.log.warn({ server, reason, tasks: locals.length }, 'push subscription lost');
    this.metrics.pushLost.inc({ server });
    const { pollIntervalMs, minPollIntervalMs } = this.settings.scheduling;
    this.wakes
      .pullIn(locals, Math.max(pollIntervalMs, minPollIntervalMs))
      .catch((error: unknown) => {
        this.log.warn({ err: error, server }, 'could not bring pushed tasks back to polling');
      });
  }
}

function backoff(failures: number): number {
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_INITIAL_MS * 2 ** Math.max(0, failures - 1));
  return Math.round(base * (1 - BACKOFF_JITTER + 2 * BACKOFF_JITTER * Math.random()));
}
