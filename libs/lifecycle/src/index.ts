export { ConnectionCloser } from './connection-closer';
export { PeriodicRun } from './periodic-run';
