import type { SupervisorState } from '@app/mcp';

/**
 * Carries supervisor state changes from the connection layer's metric hooks to the catalog
 * publisher. It exists to break a construction cycle: the pool needs its hooks at construction,
 * and the publisher needs the pool to read a server's status.
 */
export class UpstreamEventsRelay {
  private readonly listeners = new Set<(server: string, state: SupervisorState) => void>();

  onState(listener: (server: string, state: SupervisorState) => void): void {
    this.listeners.add(listener);
  }

  emitState(server: string, state: SupervisorState): void {
    // A listener's failure must never reach the connection layer that reported the state.
    for (const listener of this.listeners) {
      try {
        listener(server, state);
      } catch {
        // Listeners log their own failures.
      }
    }
  }
}
