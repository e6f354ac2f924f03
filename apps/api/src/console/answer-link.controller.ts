import {
  Body,
  Controller,
  Get,
  HttpCode,
  Inject,
  Post,
  Query,
  Res,
  UseFilters,
} from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { TaskStatus, isRecord } from '@app/common';
import { Settings, SETTINGS } from '@app/config';
import { TaskRepository, TaskRow } from '@app/persistence';
import { acceptsAnswers, inputRequiredView } from '@app/views';
import { AnswerGrant, AnswerLinkSigner } from '@app/webhooks';
import { Public } from '../auth/public.decorator';
import { TaskInputService } from '../tasks/task-input.service';
import { ConsolePageFilter } from './console-page.filter';
import { page } from './console-views';
import { answerView } from './task-view';
import { setPageHeaders } from './page-headers';
import { Question } from './question-form';
import { Gone, InvalidArguments, MalformedRequest, NotFound } from '../refusals/refusal';
import { pointerToken } from '../http/json-pointer';

const INVALID = 'This answer link is not valid.';

/**
 * Answer links (docs/console.md, "Answer links"): a signed token from a `task.input_required`
 * event opens that task's open questions among those it names, without an API key, until it
 * expires, the questions are answered, or the task stops waiting. The page shows the toolset's
 * name and the questions, nothing else of the task; answers take the same durable path as
 * `POST /v1/…/input` (the same 202, 409 and 422), acting for the task's owner.
 */
@ApiExcludeController()
@Public()
@Controller('console/answer')
export class AnswerLinkController {
  private readonly signer?: AnswerLinkSigner;

  constructor(
    @Inject(SETTINGS) settings: Settings,
    private readonly tasks: TaskRepository,
    private readonly inputs: TaskInputService,
  ) {
    const { publicBaseUrl, answerLinkKeys } = settings.console;
    if (publicBaseUrl && answerLinkKeys.length > 0)
      this.signer = new AnswerLinkSigner(answerLinkKeys);
  }

  @Get()
  @UseFilters(ConsolePageFilter)
  async open(@Query('token') token: unknown, @Res() res: Response): Promise<void> {
    const { row, keys } = await this.grantedTask(token);
    const open = inputRequiredView(row)?.requests ?? {};
    const questions = keys.map((key): [string, Question] => [key, open[key]]);
    setPageHeaders(res);
    res
      .status(200)
      .type('text/html')
      .send(page('Questions', null, answerView(row.toolset, token as string, questions)));
  }

  @Post()
  @HttpCode(202)
  async answer(@Body() body: unknown): Promise<{ status: string; open: string[] }> {
    const { token, responses } = (body ?? {}) as { token?: unknown; responses?: unknown };
    const { row, keys } = await this.grantedTask(token);
    if (isRecord(responses)) {
      const outside = Object.keys(responses).filter((key) => !keys.includes(key));
      if (outside.length > 0) {
        throw new InvalidArguments('Some answers do not fit.', [
          {
            path: `/responses/${pointerToken(outside[0])}`,
            message: 'is not a question of this link',
          },
        ]);
      }
    }
    const task = await this.inputs.answer(row.userId, row.threadId, row.id, { responses });
    const stillOpen = Object.keys(task.input_required?.requests ?? {});
    return { status: 'stored', open: keys.filter((key) => stillOpen.includes(key)) };
  }

  /**
   * The task a token grants and the granted questions still open, or the problem: 404 for a
   * token that is not ours (malformed, changed, signed by a key we do not hold, links off), 410
   * once it expired or nothing it names is open any more.
   */
  private async grantedTask(token: unknown): Promise<{ row: TaskRow; keys: string[] }> {
    if (typeof token !== 'string' || token.length === 0) {
      throw new MalformedRequest(INVALID, [
        { path: 'token', message: 'is required: the token of an answer link' },
      ]);
    }
    const grant: AnswerGrant | 'invalid' | 'expired' = this.signer
      ? this.signer.verify(token, Math.floor(Date.now() / 1000))
      : 'invalid';
    if (grant === 'invalid') throw new NotFound(INVALID);
    if (grant === 'expired') throw new Gone('This answer link has expired.');
    const row = await this.tasks.findById(grant.taskId);
    if (!row) throw new NotFound(INVALID);
    const open = inputRequiredView(row)?.requests ?? {};
    const keys = grant.keys.filter((key) => key in open);
    const waiting =
      row.status === TaskStatus.InputRequired &&
      row.cancelRequestedAt === null &&
      acceptsAnswers(row);
    if (!waiting || keys.length === 0) {
      throw new Gone('These questions are answered or no longer asked.');
    }
    return { row, keys };
  }
}
