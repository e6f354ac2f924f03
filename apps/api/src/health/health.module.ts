import { Module } from '@nestjs/common';
import { DrainState } from './drain-state';
import { HealthController } from './health.controller';
import { HeldRequests } from './held-requests';

/**
 * The process's own health (`/healthz`, live and ready) and its drain at shutdown: the drain
 * state the probes answer from, and the registry of held requests (`Prefer: wait`, held `/mcp`
 * calls) that the drain ends. HeldRequests is exported: the task and front-door services hold
 * through it, and it must be the one instance the shutdown drains.
 */
@Module({
  controllers: [HealthController],
  providers: [DrainState, HeldRequests],
  exports: [DrainState, HeldRequests],
})
export class HealthModule {}
