import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { TASK_ID_PATTERN } from '@app/common';
import { Settings, SETTINGS } from '@app/config';
import {
  DeadDeliveryRow,
  OperatorActionRow,
  OperatorRepository,
  OperatorResult,
  StuckTaskRow,
} from '@app/persistence';
import { CurrentUser } from '../auth/current-user.decorator';
import { ApiProblems } from '../problem/api-problems.decorator';
import {
  Forbidden,
  InvalidArguments,
  MalformedRequest,
  NotFound,
  OperatorConflict,
  Refusal,
} from '../refusals/refusal';

const STATUSES = new Set(['queued', 'working', 'input_required']);
const DELIVERY_ID = /^[1-9][0-9]{0,17}$/;
const MAX_REASON_CHARS = 1000;
const FORBIDDEN = [403, 'The caller is not in ADMIN_USERS'] as const;
const REFUSED = [
  409,
  'Refused: a poller holds a live lease on the task, or it is already terminal, or the delivery is not dead-lettered',
] as const;
const INVALID_BODY = [422, 'Invalid body: the reason (its path listed)'] as const;
/** `limit` of the admin lists: a non-negative integer, 50 when absent. */
const LIMIT_QUERY = ApiQuery({
  name: 'limit',
  required: false,
  schema: { type: 'integer', minimum: 0, default: 50 },
});

/** The answer to an operator write: what happened and the action log row recording it. */
interface ActionAnswer {
  outcome: string;
  detail: string | null;
  action_id: string;
}

/**
 * The operator commands of `npm run admin` as HTTP routes (docs/operations.md, "Operator
 * commands"), for principals listed in ADMIN_USERS only; every other caller gets 403. Writes
 * are fenced (refused with 409 while a poller holds a live lease) and recorded with the caller
 * as actor.
 */
@ApiTags('admin')
@ApiBearerAuth()
@Controller('v1/admin')
export class AdminController {
  private readonly admins: ReadonlySet<string>;

  constructor(
    private readonly operator: OperatorRepository,
    @Inject(SETTINGS) settings: Settings,
  ) {
    this.admins = new Set(settings.auth.adminUsers);
  }

  @Get('stuck-tasks')
  @ApiOperation({ summary: 'Non-terminal tasks older than older_than_seconds (default 300)' })
  @ApiOkResponse({ description: '{"items": [...]}' })
  @ApiQuery({ name: 'status', required: false, enum: [...STATUSES] })
  @ApiQuery({
    name: 'server',
    required: false,
    schema: { type: 'string' },
    description: 'Only tasks of this upstream server',
  })
  @ApiQuery({
    name: 'older_than_seconds',
    required: false,
    schema: { type: 'integer', minimum: 0, default: 300 },
  })
  @LIMIT_QUERY
  @ApiProblems(400, 401, FORBIDDEN)
  async stuck(
    @CurrentUser() user: string,
    @Query('status') status?: unknown,
    @Query('server') server?: unknown,
    @Query('older_than_seconds') olderThan?: unknown,
    @Query('limit') limit?: unknown,
  ): Promise<{ items: StuckTaskRow[] }> {
    this.mustBeAdmin(user);
    const wanted = once('status', status);
    if (wanted !== undefined && !STATUSES.has(wanted)) {
      throw malformed('status', 'must be queued, working or input_required');
    }
    const items = await this.operator.listStuck({
      status: wanted,
      server: once('server', server),
      olderThanSeconds: intParam('older_than_seconds', olderThan, 300),
      limit: intParam('limit', limit, 50),
    });
    return { items };
  }

  @Post('tasks/:task_id/redrive')
  @HttpCode(200)
  @ApiOperation({ summary: 'Make a task due now (409 while a poller holds it)' })
  @ApiOkResponse({ description: '{"outcome": "ok", "action_id": "…"}' })
  @ApiProblems(400, 401, FORBIDDEN, 404, REFUSED, INVALID_BODY)
  async redrive(
    @CurrentUser() user: string,
    @Param('task_id') taskId: string,
    @Body() body: unknown,
  ): Promise<ActionAnswer> {
    this.mustBeAdmin(user);
    const reason = reasonOf(body, false);
    return answer(await this.operator.redrive(actor(user), taskIdOf(taskId), reason));
  }

