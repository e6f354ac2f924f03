import {
  Controller,
  Get,
  BeforeApplicationShutdown,
  ServiceUnavailableException,
} from '@nestjs/common';
import { DataSource } from 'typeorm';

/** Database ping deadline: readiness must answer before the kubelet's probe timeout. */
const READY_TIMEOUT_MS = 2000;

/** Liveness (no I/O) and readiness (a database ping; 503 while draining). */
@Controller('healthz')
export class HealthController implements BeforeApplicationShutdown {
  private draining = false;

  constructor(private readonly dataSource: DataSource) {}

  @Get('live')
  live(): { status: string } {
    return { status: 'ok' };
  }

  @Get('ready')
  async ready(): Promise<{ status: string }> {
    if (this.draining) throw new ServiceUnavailableException('draining');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), READY_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.dataSource.query('SELECT 1'), timeout]);
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
