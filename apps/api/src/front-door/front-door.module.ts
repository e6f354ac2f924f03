import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { EventStreamModule } from '../events/event-stream.module';
import { HealthModule } from '../health/health.module';
import { TasksModule } from '../tasks/tasks.module';
import { ToolsetsModule } from '../toolsets/toolsets.module';
import { HeldCallsRegistry } from './2025/held-calls.registry';
import { Mcp2025Handler } from './2025/mcp-2025.handler';
import { TaskStatusStream } from './2025/task-status-stream.service';
import { Mcp2026Handler } from './2026/mcp-2026.handler';
import { McpRounds } from './2026/mcp-rounds.service';
import { TaskSubscriptions } from './2026/task-subscriptions.service';
import { McpRequestGuard } from './mcp-request-guard.service';
import { McpTaskAccess } from './mcp-task-access.service';
import { McpToolCalls } from './mcp-tool-calls.service';
import { McpToolsService } from './mcp-tools.service';
import { McpWaitSlots } from './mcp-wait-slots';
import { McpController } from './mcp.controller';

/**
 * The gateway as an MCP server at `/mcp` (docs/mcp.md): one controller for both protocol eras,
 * the parts only one era has in `2025/` and `2026/`, and what both share at the top. It acts on
 * tasks only through the task services (TasksModule), so `/mcp` and `/v1` keep the same rules.
 * McpRequestGuard is exported: the API's bearer-first middleware (configureApp) checks the
 * bearer's syntax with it before any body is read.
 */
@Module({
  imports: [AuthModule, EventStreamModule, HealthModule, TasksModule, ToolsetsModule],
  controllers: [McpController],
  providers: [
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
  ],
  exports: [McpRequestGuard],
})
export class FrontDoorModule {}
