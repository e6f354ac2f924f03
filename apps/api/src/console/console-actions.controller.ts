import { Body, Controller, Delete, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { STREAM_START } from '@app/persistence';
import { toEventView } from '@app/views';
import { AdminController } from '../admin/admin.controller';
import { unauthorized } from '../auth/bearer-first.middleware';
import { Public } from '../auth/public.decorator';
import { EventStreams } from '../events/event-streams.service';
import { TaskIdPipe, ThreadIdPipe } from '../tasks/id-params.pipe';
import { TaskInputService } from '../tasks/task-input.service';
import { TaskQueryService } from '../tasks/task-query.service';
import { ConsoleSession, ConsoleSessions } from './console-session.service';

/** What a console change answers: the status and outcome, never more of the task than the API. */
interface Changed {
  status: string;
}

/**
 * The console's JSON routes: sign-in and sign-out, and the changes a page makes, each through
 * the service the API's own route uses (cancel, answers, operator commands), so the same rules
 * and the same problems (202, 409, 422 …) apply. Every change needs the session cookie and the
 * page's CSRF token; answers to problems are the API's `application/problem+json`.
 */
@ApiExcludeController()
@Public()
@Controller('console')
export class ConsoleActionsController {
  constructor(
    private readonly sessions: ConsoleSessions,
    private readonly query: TaskQueryService,
    private readonly inputs: TaskInputService,
    private readonly admin: AdminController,
    private readonly streams: EventStreams,
  ) {}

  @Post('session')
  @HttpCode(204)
  async signIn(
    @Body() body: unknown,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<void> {
    await this.sessions.signIn(body, req, res);
  }

  @Delete('session')
  @HttpCode(204)
  async signOut(@Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<void> {
    const session = await this.change(req);
    await this.sessions.signOut(session, req, res);
  }

  @Post('api/threads/:thread_id/tasks/:task_id/cancel')
  @HttpCode(202)
  async cancel(
    @Req() req: Request,
    @Param('thread_id', ThreadIdPipe) threadId: string,
    @Param('task_id', TaskIdPipe) taskId: string,
  ): Promise<Changed> {
    const session = await this.change(req);
    const task = await this.query.cancel(session.userId, threadId, taskId);
    return { status: task.status };
  }

  /** The same durable path as `POST /v1/…/input`: the same 202, 409 and 422. */
  @Post('api/threads/:thread_id/tasks/:task_id/input')
  @HttpCode(202)
  async answer(
    @Req() req: Request,
    @Param('thread_id', ThreadIdPipe) threadId: string,
    @Param('task_id', TaskIdPipe) taskId: string,
    @Body() body: unknown,
  ): Promise<Changed & { open: string[] }> {
    const session = await this.change(req);
    const task = await this.inputs.answer(session.userId, threadId, taskId, body);
    return { status: task.status, open: Object.keys(task.input_required?.requests ?? {}) };
  }

  /**
   * The task's events, live, from the thread's event log (the stream `/v1/…/events` serves),
   * passing over the thread's other tasks. Counts against the user's open streams like it.
   */
  @Get('api/threads/:thread_id/tasks/:task_id/events')
  async stream(
    @Req() req: Request,
    @Res() res: Response,
    @Param('thread_id', ThreadIdPipe) threadId: string,
    @Param('task_id', TaskIdPipe) taskId: string,
  ): Promise<void> {
    const session = await this.sessions.find(req);
    if (!session) throw unauthorized();
    const refusal = await this.streams.serve(res, {
      userId: session.userId,
      threadId,
      cursor: STREAM_START,
      reverify: () => this.sessions.stillLive(session),
      frame: (event, id, scope) => {
        if (event.taskId !== taskId) return null;
        const view = toEventView(event, scope);
        return `id: ${id}\nevent: ${view.type}\ndata: ${JSON.stringify(view)}\n\n`;
      },
    });
    if (refusal) throw refusal;
  }

  // The operator commands go through the admin routes' own handlers: the same ADMIN_USERS check,
  // validation, fencing (409 while a poller holds the task) and operator-log row.

  @Post('api/admin/tasks/:task_id/redrive')
  @HttpCode(200)
  async redrive(
    @Req() req: Request,
    @Param('task_id') taskId: string,
    @Body() body: unknown,
  ): Promise<unknown> {
    const session = await this.change(req);
    return this.admin.redrive(session.userId, taskId, body);
  }

  @Post('api/admin/tasks/:task_id/fail')
  @HttpCode(200)
  async fail(
    @Req() req: Request,
    @Param('task_id') taskId: string,
    @Body() body: unknown,
  ): Promise<unknown> {
    const session = await this.change(req);
    return this.admin.fail(session.userId, taskId, body);
  }

  @Post('api/admin/webhook-deliveries/:id/replay')
  @HttpCode(200)
  async replay(
    @Req() req: Request,
    @Param('id') id: string,
    @Body() body: unknown,
  ): Promise<unknown> {
    const session = await this.change(req);
    return this.admin.replay(session.userId, id, body);
  }

  /** A change's session: signed in (else 401) and carrying the page's CSRF token (else 403). */
  private async change(req: Request): Promise<ConsoleSession> {
    const session = await this.sessions.find(req);
    if (!session) throw unauthorized();
    this.sessions.checkCsrf(session, req);
    return session;
  }
}
