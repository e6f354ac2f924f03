import { trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
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
