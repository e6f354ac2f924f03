export type {
  ContractDriver,
  PendingAnswers,
  DriverContext,
  SubmitOutcome,
} from './contract-driver';
export { CallAbortedError } from './driver.errors';
export { DriverRegistry } from './driver.registry';
export { CatalogBuilder } from './catalog.builder';
