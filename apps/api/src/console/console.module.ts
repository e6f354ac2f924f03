import { Module } from '@nestjs/common';
import { AdminModule } from '../admin/admin.module';
import { AuthModule } from '../auth/auth.module';
import { EventStreamModule } from '../events/event-stream.module';
import { TasksModule } from '../tasks/tasks.module';
import { ToolsetsModule } from '../toolsets/toolsets.module';
import { AnswerLinkController } from './answer-link.controller';
import { ConsoleActionsController } from './console-actions.controller';
import { ConsolePagesController } from './console-pages.controller';
import { ConsoleSessions } from './console-session.service';

/**
 * The browser console and answer links (docs/console.md). They call the task, input, admin, auth
 * and catalog services through the modules that own them, the same instances `/v1` uses (with the
 * same caches), never copies of their own.
 */
@Module({
  imports: [AdminModule, AuthModule, EventStreamModule, TasksModule, ToolsetsModule],
  controllers: [ConsolePagesController, ConsoleActionsController, AnswerLinkController],
  providers: [ConsoleSessions],
})
export class ConsoleModule {}
