import { Controller, Delete, HttpCode, Param } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiNoContentResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentUser } from '../auth/current-user.decorator';
import { ApiProblems } from '../problem/api-problems.decorator';
import { ThreadIdPipe } from './id-params.pipe';
import { TaskQueryService } from './task-query.service';

/** Threads as a whole. */
@ApiTags('threads')
@ApiBearerAuth()
@Controller('v1/threads')
export class ThreadsController {
  constructor(private readonly query: TaskQueryService) {}

  /**
   * 204 whether or not the thread had tasks: a thread exists only as its tasks, and deleting
   * twice (a retry) must succeed.
   */
  @Delete(':thread_id')
  @HttpCode(204)
  @ApiParam({ name: 'thread_id', description: 'Caller-chosen thread ID' })
  @ApiOperation({
    summary:
      "Cancel the thread's active tasks and hide all of them; the thread ID can be reused and starts empty",
  })
  @ApiNoContentResponse({ description: 'Deleted (also when it had no tasks)' })
  @ApiProblems(400, 401)
  async remove(
    @CurrentUser() userId: string,
    @Param('thread_id', ThreadIdPipe) threadId: string,
  ): Promise<void> {
    await this.query.deleteThread(userId, threadId);
  }
}
