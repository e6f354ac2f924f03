export { ClaimBackoff } from './claim-backoff';
export { LeasedWorkEngine } from './leased-work.engine';
export type { LeasedWorkEngineOptions } from './leased-work.engine';
export type { Capacity, ClaimedBatch, EngineLog, LeasedWork } from './leased-work';
export { SlotCount } from './slot-count';
export { WakeSignal } from './wake-signal';
export type { WakeReason } from './wake-signal';
