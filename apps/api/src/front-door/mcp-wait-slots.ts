import { Inject, Injectable } from '@nestjs/common';
import { Settings, SETTINGS } from '@app/config';
import { RateLimited } from '../refusals/refusal';

/** The kinds of long request a user may hold open on this replica, each with its own cap. */
export type WaitKind = 'heldCalls' | 'resultWaits' | 'listenStreams';

/** The `data.quota` each kind answers with, and how the message names it. */
const KINDS: Record<WaitKind, { quota: string; what: string }> = {
  heldCalls: { quota: 'held_calls', what: 'tool calls held open' },
  resultWaits: { quota: 'result_waits', what: 'tasks/result waits' },
  listenStreams: { quota: 'listen_streams', what: 'subscriptions/listen streams' },
};

/**
 * Per-user caps on the requests `/mcp` keeps open (held calls, `tasks/result` waits, listen
 * streams), per replica like `SSE_MAX_STREAMS_PER_USER`: each costs a timer and re-reads for as
 * long as it lasts, so one user's stuck retry loop must not take a replica's. One more is refused
 * with -32029, like a spent quota, its `retryAfterSeconds` the time until the user's oldest such
 * request ends at the latest (MCP_MAX_HOLD_MS after it began).
 */
@Injectable()
export class McpWaitSlots {
  /** Per user and kind: when each open request ends at the latest (`Date.now()` ms). */
  private readonly open = new Map<string, Set<{ endsBy: number }>>();

  constructor(@Inject(SETTINGS) private readonly settings: Settings) {}

  /**
   * Takes a slot, or throws the refusal (-32029 on the wire). The returned release is idempotent; `abort` (the
   * client cancelling or going away) releases it at once, before the wait itself unwinds.
   */
  acquire(userId: string, kind: WaitKind, abort?: AbortSignal): () => void {
    const key = JSON.stringify([userId, kind]);
    const slots = this.open.get(key) ?? new Set<{ endsBy: number }>();
    const max = this.settings.mcp.maxPerUser[kind];
    if (slots.size >= max) {
      const soonest = Math.min(...[...slots].map((slot) => slot.endsBy));
      const retryAfterSeconds = Math.max(1, Math.ceil((soonest - Date.now()) / 1000));
      throw new RateLimited(
        `Too many ${KINDS[kind].what}: at most ${max} at once per user; retry later.`,
        retryAfterSeconds,
        KINDS[kind].quota,
      );
    }
    const slot = { endsBy: Date.now() + this.settings.mcp.maxHoldMs };
    slots.add(slot);
    this.open.set(key, slots);
    const release = (): void => {
      abort?.removeEventListener('abort', release);
      slots.delete(slot);
      if (slots.size === 0 && this.open.get(key) === slots) this.open.delete(key);
    };
    abort?.addEventListener('abort', release, { once: true });
    return release;
  }
}
