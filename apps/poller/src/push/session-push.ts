/** What the 2025-11-25 side of push needs from its owner. */
export interface SessionPushDeps {
  /** A pushed change names a tracked task of `server`. */
  wake(localTaskId: string, server: string): void;
  lost(localTaskIds: string[], reason: string, server: string): void;
  forgetAfterMs: number;
  now?: () => number;
}

interface Session {
  server: string;
  /** The session's server stream has delivered a status notification and has not ended. */
  pushing: boolean;
  /** remote task ID → local task ID and when it was last noted. */
  tasks: Map<string, { local: string; notedAt: number }>;
}

// Entries older than forgetAfterMs are swept every this many notes.
const SWEEP_EVERY = 1024;

/**
 * Push on 2025-11-25 task sessions (docs/connections.md, "Push"). There is nothing to subscribe
 * to: a server that pushes sends `notifications/tasks/status` on the stream of the session that
 * made the task. A session covers its tasks once its stream has delivered one (a server that
 * never pushes is never trusted to) and until that stream ends. Only this poller's own task
 * sessions are heard; a task of another poller's session is polled at the normal interval here.
 * An ended session is forgotten: an HTTP session's stream is never reopened, so nothing comes
 * under its ID again, while a stdio server's next child pushes under the same key
 * (`pushSessionKey`) and is trusted once it has pushed, as a new session is.
 */
export class SessionPush {
  /** By session ID (random per session; a key of its own, whatever the server). */
  private readonly sessions = new Map<string, Session>();
  private notes = 0;

  constructor(private readonly deps: SessionPushDeps) {}

  /** Tracks a task of a session; true when that session's pushes cover it now. */
  note(server: string, sessionId: string, remoteTaskId: string, localTaskId: string): boolean {
    const session = this.session(server, sessionId);
    session.tasks.set(remoteTaskId, { local: localTaskId, notedAt: this.now() });
    if (++this.notes % SWEEP_EVERY === 0) this.sweep();
    return session.pushing;
  }

  forget(sessionId: string, remoteTaskId: string): void {
    this.sessions.get(sessionId)?.tasks.delete(remoteTaskId);
  }

  /** A status notification: the session pushes; wake the task it names. */
  status(server: string, sessionId: string, remoteTaskId: string): void {
    const session = this.session(server, sessionId);
    session.pushing = true;
    const entry = session.tasks.get(remoteTaskId);
    if (entry) this.deps.wake(entry.local, session.server);
  }

  /** The session's stream ended: its tasks go back to the normal interval. */
  ended(sessionId: string, reason: string): void {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    this.sessions.delete(sessionId);
    if (session.pushing) {
      const locals = [...session.tasks.values()].map((entry) => entry.local);
      this.deps.lost(locals, reason, session.server);
    }
  }

  private session(server: string, sessionId: string): Session {
    let session = this.sessions.get(sessionId);
    if (!session) {
      session = { server, pushing: false, tasks: new Map() };
      this.sessions.set(sessionId, session);
    }
    return session;
  }

  private sweep(): void {
    const cutoff = this.now() - this.deps.forgetAfterMs;
    for (const [id, session] of this.sessions) {
      for (const [remote, entry] of session.tasks) {
        if (entry.notedAt < cutoff) session.tasks.delete(remote);
      }
      if (session.tasks.size === 0 && !session.pushing) this.sessions.delete(id);
    }
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }
}