  @Post('tasks/:task_id/fail')
  @HttpCode(200)
  @ApiOperation({ summary: 'End a task failed_by_operator (409 while a poller holds it)' })
  @ApiOkResponse({ description: '{"outcome": "ok", "action_id": "…"}' })
  @ApiProblems(400, 401, FORBIDDEN, 404, REFUSED, INVALID_BODY)
  async fail(
    @CurrentUser() user: string,
    @Param('task_id') taskId: string,
    @Body() body: unknown,
  ): Promise<ActionAnswer> {
    this.mustBeAdmin(user);
    const reason = reasonOf(body, true) ?? '';
    return answer(await this.operator.forceFail(actor(user), taskIdOf(taskId), reason));
  }

  @Get('dead-letters')
  @ApiOperation({ summary: 'Dead-lettered webhook deliveries, newest first' })
  @ApiOkResponse({ description: '{"items": [...]}' })
  @LIMIT_QUERY
  @ApiProblems(400, 401, FORBIDDEN)
  async deadLetters(
    @CurrentUser() user: string,
    @Query('limit') limit?: unknown,
  ): Promise<{ items: DeadDeliveryRow[] }> {
    this.mustBeAdmin(user);
    return { items: await this.operator.listDeadDeliveries(intParam('limit', limit, 50)) };
  }

  @Post('webhook-deliveries/:id/replay')
  @HttpCode(200)
  @ApiOperation({ summary: 'Queue a dead-lettered delivery again, due now' })
  @ApiOkResponse({ description: '{"outcome": "ok", "action_id": "…"}' })
  @ApiProblems(400, 401, FORBIDDEN, 404, REFUSED, INVALID_BODY)
  async replay(
    @CurrentUser() user: string,
    @Param('id') id: string,
    @Body() body: unknown,
  ): Promise<ActionAnswer> {
    this.mustBeAdmin(user);
    if (!DELIVERY_ID.test(id)) throw malformed('id', 'must be a delivery ID (a positive integer)');
    return answer(await this.operator.replayDelivery(actor(user), id, reasonOf(body, false)));
  }

  @Get('actions')
  @ApiOperation({ summary: 'The operator action log, newest first' })
  @ApiOkResponse({ description: '{"items": [...]}' })
  @LIMIT_QUERY
  @ApiProblems(400, 401, FORBIDDEN)
  async actions(
    @CurrentUser() user: string,
    @Query('limit') limit?: unknown,
  ): Promise<{ items: OperatorActionRow[] }> {
    this.mustBeAdmin(user);
    return { items: await this.operator.listActions(intParam('limit', limit, 50)) };
  }

  private mustBeAdmin(user: string): void {
    if (!this.admins.has(user)) {
      throw new Forbidden('Admin routes are for the principals in ADMIN_USERS.');
    }
  }
}

function actor(user: string): { name: string; via: 'api' } {
  return { name: user, via: 'api' };
}

function answer(result: OperatorResult): ActionAnswer {
  const body = { outcome: result.outcome, detail: result.detail, action_id: result.actionId };
  if (result.outcome === 'not_found') throw new NotFound('No such task or delivery.');
  if (result.outcome !== 'ok') {
    throw new OperatorConflict(`Refused (${result.outcome}): ${result.detail ?? ''}`.trim());
  }
  return body;
}

function taskIdOf(value: string): string {
  if (!TASK_ID_PATTERN.test(value)) throw malformed('task_id', 'must be a task ID');
  return value;
}

function reasonOf(body: unknown, required: boolean): string | null {
  const reason =
    body !== null && typeof body === 'object' ? (body as { reason?: unknown }).reason : undefined;
  if (reason === undefined && !required) return null;
  if (typeof reason !== 'string' || reason.length === 0 || reason.length > MAX_REASON_CHARS) {
    throw new InvalidArguments('Invalid /reason.', [
      {
        path: '/reason',
        message: `must be a string of 1 to ${MAX_REASON_CHARS} characters`,
      },
    ]);
  }
  return reason;
}

function intParam(name: string, value: unknown, fallback: number): number {
  const text = once(name, value);
  if (text === undefined) return fallback;
  if (!/^[0-9]{1,9}$/.test(text)) throw malformed(name, 'must be a non-negative integer');
  return Number(text);
}

/**
 * A query parameter given at most once: Express reads a repeated one (`?server=a&server=b`) as
 * an array, which is refused rather than read as one value (docs/api.md, "Errors").
 */
function once(name: string, value: unknown): string | undefined {
  if (value === undefined || typeof value === 'string') return value;
  throw malformed(name, 'must be given once');
}

/** A malformed query or path parameter: a 400, as on every other route (docs/api.md). */
function malformed(path: string, message: string): Refusal {
  return new MalformedRequest(`Invalid ${path}.`, [{ path, message }]);
}
