import { Controller, Get, Inject } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { Settings, SETTINGS } from '@app/config';
import { CatalogRepository, WorkerRepository } from '@app/persistence';
import { ApiProblems } from '../problem/api-problems.decorator';

export class StatusDto {
  @ApiProperty({
    enum: ['ok', 'degraded'],
    description: 'degraded when no poller is alive or a toolset is unavailable',
  })
  status!: 'ok' | 'degraded';
  @ApiProperty({ description: 'Pollers whose heartbeat is recent (within 3 intervals)' })
  pollers_alive!: number;
  @ApiProperty() toolsets_total!: number;
  @ApiProperty() toolsets_available!: number;
}

/** The gateway as a consumer sees it: can submitted work make progress now? */
@ApiTags('status')
@ApiBearerAuth()
@Controller('v1/status')
export class StatusController {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly workers: WorkerRepository,
    private readonly catalog: CatalogRepository,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Pollers alive and toolsets available' })
  @ApiOkResponse({ type: StatusDto })
  @ApiProblems(401)
  async status(): Promise<StatusDto> {
    const [alive, toolsets] = await Promise.all([
      this.workers.countAlive(this.settings.worker.deadAfterMs),
      this.catalog.list(),
    ]);
    const available = toolsets.filter((t) => t.available).length;
    return {
      status: alive > 0 && available === toolsets.length ? 'ok' : 'degraded',
      pollers_alive: alive,
      toolsets_total: toolsets.length,
      toolsets_available: available,
    };
  }
}
