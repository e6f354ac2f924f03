import { trace } from '@opentelemetry/api';
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { enableTaskTracing } from './task-trace';

let provider: BasicTracerProvider | undefined;

/**
 * Turns tracing on when `endpoint` (OTEL_EXPORTER_OTLP_ENDPOINT) is set: spans are batched and
 * sent over OTLP/HTTP to `<endpoint>/v1/traces`. Without an endpoint nothing is registered and
 * every helper in this library is a no-op. Call once, at boot.
 * @param serviceName the `service.name` resource attribute (e.g. `mcp-task-gateway-api`).
 */
export function startTracing(serviceName: string, endpoint: string | undefined): void {
  if (!endpoint || provider) return;
  // Loaded only when tracing is on: the SDK and the OTLP exporter are about 190 modules, a tenth
  // of what every API, poller and CLI process would otherwise load at each start.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } =
    require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { BasicTracerProvider, BatchSpanProcessor } =
    require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  /* eslint-enable @typescript-eslint/no-require-imports */
  provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName, 'process.pid': process.pid }),
    spanProcessors: [
      new BatchSpanProcessor(
        new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` }),
      ),
    ],
  });
  trace.setGlobalTracerProvider(provider);
  enableTaskTracing(provider.getTracer('mcp-task-gateway'));
}

/** Exports the spans still buffered and stops; a no-op when tracing is off. Never throws. */
export async function stopTracing(): Promise<void> {
  const current = provider;
  provider = undefined;
  await current?.shutdown().catch(() => undefined);
}
