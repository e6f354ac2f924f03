import { Module } from '@nestjs/common';
import { ToolsetCatalog } from './toolset-catalog.service';
import { ToolsetsController } from './toolsets.controller';

/**
 * The toolsets the fleet publishes (`GET /v1/toolsets`). ToolsetCatalog is exported: submits
 * validate against it, `/mcp` lists its tools, and the console names them, all from one cache.
 */
@Module({
  controllers: [ToolsetsController],
  providers: [ToolsetCatalog],
  exports: [ToolsetCatalog],
})
export class ToolsetsModule {}
