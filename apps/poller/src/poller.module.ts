import { DynamicModule, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { McpServersConfig, Settings } from '@app/config';
import { LoggingModule } from '@app/logging';
import { MetricsModule } from '@app/metrics';
import { PersistenceModule } from '@app/persistence';
import { MCP_SERVERS, POLLER_SETTINGS } from './poller.tokens';
import { PollerHealthServer } from './poller-health.server';

/** The poller's root module: workers only; its one port serves health and metrics. */
@Module({})
export class PollerModule {
  static forRoot(settings: Settings, servers: McpServersConfig): DynamicModule {
    return {
      module: PollerModule,
      imports: [
        LoggingModule.forRoot({ level: settings.log.level, format: settings.log.format }),
        MetricsModule.forRoot({ defaultLabels: { app: 'poller' } }),
        PersistenceModule.forRoot({
          url: settings.database.url ?? '',
          poolSize: settings.database.poolSize,
          appName: 'mcp-task-gateway-poller',
        }),
        ScheduleModule.forRoot(),
      ],
      providers: [
        { provide: POLLER_SETTINGS, useValue: settings },
        { provide: MCP_SERVERS, useValue: servers },
        PollerHealthServer,
      ],
    };
  }
}
