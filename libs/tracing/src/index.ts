export { startTracing, stopTracing } from './tracing.setup';
export {
  type SubmitSpan,
  type TraceCarrier,
  annotateTaskSpan,
  currentTraceCarrier,
  runInTaskSpan,
  startSubmitSpan,
  withTraceHeaders,
  withTraceMeta,
} from './task-trace';
