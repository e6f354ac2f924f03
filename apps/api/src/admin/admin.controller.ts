import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
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
const INVALID = [422, 'Invalid parameter or body (each path listed)'] as const;

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
  @ApiProblems(401, FORBIDDEN, INVALID)
  async stuck(
    @CurrentUser() user: string,
    @Query('status') status?: string,
    @Query('server') server?: string,
    @Query('older_than_seconds') olderThan?: string,
    @Query('limit') limit?: string,
  ): Promise<{ items: StuckTaskRow[] }> {
    this.mustBeAdmin(user);
    if (status !== undefined && !STATUSES.has(status)) {
      throw invalid('status', 'must be queued, working or input_required');
    }
    const items = await this.operator.listStuck({
      status,
      server,
      olderThanSeconds: intParam('older_than_seconds', olderThan, 300),
      limit: intParam('limit', limit, 50),
    });
    return { items };
  }

  @Post('tasks/:task_id/redrive')
  @HttpCode(200)
  @ApiOperation({ summary: 'Make a task due now (409 while a poller holds it)' })
  @ApiOkResponse({ description: '{"outcome": "ok", "action_id": "…"}' })
  @ApiProblems(401, FORBIDDEN, 404, REFUSED, INVALID)
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
  @ApiProblems(401, FORBIDDEN, 404, REFUSED, INVALID)
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
  @ApiProblems(401, FORBIDDEN, INVALID)
  async deadLetters(
    @CurrentUser() user: string,
    @Query('limit') limit?: string,
  ): Promise<{ items: DeadDeliveryRow[] }> {
    this.mustBeAdmin(user);
    return { items: await this.operator.listDeadDeliveries(intParam('limit', limit, 50)) };
  }

  @Post('webhook-deliveries/:id/replay')
  @HttpCode(200)
  @ApiOperation({ summary: 'Queue a dead-lettered delivery again, due now' })
  @ApiOkResponse({ description: '{"outcome": "ok", "action_id": "…"}' })
  @ApiProblems(401, FORBIDDEN, 404, REFUSED, INVALID)
  async replay(
    @CurrentUser() user: string,
    @Param('id') id: string,
    @Body() body: unknown,
  ): Promise<ActionAnswer> {
    this.mustBeAdmin(user);
    if (!DELIVERY_ID.test(id)) throw invalid('id', 'must be a delivery ID (a positive integer)');
    return answer(await this.operator.replayDelivery(actor(user), id, reasonOf(body, false)));
  }

  @Get('actions')
  @ApiOperation({ summary: 'The operator action log, newest first' })
  @ApiOkResponse({ description: '{"items": [...]}' })
  @ApiProblems(401, FORBIDDEN, INVALID)
  async actions(
    @CurrentUser() user: string,
    @Query('limit') limit?: string,
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
  if (!TASK_ID_PATTERN.test(value)) throw invalid('task_id', 'must be a task ID');
  return value;
}

function reasonOf(body: unknown, required: boolean): string | null {
  const reason =
    body !== null && typeof body === 'object' ? (body as { reason?: unknown }).reason : undefined;
  if (reason === undefined && !required) return null;
  if (typeof reason !== 'string' || reason.length === 0 || reason.length > MAX_REASON_CHARS) {
    throw invalid('/reason', `must be a string of 1 to ${MAX_REASON_CHARS} characters`);
  }
  return reason;
}

function intParam(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^[0-9]{1,9}$/.test(value)) throw invalid(name, 'must be a non-negative integer');
  return Number(value);
}

function invalid(path: string, message: string): Refusal {
  return new InvalidArguments(`Invalid ${path}.`, [{ path, message }]);
}
