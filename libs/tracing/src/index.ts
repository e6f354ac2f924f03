export { startTracing, stopTracing } from './tracing.setup';
export { TracingFlush } from './tracing-flush.service';
export {
  type TraceCarrier,
  annotateTaskSpan,
  runInTaskSpan,
  startSubmitSpan,
  withTraceHeaders,
  withTraceMeta,
} from './task-trace';
