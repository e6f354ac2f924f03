import { DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Settings, SettingsModule } from '@app/config';
import { LoggingModule } from '@app/logging';
import { MetricsModule } from '@app/metrics';
import { PersistenceModule } from '@app/persistence';
import { MIGRATIONS } from '../../../migrations';
import { TracingFlush } from '@app/tracing';
import { AdminController } from './admin/admin.controller';
import { ApiKeyCache } from './auth/api-key-cache';
import { AuthGuard } from './auth/auth.guard';
import { QueryParamsGuard } from './http/query-params.guard';
import { TokenVerifier } from './auth/token-verifier.service';
import { DrainState } from './health/drain-state';
import { HeldRequests } from './health/held-requests';
import { HealthController } from './health/health.controller';
import { ApiMetricsServer } from './http/api-metrics.server';
import { StatusController } from './status/status.controller';
import { CONSOLE_CONTROLLERS, CONSOLE_PROVIDERS } from './console/console.parts';
import { ArgumentsValidator } from './tasks/arguments-validator.service';
import { TaskPresenter } from './tasks/task-presenter.service';
import { TaskInputController } from './tasks/task-input.controller';
import { TaskInputService } from './tasks/task-input.service';
import { TaskQueryService } from './tasks/task-query.service';
import { TaskSubmitService } from './tasks/task-submit.service';
import { HttpSubmitService } from './tasks/http-submit.service';
import { SubmitFastPathHandler } from './tasks/submit-fast-path.handler';
import { ThreadTasksController } from './tasks/thread-tasks.controller';
import { ThreadsController } from './tasks/threads.controller';
import { UserTasksController } from './tasks/user-tasks.controller';
import { ToolsetCatalog } from './toolsets/toolset-catalog.service';
import { ToolsetsController } from './toolsets/toolsets.controller';
import { EventsModule } from './events/events.module';
import { HeldCallsRegistry } from './front-door/2025/held-calls.registry';
import { McpWaitSlots } from './front-door/mcp-wait-slots';
import { Mcp2025Handler } from './front-door/2025/mcp-2025.handler';
import { Mcp2026Handler } from './front-door/2026/mcp-2026.handler';
import { McpRequestGuard } from './front-door/mcp-request-guard.service';
import { McpTaskAccess } from './front-door/mcp-task-access.service';
import { McpRounds } from './front-door/2026/mcp-rounds.service';
import { McpToolCalls } from './front-door/mcp-tool-calls.service';
import { McpToolsService } from './front-door/mcp-tools.service';
import { McpController } from './front-door/mcp.controller';
import { TaskStatusStream } from './front-door/2025/task-status-stream.service';
import { TaskSubscriptions } from './front-door/2026/task-subscriptions.service';

/**
 * The API's root module: HTTP only; it never talks to upstream MCP servers. Every route needs a
 * bearer token (the global {@link AuthGuard}) unless marked public.
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
          url: settings.database.url ?? '',
          appName: 'mcp-task-gateway-api',
          migrations: MIGRATIONS,
        }),
        EventsModule,
      ],
      controllers: [
        HealthController,
        ToolsetsController,
        ThreadTasksController,
        TaskInputController,
        ThreadsController,
        UserTasksController,
        StatusController,
        AdminController,
        McpController,
        ...CONSOLE_CONTROLLERS,
      ],
      providers: [
        DrainState,
        HeldRequests,
        TracingFlush,
        ApiKeyCache,
        TokenVerifier,
        { provide: APP_GUARD, useClass: AuthGuard },
        // After authentication: an anonymous caller learns nothing about a route's parameters.
        { provide: APP_GUARD, useClass: QueryParamsGuard },
        ApiMetricsServer,
        ToolsetCatalog,
        ArgumentsValidator,
        TaskPresenter,
        TaskSubmitService,
        HttpSubmitService,
        SubmitFastPathHandler,
        TaskQueryService,
        McpRequestGuard,
        HeldCallsRegistry,
        McpWaitSlots,
        McpTaskAccess,
        McpToolsService,
        McpToolCalls,
        McpRounds,
        Mcp2025Handler,
        Mcp2026Handler,
        TaskSubscriptions,
        TaskStatusStream,
        TaskInputService,
        ...CONSOLE_PROVIDERS,
      ],
    };
  }
}
