import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentUser } from '../auth/current-user.decorator';
import { ApiProblems } from '../problem/api-problems.decorator';
import { ApiListQuery } from './api-list-query.decorator';
import { RawListQuery } from './list-query';
import { TaskListView, TaskQueryService } from './task-query.service';
import { TaskListDto } from './task.dto';

/** The caller's tasks across all their threads. */
@ApiTags('tasks')
@ApiBearerAuth()
@Controller('v1/tasks')
export class UserTasksController {
  constructor(private readonly query: TaskQueryService) {}

  @Get()
  @ApiListQuery()
  @ApiOperation({ summary: "List the caller's tasks across threads, newest first" })
  @ApiOkResponse({ type: TaskListDto })
  @ApiProblems(400, 401)
  list(@CurrentUser() userId: string, @Query() raw: RawListQuery): Promise<TaskListView> {
    return this.query.list(userId, raw);
  }
}
