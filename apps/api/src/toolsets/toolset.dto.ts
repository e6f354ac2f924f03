import { ApiProperty } from '@nestjs/swagger';
import { Contract } from '@app/common';
import type { ToolsetView } from './toolset-catalog.service';

/** OpenAPI shape of a catalog entry (built by toToolsetView). */
export class ToolsetDto implements ToolsetView {
  @ApiProperty({ example: 'demo-ordinary' })
  name!: string;
  @ApiProperty({ description: "The upstream tool's own description, plus the contract" })
  description!: string;
  @ApiProperty({ enum: Contract, description: 'How the gateway drives the upstream' })
  contract!: Contract;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'JSON Schema that submitted arguments must satisfy',
  })
  input_schema!: Record<string, unknown>;
  @ApiProperty({ description: 'Whether a poller can run it now; tasks are accepted either way' })
  available!: boolean;
  @ApiProperty({ type: String, nullable: true })
  unavailable_reason!: string | null;
}

export class ToolsetListDto {
  @ApiProperty({ type: [ToolsetDto] })
  items!: ToolsetDto[];
}
