import { Injectable } from '@nestjs/common';

/** Who sent a request, as narrowly as the front door can tell: the user and the client session. */
export interface McpClientScope {
  userId: string;
  /**
   * The `Mcp-Session-Id` the client echoes (issued by `initialize`, stored nowhere), or '' for a
   * client that sends none. It scopes `notifications/cancelled` and nothing else.
   */
  session: string;
}

/**
 * The 2025-11-25 requests this replica is holding open, so that `notifications/cancelled` can
 * end one. A request ID is only unique per client (every SDK client counts from 0), so entries
 * are keyed by the user and the client's session too: a client cancels only its own requests,
 * never another client's call that reuses the ID, whoever the user. A notification that
 * reaches another replica finds nothing here (see docs/mcp.md, "Held calls").
 */
@Injectable()
export class HeldCallsRegistry {
  private readonly calls = new Map<string, AbortController>();

  /** Registers a request in progress; the returned function removes it. */
  register(
    client: McpClientScope,
    requestId: string | number,
    controller: AbortController,
  ): () => void {
    const key = this.key(client, requestId);
    this.calls.set(key, controller);
    return () => {
      if (this.calls.get(key) === controller) this.calls.delete(key);
    };
  }

  cancel(client: McpClientScope, requestId: unknown): void {
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
    this.calls.get(this.key(client, requestId))?.abort();
  }

  private key(client: McpClientScope, requestId: string | number): string {
    return JSON.stringify([client.userId, client.session, typeof requestId, String(requestId)]);
  }
}
