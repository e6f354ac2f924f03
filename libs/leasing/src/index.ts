export { ClaimBackoff } from './claim-backoff';
export { LeasedWorkEngine } from './leased-work.engine';
export type { Capacity, ClaimedBatch, LeasedWork } from './leased-work';
export { SlotCount } from './slot-count';
export { WakeSignal } from './wake-signal';
