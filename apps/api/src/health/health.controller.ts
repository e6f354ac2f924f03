import { BeforeApplicationShutdown, Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { GATEWAY_VERSION } from '@app/common';
import { Database } from '@app/persistence';
import { Public } from '../auth/public.decorator';
import { ApiProblems } from '../problem/api-problems.decorator';
import { PROBLEM_KINDS } from '../problem/problem-kinds';
import { DrainState } from './drain-state';
import { NotReady } from '../refusals/refusal';

/** What `GET /healthz` answers: the process is up, and which release it runs. */
class HealthDto {
  @ApiProperty({ example: 'ok' })
  status!: string;

  @ApiProperty({
    description: "The gateway's version: package.json's, as the changelog names it",
    example: '0.1.0',
  })
  version!: string;
}

/**
 * `/healthz` (the version, no I/O), liveness (no I/O) and readiness (a database ping; 503 from the shutdown signal on, through
 * SHUTDOWN_DELAY_MS while the other routes still serve, until the process exits).
 */
@ApiTags('health')
@Public()
@Controller('healthz')
export class HealthController implements BeforeApplicationShutdown {
  constructor(
    private readonly db: Database,
    private readonly drain: DrainState,
  ) {}

  @Get()
  @ApiOperation({ summary: 'The process answers, and the version it runs (no I/O)' })
  @ApiOkResponse({ type: HealthDto })
  health(): HealthDto {
    return { status: 'ok', version: GATEWAY_VERSION };
  }

  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process answers (no I/O)' })
  @ApiOkResponse({ description: '{"status":"ok"}' })
  live(): { status: string } {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({
    summary: 'Readiness: the database answers within 2 s and takes writes; 503 while draining',
  })
  @ApiOkResponse({ description: '{"status":"ok"}' })
  @ApiProblems(PROBLEM_KINDS.notReady)
  async ready(): Promise<{ status: string }> {
    if (this.drain.draining) throw new NotReady('The replica is draining.');
    const database = await this.db.health();
    if (database === 'unreachable') throw new NotReady('The database does not answer.');
    if (database === 'read-only') throw new NotReady('The database takes no writes.');
    return { status: 'ok' };
  }

  /** Also for a close without the signal (the shutdown hooks of an embedding process). */
  beforeApplicationShutdown(): void {
    this.drain.start();
  }
}
