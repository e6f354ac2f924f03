import { DynamicModule, Module } from '@nestjs/common';
import { McpServersConfig, Settings, SettingsModule } from '@app/config';
import { LoggingModule } from '@app/logging';
import { GatewayMetrics, MetricsModule } from '@app/metrics';
import { PersistenceModule } from '@app/persistence';
import { ClaimLoopService } from './claiming/claim-loop.service';
import { RescueHold } from './claiming/rescue-hold';
import { NotifyListenerService } from './claiming/notify-listener.service';
import { ServerSlots } from './claiming/server-slots';
import { PollerHealthServer } from './poller-health.server';
import { PollerLifecycleService } from './poller-lifecycle.service';
import { MCP_SERVERS, WORKER_ID } from './poller.tokens';
import { PushWatchService } from './push/push-watch.service';
import { TaskRunnerService } from './running/task-runner.service';
import { CatalogPublisherService } from './upkeep/catalog-publisher.service';
import { UPKEEP_PROVIDERS } from './upkeep/upkeep.providers';
import { WorkerRegistryService } from './upkeep/worker-registry.service';
import { UPSTREAM_PROVIDERS } from './upstream.providers';
import { PollerWebhooksModule } from './webhooks/webhooks.module';
import { resolveWorkerId } from './worker-identity';

/** The poller's root module: workers only; its one port serves health and metrics. */
@Module({})
export class PollerModule {
  static forRoot(settings: Settings, servers: McpServersConfig): DynamicModule {
    // One identity for every lease this process takes, task or webhook delivery.
    const workerId = resolveWorkerId(settings.worker.id);
    return {
      module: PollerModule,
      imports: [
        SettingsModule.forRoot(settings),
        LoggingModule.forRoot({ level: settings.log.level, format: settings.log.format }),
        MetricsModule.forRoot({ defaultLabels: { app: 'poller' } }),
        PersistenceModule.forRoot({
          ...settings.database,
          appName: 'mcp-task-gateway-poller',
          writeBatch: {
            windowMs: settings.worker.writeBatchWindowMs,
            maxItems: settings.worker.writeBatchMax,
          },
        }),
        PollerWebhooksModule.forRoot(workerId),
      ],
      providers: [
        { provide: MCP_SERVERS, useValue: servers },
        { provide: WORKER_ID, useValue: workerId },
        {
          provide: ServerSlots,
          inject: [GatewayMetrics],
          useFactory: (metrics: GatewayMetrics) =>
            new ServerSlots(
              settings.worker.slots,
              new Map(servers.servers.map((s) => [s.name, s.maxConcurrentCalls])),
              metrics,
            ),
        },
        { provide: RescueHold, useValue: new RescueHold(settings.lease.ms / 2) },
        ...UPSTREAM_PROVIDERS,
        WorkerRegistryService,
        NotifyListenerService,
        PushWatchService,
        TaskRunnerService,
        ClaimLoopService,
        CatalogPublisherService,
        ...UPKEEP_PROVIDERS,
        PollerLifecycleService,
        PollerHealthServer,
      ],
    };
  }
}
