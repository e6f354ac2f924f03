import {
  Controller,
  Get,
  Header,
  Inject,
  Param,
  Query,
  Req,
  Res,
  UseFilters,
} from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { THREAD_ID_PATTERN } from '@app/common';
import { Settings, SETTINGS } from '@app/config';
import { OperatorRepository, TaskRepository } from '@app/persistence';
import { acceptsAnswers } from '@app/views';
import { Public } from '../auth/public.decorator';
import { ProblemFieldError } from '../problem/problem.exception';
import { TaskIdPipe, ThreadIdPipe } from '../tasks/id-params.pipe';
import { TaskPresenter } from '../tasks/task-presenter.service';
import { TaskQueryService } from '../tasks/task-query.service';
import { ToolsetCatalog } from '../toolsets/toolset-catalog.service';
import { CONSOLE_CSS, CONSOLE_JS } from './console-assets';
import { ConsolePageFilter } from './console-page.filter';
import { ConsoleSession, ConsoleSessions } from './console-session.service';
import {
  ListFilters,
  PageContext,
  page,
  signInView,
  taskListView,
  threadListView,
} from './console-views';
import { adminView } from './admin-view';
import { taskView } from './task-view';
import { setPageHeaders } from './page-headers';
import { Forbidden, MalformedRequest, NotFound } from '../refusals/refusal';

const TOOLSET_NAME = /^[A-Za-z0-9_.:-]{1,128}$/;
const THREADS_SHOWN = 100;
const ADMIN_ROWS = 50;
/** A year: the asset URLs carry their content's hash, so a new build is a new URL. */
const ASSET_CACHE = 'public, max-age=31536000, immutable';

/**
 * The console's pages (docs/console.md): server-rendered HTML for a signed-in user, built from
 * the same services as the API's routes (task query and presenter, catalog, operator repository),
 * so a page shows exactly what the API would answer. Outside /v1 and out of the OpenAPI document;
 * the bearer guard passes them (Public) and each page checks the session cookie itself.
 */
@ApiExcludeController()
@Public()
@UseFilters(ConsolePageFilter)
@Controller('console')
export class ConsolePagesController {
  private readonly admins: ReadonlySet<string>;

  constructor(
    @Inject(SETTINGS) settings: Settings,
    private readonly sessions: ConsoleSessions,
    private readonly query: TaskQueryService,
    private readonly tasks: TaskRepository,
    private readonly presenter: TaskPresenter,
    private readonly catalog: ToolsetCatalog,
    private readonly operator: OperatorRepository,
  ) {
    this.admins = new Set(settings.auth.adminUsers);
  }

  @Get()
  root(@Res() res: Response): void {
    res.redirect(303, '/console/tasks');
  }

  @Get('sign-in')
  signIn(@Res() res: Response): void {
    this.send(res, page('Sign in', null, signInView()));
  }

  @Get('tasks')
  async list(
    @Req() req: Request,
    @Res() res: Response,
    @Query() raw: Record<string, unknown>,
  ): Promise<void> {
    const session = await this.session(req, res);
    if (!session) return;
    const filters = listFilters(raw);
    const [list, toolsets] = await Promise.all([
      this.query.list(
        session.userId,
        { status: filters.status, toolset: filters.toolset, cursor: raw.cursor, limit: raw.limit },
        filters.thread,
      ),
      this.catalog.list(),
    ]);
    const names = toolsets.map((t) => t.name);
    const body = taskListView(list.items, filters, names, list.next_cursor);
    this.send(res, page('Tasks', this.context(session), body));
  }

  @Get('threads')
  async threads(@Req() req: Request, @Res() res: Response): Promise<void> {
    const session = await this.session(req, res);
    if (!session) return;
    const threads = await this.tasks.listThreads(session.userId, THREADS_SHOWN);
    this.send(res, page('Threads', this.context(session), threadListView(threads)));
  }

  @Get('threads/:thread_id/tasks/:task_id')
  async task(
    @Req() req: Request,
    @Res() res: Response,
    @Param('thread_id', ThreadIdPipe) threadId: string,
    @Param('task_id', TaskIdPipe) taskId: string,
  ): Promise<void> {
    const session = await this.session(req, res);
    if (!session) return;
    const row = await this.tasks.findForUser(session.userId, taskId, threadId);
    if (!row) throw new NotFound('No such task.');
    const view = await this.presenter.detail(row);
    const body = taskView(view, acceptsAnswers(row));
    this.send(res, page(`Task ${taskId}`, this.context(session), body));
  }

  @Get('admin')
  async admin(@Req() req: Request, @Res() res: Response): Promise<void> {
    const session = await this.session(req, res);
    if (!session) return;
    if (!this.admins.has(session.userId)) {
      throw new Forbidden('The operator view is for the principals in ADMIN_USERS.');
    }
    const [stuck, dead, actions] = await Promise.all([
      this.operator.listStuck({ olderThanSeconds: 300, limit: ADMIN_ROWS }),
      this.operator.listDeadDeliveries(ADMIN_ROWS),
      this.operator.listActions(ADMIN_ROWS),
    ]);
    this.send(res, page('Operators', this.context(session), adminView(stuck, dead, actions)));
  }

  @Get('assets/console.js')
  @Header('Content-Type', 'text/javascript; charset=utf-8')
  @Header('Cache-Control', ASSET_CACHE)
  @Header('X-Content-Type-Options', 'nosniff')
  script(): string {
    return CONSOLE_JS;
  }

  @Get('assets/console.css')
  @Header('Content-Type', 'text/css; charset=utf-8')
  @Header('Cache-Control', ASSET_CACHE)
  @Header('X-Content-Type-Options', 'nosniff')
  style(): string {
    return CONSOLE_CSS;
  }

  /** The session, or null after redirecting to the sign-in page (which returns here after). */
  private async session(req: Request, res: Response): Promise<ConsoleSession | null> {
    const session = await this.sessions.find(req);
    if (!session) {
      const next = new URLSearchParams({ next: req.originalUrl }).toString();
      res.redirect(303, `/console/sign-in?${next}`);
    }
    return session;
  }

  private context(session: ConsoleSession): PageContext {
    return {
      userId: session.userId,
      csrfToken: session.csrfToken,
      isAdmin: this.admins.has(session.userId),
    };
  }

  private send(res: Response, body: string): void {
    setPageHeaders(res);
    res.status(200).type('text/html').send(body);
  }
}

/** The list's own filters (status is checked by the API's list query). */
function listFilters(raw: Record<string, unknown>): ListFilters {
  const errors: ProblemFieldError[] = [];
  const text = (name: string, pattern: RegExp, rule: string): string | undefined => {
    const value = raw[name];
    if (value === undefined || value === '') return undefined;
    if (typeof value === 'string' && pattern.test(value)) return value;
    errors.push({ path: name, message: rule });
    return undefined;
  };
  const filters: ListFilters = {
    toolset: text('toolset', TOOLSET_NAME, 'must be a toolset name'),
    thread: text('thread', THREAD_ID_PATTERN, 'must match ^[A-Za-z0-9._:-]{1,128}$'),
    status: raw.status === '' ? undefined : (raw.status as string | undefined),
  };
  if (errors.length > 0) throw new MalformedRequest('Invalid query parameters.', errors);
  return filters;
}
