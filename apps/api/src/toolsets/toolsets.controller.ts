import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiProblems } from '../problem/api-problems.decorator';
import { ToolsetListDto } from './toolset.dto';
import { ToolsetCatalog, ToolsetView } from './toolset-catalog.service';

/** The catalog of toolsets, as the pollers last published it. */
@ApiTags('toolsets')
@ApiBearerAuth()
@Controller('v1/toolsets')
export class ToolsetsController {
  constructor(private readonly catalog: ToolsetCatalog) {}

  @Get()
  @ApiOperation({ summary: 'The toolsets you can submit to, with their input schemas' })
  @ApiOkResponse({ type: ToolsetListDto })
  @ApiProblems(401)
  async list(): Promise<{ items: ToolsetView[] }> {
    return { items: await this.catalog.list() };
  }
}
