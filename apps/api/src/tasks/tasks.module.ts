import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { HealthModule } from '../health/health.module';
import { ToolsetsModule } from '../toolsets/toolsets.module';
import { ArgumentsValidator } from './arguments-validator.service';
import { HttpSubmitService } from './http-submit.service';
import { SubmitFastPathHandler } from './submit-fast-path.handler';
import { TaskInputController } from './task-input.controller';
import { TaskInputService } from './task-input.service';
import { TaskPresenter } from './task-presenter.service';
import { TaskQueryService } from './task-query.service';
import { TaskSubmitService } from './task-submit.service';
import { ThreadTasksController } from './thread-tasks.controller';
import { ThreadsController } from './threads.controller';
import { UserTasksController } from './user-tasks.controller';

/**
 * Tasks over `/v1`: submit, read, list, cancel, retry, answer, delete a thread. The submit fast
 * path (docs/operations.md, "The API's submit fast path") is provided here too, beside the HttpSubmitService it
 * shares with the routed submit; configureApp installs it in front of Express. The task services
 * are exported: `/mcp` and the console act on tasks through them, never around them.
 */
@Module({
  imports: [AuthModule, HealthModule, ToolsetsModule],
  controllers: [ThreadTasksController, TaskInputController, ThreadsController, UserTasksController],
  providers: [
    ArgumentsValidator,
    TaskPresenter,
    TaskSubmitService,
    HttpSubmitService,
    SubmitFastPathHandler,
    TaskQueryService,
    TaskInputService,
  ],
  exports: [TaskPresenter, TaskSubmitService, TaskQueryService, TaskInputService],
})
export class TasksModule {}
