import { Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { ListenConnection, TASK_EVENTS_CHANNEL } from '@app/persistence';

/** A stream the hub can end at shutdown. */
export interface ClosableStream {
  close(): void;
}

/**
 * Wakes this replica's open event streams when the database says their thread has news: one
 * channel on the replica's one LISTEN connection, however many streams. Streams still read everything from the
 * database (any replica serves any stream); a lost notification costs one fallback interval.
 */
@Injectable()
export class EventStreamHub implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly streams = new Set<ClosableStream>();
  private readonly slots = new Map<string, number>();
  private unsubscribe?: () => Promise<void>;

  constructor(
    private readonly connection: ListenConnection,
    private readonly log: PinoLogger,
  ) {}

  onApplicationBootstrap(): void {
    this.unsubscribe = this.connection.subscribe(TASK_EVENTS_CHANNEL, {
      onNotify: (payload) => this.onNotify(payload),
      onLost: (error, retryInMs) => this.log.warn({ err: error, retryInMs }, 'event listener lost'),
    });
  }

  /** Ends every open stream first: an open SSE response would hold the HTTP server open. */
  async onModuleDestroy(): Promise<void> {
    for (const stream of [...this.streams]) stream.close();
    this.wakeAll();
    await this.unsubscribe?.();
  }

  register(stream: ClosableStream): () => void {
    this.streams.add(stream);
    return () => this.streams.delete(stream);
  }

  /**
   * Takes one of the user's stream slots on this replica; null when all `max` are taken. The
   * returned release is idempotent. Per replica, like the submit rate limit: N replicas allow up
   * to N × max streams per user, and no stream waits on a shared counter.
   */
  acquireSlot(userId: string, max: number): (() => void) | null {
    const open = this.slots.get(userId) ?? 0;
    if (open >= max) return null;
    this.slots.set(userId, open + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.slots.get(userId) ?? 1) - 1;
      if (left <= 0) this.slots.delete(userId);
      else this.slots.set(userId, left);
    };
  }

  /**
   * Resolves on news for the thread (for any thread of the user with `threadId` undefined),
   * after `ms`, or when `wake` is called by the stream.
   */
  wait(
    userId: string,
    threadId: string | undefined,
    ms: number,
  ): { done: Promise<void>; wake: () => void } {
    const key = JSON.stringify(threadId === undefined ? [userId] : [userId, threadId]);
    let wake: () => void = () => undefined;
    const done = new Promise<void>((resolve) => {
      const timer = setTimeout(finish, ms);
      const set = this.waiters.get(key) ?? new Set<() => void>();
      this.waiters.set(key, set);
      set.add(finish);
      function finish(): void {
        clearTimeout(timer);
        set.delete(finish);
        resolve();
      }
      wake = finish;
    });
    done
      .finally(() => {
        if (this.waiters.get(key)?.size === 0) this.waiters.delete(key);
      })
      .catch(() => undefined);
    return { done, wake };
  }

  private onNotify(payload: string | null): void {
    // After a reconnect, notifications sent meanwhile are lost: everyone looks again.
    if (payload === null) return this.wakeAll();
    let thread: unknown;
    try {
      thread = JSON.parse(payload);
    } catch {
      return this.wakeAll();
    }
    if (!Array.isArray(thread)) return this.wakeAll();
    // Re-serialized: Postgres' json text has spaces JSON.stringify does not write. The thread's
    // streams and the user's streams across threads both hear it.
    for (const key of [JSON.stringify(thread), JSON.stringify(thread.slice(0, 1))])
      for (const finish of [...(this.waiters.get(key) ?? [])]) finish();
  }

  private wakeAll(): void {
    for (const set of this.waiters.values()) for (const finish of [...set]) finish();
  }
}
