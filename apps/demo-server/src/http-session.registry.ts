import type { ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { registerExtraTool } from './misc-tools.registrar';

export interface HttpSession {
  id: string;
  server: McpServer;
  transport: Transport;
  /** Set once the client sent notifications/initialized (drop-after-initialize keys on it). */
  initialized: boolean;
  /** Legacy SSE only: the GET stream, destroyed together with the POST for drop-after-initialize. */
  sseStream?: ServerResponse;
}

/**
 * Live HTTP sessions (Streamable HTTP and legacy SSE) of one process. Forgetting a session closes
 * its server and transport, so any later request with its id gets 404 as after a server restart.
 */
export class HttpSessionRegistry {
  private readonly sessions = new Map<string, HttpSession>();

  add(session: HttpSession): void {
    this.sessions.set(session.id, session);
  }

  get(id: string): HttpSession | undefined {
    return this.sessions.get(id);
  }

  remove(id: string | undefined): void {
    if (id !== undefined) this.sessions.delete(id);
  }

  /** Returns how many sessions were forgotten. Close errors are ignored: the goal is "gone". */
  async forgetAll(): Promise<number> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((session) => session.server.close().catch(() => undefined)));
    return all.length;
  }

  /**
   * Registers demo_extra on every live session; registering makes the SDK send
   * tools/list_changed. A repeated add-tool re-sends the notification, so a client that opened
   * its notification stream late can still be told.
   */
  addExtraToolEverywhere(): void {
    for (const { server } of this.sessions.values()) {
      if (server.isConnected()) {
        try {
          registerExtraTool(server);
        } catch {
          server.sendToolListChanged(); // already registered (an earlier add-tool)
        }
      }
    }
  }
}
