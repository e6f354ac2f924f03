import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { TaskView } from '@app/views';
import { CurrentUser } from '../auth/current-user.decorator';
import { ApiProblems } from '../problem/api-problems.decorator';
import { ApiListQuery } from './api-list-query.decorator';
import { TaskIdPipe } from './id-params.pipe';
import { RawListQuery } from './list-query';
import { TaskListView, TaskQueryService } from './task-query.service';
import { TaskDto, TaskListDto } from './task.dto';

/** The caller's tasks across all their threads: a list with filters, and one task by its ID. */
@ApiTags('tasks')
@ApiBearerAuth()
@Controller('v1/tasks')
export class UserTasksController {
  constructor(private readonly query: TaskQueryService) {}

  @Get()
  @ApiListQuery({ acrossThreads: true })
  @ApiOperation({ summary: "List the caller's tasks across threads, newest first, filtered" })
  @ApiOkResponse({ type: TaskListDto })
  @ApiProblems(400, 401)
  list(@CurrentUser() userId: string, @Query() raw: RawListQuery): Promise<TaskListView> {
    return this.query.list(userId, raw);
  }

  @Get(':task_id')
  @ApiParam({ name: 'task_id', description: 'Task ID, ^task_[a-z2-7]{26}$' })
  @ApiOperation({ summary: 'One task of the caller, in detail, whatever its thread' })
  @ApiOkResponse({ type: TaskDto })
  @ApiProblems(400, 401, 404)
  get(
    @CurrentUser() userId: string,
    @Param('task_id', TaskIdPipe) taskId: string,
  ): Promise<TaskView> {
    return this.query.get(userId, undefined, taskId);
  }
}
