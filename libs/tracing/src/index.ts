export { startTracing, stopTracing } from './tracing.setup';
export { TracingFlush } from './tracing-flush.service';
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
