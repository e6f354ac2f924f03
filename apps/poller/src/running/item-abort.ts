/**
 * Why the poller aborted a claimed item's upstream call. Only the poller knows, and the reason
 * decides the task's fate: `cancel` ends a held sync call `cancelled`, `lease_lost` discards the
 * outcome, `shutdown` gives the claim back without counting an error.
 */
export type AbortKind = 'cancel' | 'lease_lost' | 'shutdown';

/** The `reason` the poller passes to `AbortController.abort`. */
export class ItemAbort extends Error {
  override readonly name = 'ItemAbort';
  /**
   * @param forDeadline a `cancel` the deadline sweep requested, as the row's `cancel_reason`
   * says: the task's `cancelled` end is stored and counted `failed`.
   */
  constructor(
    readonly kind: AbortKind,
    readonly forDeadline = false,
  ) {
    super(`aborted by the poller: ${kind}`);
  }
}

/** The poller's abort reason on `signal`, if the poller aborted it. */
export function abortKind(signal: AbortSignal): AbortKind | undefined {
  const reason: unknown = signal.reason;
  return signal.aborted && reason instanceof ItemAbort ? reason.kind : undefined;
}

/** Whether the poller aborted `signal` for a cancel the deadline sweep requested. */
export function abortedForDeadline(signal: AbortSignal): boolean {
  const reason: unknown = signal.reason;
  return signal.aborted && reason instanceof ItemAbort && reason.forDeadline;
}
