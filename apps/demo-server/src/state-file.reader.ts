import { JobRegistry, type PersistedState, type StateRecord } from './job.registry';
import { StateFileRepository } from './state-file.repository';

/**
 * A state file's state as a server started on it now would see it (snapshot, then journal),
 * read without writing: for a reader beside a running server (the chaos run's evidence). Sync
 * calls still running are left as they are. Undefined when there is no state file yet.
 */
export function readStateFile(path: string): PersistedState | undefined {
  const { snapshot, records } = new StateFileRepository<PersistedState, StateRecord>(path).load();
  if (!snapshot && records.length === 0) return undefined;
  const registry = new JobRegistry();
  registry.restore(snapshot, records);
  return registry.persisted();
}
