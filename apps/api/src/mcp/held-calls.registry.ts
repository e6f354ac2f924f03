import { Injectable } from '@nestjs/common';

/**
 * The calls this replica is holding open, so that `notifications/cancelled` can end one. A
 * request ID is only unique per client, so entries are keyed by the caller too: one user cannot
 * cancel another's call. A notification that reaches another replica finds nothing here; the
 * client's disconnect still cancels (see docs/mcp.md).
 */
@Injectable()
export class HeldCallsRegistry {
  private readonly calls = new Map<string, AbortController>();

  /** Registers a held call; the returned function removes it. */
  register(userId: string, requestId: string | number, controller: AbortController): () => void {
    const key = this.key(userId, requestId);
    this.calls.set(key, controller);
    return () => {
      if (this.calls.get(key) === controller) this.calls.delete(key);
    };
  }

  cancel(userId: string, requestId: unknown): void {
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
    this.calls.get(this.key(userId, requestId))?.abort();
  }

  private key(userId: string, requestId: string | number): string {
    return JSON.stringify([userId, typeof requestId, String(requestId)]);
  }
}
