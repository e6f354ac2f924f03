import { DynamicModule, Module } from '@nestjs/common';
import { Settings } from '@app/config';
import { LoggingModule } from '@app/logging';
import { MetricsModule } from '@app/metrics';
import { PersistenceModule } from '@app/persistence';
import { SETTINGS } from './settings.token';
import { HealthController } from './health/health.controller';

/** The API's root module: HTTP only; it never talks to upstream MCP servers. */
@Module({})
export class ApiModule {
  static forRoot(settings: Settings): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        LoggingModule.forRoot({ level: settings.log.level, format: settings.log.format }),
        MetricsModule.forRoot({ defaultLabels: { app: 'api' } }),
        PersistenceModule.forRoot({
          url: settings.database.url ?? '',
          poolSize: settings.database.poolSize,
          appName: 'mcp-task-gateway-api',
        }),
      ],
      controllers: [HealthController],
      providers: [{ provide: SETTINGS, useValue: settings }],
    };
  }
}
