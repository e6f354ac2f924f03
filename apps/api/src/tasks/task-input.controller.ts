import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiExtraModels,
  ApiOperation,
  ApiParam,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import { TaskView } from '@app/views';
import { CurrentUser } from '../auth/current-user.decorator';
import { ApiProblems } from '../problem/api-problems.decorator';
import { PROBLEM_KINDS } from '../problem/problem-kinds';
import { TaskIdPipe, ThreadIdPipe } from './id-params.pipe';
import { AnswerInputDto, InputRequestDto, InputRequiredDto } from './task-input.dto';
import { TaskInputService } from './task-input.service';
import { TaskDto } from './task.dto';

/** Answers to a waiting task's questions. */
@ApiTags('tasks')
@ApiBearerAuth()
@ApiExtraModels(InputRequestDto, InputRequiredDto)
@ApiProblems(400, 401)
@Controller('v1/threads/:thread_id/tasks/:task_id/input')
export class TaskInputController {
  constructor(private readonly inputs: TaskInputService) {}

  @Post()
  @HttpCode(202)
  @ApiParam({ name: 'thread_id', description: 'Caller-chosen thread ID, ^[A-Za-z0-9._:-]{1,128}$' })
  @ApiParam({ name: 'task_id', description: 'Task ID, ^task_[a-z2-7]{26}$' })
  @ApiOperation({
    summary:
      "Answer some or all of an input_required task's open questions; stored durably and sent upstream by a poller",
  })
  @ApiBody({ type: AnswerInputDto })
  @ApiResponse({
    status: 202,
    type: TaskDto,
    description: 'Stored (or the same answers again); the task as it is now',
  })
  @ApiProblems(
    404,
    PROBLEM_KINDS.notAnswerable,
    PROBLEM_KINDS.answerConflict,
    PROBLEM_KINDS.taskChanged,
    413,
    415,
    PROBLEM_KINDS.validation,
  )
  answer(
    @CurrentUser() userId: string,
    @Param('thread_id', ThreadIdPipe) threadId: string,
    @Param('task_id', TaskIdPipe) taskId: string,
    @Body() body: unknown,
  ): Promise<TaskView> {
    return this.inputs.answer(userId, threadId, taskId, body);
  }
}
