import {
  Controller,
  Get,
  BeforeApplicationShutdown,
  ServiceUnavailableException,
} from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Database } from '@app/persistence';
import { Public } from '../auth/public.decorator';
import { ApiProblems } from '../problem/api-problems.decorator';

/** Database ping deadline: readiness must answer before the kubelet's probe timeout. */
const READY_TIMEOUT_MS = 2000;

/** Liveness (no I/O) and readiness (a database ping; 503 while draining). */
@ApiTags('health')
@Public()
@Controller('healthz')
export class HealthController implements BeforeApplicationShutdown {
  private draining = false;

  constructor(private readonly db: Database) {}

  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process answers (no I/O)' })
  @ApiOkResponse({ description: '{"status":"ok"}' })
  live(): { status: string } {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({ summary: 'Readiness: the database answers within 2 s; 503 while draining' })
  @ApiOkResponse({ description: '{"status":"ok"}' })
  @ApiProblems(503)
  async ready(): Promise<{ status: string }> {
    if (this.draining) throw new ServiceUnavailableException('draining');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), READY_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.db.query('SELECT 1'), timeout]);
      return { status: 'ok' };
    } catch {
      throw new ServiceUnavailableException('database not reachable');
    } finally {
      clearTimeout(timer);
    }
  }

  beforeApplicationShutdown(): void {
    this.draining = true;
  }
}
