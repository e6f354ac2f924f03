/**
 * A remote handle as an upstream returned it; never dropped once received. The drivers produce
 * it and the store keeps it, so it lives here rather than in either.
 */
export interface RemoteHandle {
  remoteTaskId: string;
  sessionId?: string | null;
  protocolVersion?: string | null;
  driverState?: Record<string, unknown> | null;
  pinnedWorkerId?: string | null;
}
