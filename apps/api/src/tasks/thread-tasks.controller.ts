import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentTenant, CurrentUser } from '../auth/current-user.decorator';
import { ApiProblems } from '../problem/api-problems.decorator';
import { PROBLEM_KINDS } from '../problem/problem-kinds';
import { TaskIdPipe, ThreadIdPipe } from './id-params.pipe';
import { RawListQuery } from './list-query';
import { HttpSubmitService } from './http-submit.service';
import { TaskQueryService, TaskListView } from './task-query.service';
import { TaskDto, TaskListDto, SubmitTaskDto } from './task.dto';
import { TaskView } from '@app/views';
import { ApiListQuery } from './api-list-query.decorator';

const THREAD_PARAM = ApiParam({
  name: 'thread_id',
  description: 'Caller-chosen thread ID, ^[A-Za-z0-9._:-]{1,128}$',
});
const TASK_PARAM = ApiParam({ name: 'task_id', description: 'Task ID, ^task_[a-z2-7]{26}$' });

/** Tasks within one thread of the caller: submit, list, read, cancel. */

/** What a submit answer (201, or 200 for a retry) carries besides the task. */
const SUBMIT_HEADERS = {
  Location: {
    description: 'The task: `/v1/threads/{thread_id}/tasks/{task_id}`',
    schema: { type: 'string' },
  },
  'Preference-Applied': {
    description:
      'With `Prefer: wait=N`: the preference honoured, `wait=N` with N the seconds held at most (capped at 30)',
    schema: { type: 'string', example: 'wait=5' },
  },
};
@ApiTags('tasks')
@ApiBearerAuth()
@ApiProblems(400, 401)
@Controller('v1/threads/:thread_id/tasks')
export class ThreadTasksController {
  constructor(
    private readonly httpSubmit: HttpSubmitService,
    private readonly query: TaskQueryService,
  ) {}

  @Post()
  @HttpCode(201)
  @THREAD_PARAM
  @ApiOperation({ summary: 'Submit a task; answers at once with the stored task' })
  @ApiBody({ type: SubmitTaskDto })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description:
      'Up to 255 chars, per user: a retry with the same key and body returns the same task (200)',
  })
  @ApiHeader({
    name: 'Prefer',
    required: false,
    description:
      '`wait=N` (N ≤ 30): hold the answer until the task ends, asks a question (input_required) or N seconds pass',
  })
  @ApiResponse({
    status: 201,
    type: TaskDto,
    description: 'Created; Location names the task',
    headers: SUBMIT_HEADERS,
  })
  @ApiResponse({
    status: 200,
    type: TaskDto,
    description: 'The same task, for a retried request',
    headers: SUBMIT_HEADERS,
  })
  @ApiProblems(
    413,
    415,
    PROBLEM_KINDS.validation,
    PROBLEM_KINDS.unknownToolset,
    PROBLEM_KINDS.idempotencyConflict,
    PROBLEM_KINDS.quotaExceeded,
  )
  async submit(
    @CurrentUser() userId: string,
    @CurrentTenant() tenant: string | undefined,
    @Param('thread_id', ThreadIdPipe) threadId: string,
    @Body() body: unknown,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Headers('prefer') prefer: string | undefined,
    @Headers('traceparent') traceparent: string | undefined,
    @Headers('tracestate') tracestate: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<TaskView> {
    const answer = await this.httpSubmit.answer({
      userId,
      tenant,
      threadId,
      body,
      idempotencyKey,
      prefer,
      traceparent,
      tracestate,
      res,
    });
    res.status(answer.status);
    for (const [name, value] of answer.headers) res.setHeader(name, value);
    return answer.task;
  }

  @Get()
  @THREAD_PARAM
  @ApiListQuery()
  @ApiOperation({ summary: "List the thread's tasks, newest first" })
  @ApiOkResponse({ type: TaskListDto })
  list(
    @CurrentUser() userId: string,
    @Param('thread_id', ThreadIdPipe) threadId: string,
    @Query() raw: RawListQuery,
  ): Promise<TaskListView> {
    return this.query.list(userId, raw, threadId);
  }

  @Get(':task_id')
  @THREAD_PARAM
  @TASK_PARAM
  @ApiOperation({ summary: 'One task, in detail' })
  @ApiOkResponse({ type: TaskDto })
  @ApiProblems(404)
  get(
    @CurrentUser() userId: string,
    @Param('thread_id', ThreadIdPipe) threadId: string,
    @Param('task_id', TaskIdPipe) taskId: string,
  ): Promise<TaskView> {
    return this.query.get(userId, threadId, taskId);
  }

  @Post(':task_id/retry')
  @HttpCode(201)
  @THREAD_PARAM
  @TASK_PARAM
  @ApiOperation({
    summary:
      'Submit a failed task again: a new task with its toolset, arguments and metadata, whose retry_of names it',
  })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description:
      'As on a submit: a retried request with the same key answers the same new task (200)',
  })
  @ApiHeader({ name: 'Prefer', required: false, description: 'As on a submit: `wait=N`' })
  @ApiResponse({
    status: 201,
    type: TaskDto,
    description: 'The new task; Location names it',
    headers: SUBMIT_HEADERS,
  })
  @ApiResponse({
    status: 200,
    type: TaskDto,
    description: 'The same new task, for a retried request',
    headers: SUBMIT_HEADERS,
  })
  @ApiProblems(
    404,
    PROBLEM_KINDS.notRetryable,
    PROBLEM_KINDS.validation,
    PROBLEM_KINDS.unknownToolset,
    PROBLEM_KINDS.idempotencyConflict,
    PROBLEM_KINDS.quotaExceeded,
  )
  async retry(
    @CurrentUser() userId: string,
    @CurrentTenant() tenant: string | undefined,
    @Param('thread_id', ThreadIdPipe) threadId: string,
    @Param('task_id', TaskIdPipe) taskId: string,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Headers('prefer') prefer: string | undefined,
    @Headers('traceparent') traceparent: string | undefined,
    @Headers('tracestate') tracestate: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<TaskView> {
    const answer = await this.httpSubmit.retry({
      userId,
      tenant,
      threadId,
      taskId,
      idempotencyKey,
      prefer,
      traceparent,
      tracestate,
      res,
    });
    res.status(answer.status);
    for (const [name, value] of answer.headers) res.setHeader(name, value);
    return answer.task;
  }

  @Post(':task_id/cancel')
  @HttpCode(202)
  @THREAD_PARAM
  @TASK_PARAM
  @ApiOperation({
    summary:
      'Request cancellation (durable, idempotent); the task ends cancelled later, or at once if not yet submitted',
  })
  @ApiResponse({ status: 202, type: TaskDto, description: 'Recorded; the task as it is now' })
  @ApiProblems(404, PROBLEM_KINDS.taskEnded)
  cancel(
    @CurrentUser() userId: string,
    @Param('thread_id', ThreadIdPipe) threadId: string,
    @Param('task_id', TaskIdPipe) taskId: string,
  ): Promise<TaskView> {
    return this.query.cancel(userId, threadId, taskId);
  }
}
