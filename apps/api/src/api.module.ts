import { DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Settings, SettingsModule } from '@app/config';
import { LoggingModule } from '@app/logging';
import { MetricsModule } from '@app/metrics';
import { PersistenceModule } from '@app/persistence';
import { TracingFlush } from '@app/tracing';
import { AdminModule } from './admin/admin.module';
import { AuthGuard } from './auth/auth.guard';
import { AuthModule } from './auth/auth.module';
import { ConsoleModule } from './console/console.module';
import { EventsModule } from './events/events.module';
import { FrontDoorModule } from './front-door/front-door.module';
import { HealthModule } from './health/health.module';
import { ApiMetricsServer } from './http/api-metrics.server';
import { QueryParamsGuard } from './http/query-params.guard';
import { StatusModule } from './status/status.module';
import { TasksModule } from './tasks/tasks.module';
import { ToolsetsModule } from './toolsets/toolsets.module';
import { WebhooksModule } from './webhooks/webhooks.module';

/**
 * The API's root module: HTTP only; it never talks to upstream MCP servers. It holds what the
 * whole process shares (settings, logs, metrics, the database, tracing) and the two global
 * guards, in the order they run: every route needs a bearer token (AuthGuard) unless marked
 * public, then its query parameters are checked. Each feature is a module that owns its routes
 * and services; one that another feature uses is exported by its owner, so there is one instance.
 *
 * The features are imported in the order their routes are registered: Nest registers a module's
 * routes when the scan first reaches it, so a feature that others import comes before them.
 */
@Module({})
export class ApiModule {
  static forRoot(settings: Settings): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        SettingsModule.forRoot(settings),
        LoggingModule.forRoot({ level: settings.log.level, format: settings.log.format }),
        MetricsModule.forRoot({ defaultLabels: { app: 'api' } }),
        PersistenceModule.forRoot({
          ...settings.database,
          appName: 'mcp-task-gateway-api',
        }),
        AuthModule,
        HealthModule,
        ToolsetsModule,
        TasksModule,
        StatusModule,
        AdminModule,
        FrontDoorModule,
        ConsoleModule,
        EventsModule,
        WebhooksModule,
      ],
      providers: [
        TracingFlush,
        ApiMetricsServer,
        { provide: APP_GUARD, useClass: AuthGuard },
        // After authentication: an anonymous caller learns nothing about a route's parameters.
        { provide: APP_GUARD, useClass: QueryParamsGuard },
      ],
    };
  }
}
