import type { TaskListen, TaskListenHandlers } from '@app/upstream';

/** What one server's subscription needs from its owner. */
export interface ServerListenDeps {
  server: string;
  /** Opens a listen for these remote task IDs (throws when the server cannot be asked now). */
  open(taskIds: readonly string[], handlers: TaskListenHandlers): TaskListen;
  /** The local task a notification names changed upstream. */
  wake(localTaskId: string): void;
  /** The subscription covering these local tasks was lost. */
  lost(localTaskIds: string[], reason: string): void;
  /** Delay before the n-th attempt after a failure (1 s doubling to 60 s, ±20 %). */
  backoffMs(failures: number): number;
  log(fields: object, message: string): void;
  /** Tasks not noted for this long are dropped from the subscription. */
  forgetAfterMs: number;
  now?: () => number;
}

// A burst of new tasks is subscribed together: a re-listen waits this long for more.
const GATHER_MS = 50;

/**
 * One server's 2026-07-28 subscription (docs/connections.md, "Push"): one live
 * `subscriptions/listen` naming every remote task this poller tracks on the server. A new task
 * makes it re-listen with the larger set (make before break: the old stream serves until the new
 * one is acknowledged). A task is covered once a live stream acknowledged its ID; a lost stream
 * uncovers them all at once and is re-established with backoff.
 */
export class ServerListen {
  /** remote task ID → local task ID and when it was last noted. */
  private readonly tracked = new Map<string, { local: string; notedAt: number }>();
  private live?: { listen: TaskListen; acked: ReadonlySet<string> };
  private opening?: TaskListen;
  private timer?: NodeJS.Timeout;
  private failures = 0;
  /** The tracked set changed since the live (or opening) stream was asked for. */
  private dirty = false;
  private closed = false;

  constructor(private readonly deps: ServerListenDeps) {}

  /** Tracks a task; true when a live subscription covers it now. */
  note(remoteTaskId: string, localTaskId: string): boolean {
    const now = this.now();
    const entry = this.tracked.get(remoteTaskId);
    if (entry) entry.notedAt = now;
    else {
      this.tracked.set(remoteTaskId, { local: localTaskId, notedAt: now });
      this.dirty = true;
      this.schedule(GATHER_MS);
    }
    return this.live?.acked.has(remoteTaskId) ?? false;
  }

  /** The task ended: nothing more to hear about it (dropped from the next re-listen). */
  forget(remoteTaskId: string): void {
    this.tracked.delete(remoteTaskId);
  }

  /** The server can no longer be trusted to push (its side left `ready`, its era changed). */
  drop(reason: string): void {
    if (this.live) this.lose(reason);
  }

  get covering(): boolean {
    return this.live !== undefined;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.opening?.close();
    this.live?.listen.close();
    this.opening = undefined;
    this.live = undefined;
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  private schedule(ms: number): void {
    if (this.closed || this.timer || this.opening) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.open();
    }, ms);
    this.timer.unref();
  }

  private open(): void {
    if (this.closed || this.opening) return;
    const cutoff = this.now() - this.deps.forgetAfterMs;
    for (const [remote, entry] of this.tracked) {
      if (entry.notedAt < cutoff) this.tracked.delete(remote);
    }
    if (this.tracked.size === 0) {
      // Nothing to hear about: end the stream rather than keep one open for nobody.
      this.live?.listen.close();
      this.live = undefined;
      this.dirty = false;
      return;
    }
    this.dirty = false;
    let listen: TaskListen | undefined;
    const handlers: TaskListenHandlers = {
      onAcknowledged: (taskIds) => {
        if (this.closed || this.opening !== listen || !listen) return;
        const old = this.live;
        this.live = { listen, acked: new Set(taskIds) };
        this.opening = undefined;
        this.failures = 0;
        old?.listen.close();
        if (!old) this.deps.log({ tasks: taskIds.length }, 'push subscription live');
        if (this.dirty) this.schedule(GATHER_MS);
      },
      onTask: (remoteTaskId) => {
        const entry = this.tracked.get(remoteTaskId);
        if (entry) this.deps.wake(entry.local);
      },
      onEnd: (reason) => {
        if (this.closed || !listen) return;
        if (this.opening === listen) {
          // The replacement failed before its acknowledgement: the live stream (if any) serves on.
          this.opening = undefined;
          this.failures += 1;
          this.dirty = true;
          this.deps.log({ reason, failures: this.failures }, 'push subscription refused');
          this.schedule(this.deps.backoffMs(this.failures));
        } else if (this.live?.listen === listen) {
          this.lose(reason);
        }
      },
    };
    try {
      listen = this.deps.open([...this.tracked.keys()], handlers);
      this.opening = listen;
    } catch (error) {
      this.failures += 1;
      this.dirty = true;
      const reason = error instanceof Error ? error.message : String(error);
      this.deps.log({ reason, failures: this.failures }, 'push subscription not opened');
      this.schedule(this.deps.backoffMs(this.failures));
    }
  }

  /** The live stream is gone: its tasks go back to the normal interval, and it is reopened. */
  private lose(reason: string): void {
    const live = this.live;
    if (!live) return;
    this.live = undefined;
    live.listen.close();
    const locals: string[] = [];
    for (const remote of live.acked) {
      const entry = this.tracked.get(remote);
      if (entry) locals.push(entry.local);
    }
    this.deps.lost(locals, reason);
    this.failures += 1;
    this.dirty = true;
    this.schedule(this.failures === 1 ? 0 : this.deps.backoffMs(this.failures - 1));
  }
}
