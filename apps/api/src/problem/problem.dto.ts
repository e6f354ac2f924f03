import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PROBLEM_KINDS, problemType } from './problem-kinds';

/** OpenAPI shape of one failing location. */
export class ProblemFieldErrorDto {
  @ApiProperty({
    description:
      'Where: a JSON Pointer into the body (`/arguments/count`), a query parameter name, or a header name',
    example: '/arguments/count',
  })
  path!: string;

  @ApiProperty({ description: 'What is wrong there', example: 'must be integer' })
  message!: string;
}

/** OpenAPI shape of every error body (RFC 9457, `application/problem+json`). */
export class ProblemDto {
  @ApiProperty({
    description:
      'A URI naming the kind of problem, one per cause (docs/api.md, "Problem types"); branch on it, not on `detail`',
    enum: Object.values(PROBLEM_KINDS).map(problemType),
    example: 'https://mcp-task-gateway.dev/problems/validation',
  })
  type!: string;

  @ApiProperty({
    description: 'Short summary of the kind, fixed per type',
    example: 'Validation failed',
  })
  title!: string;

  @ApiProperty({ description: 'The HTTP status', example: 422 })
  status!: number;

  @ApiProperty({
    description: 'This occurrence, in words; never a stack trace, a secret or an upstream ID',
    example: "The arguments do not match the toolset's input schema.",
  })
  detail!: string;

  @ApiPropertyOptional({
    type: [ProblemFieldErrorDto],
    description: 'Each failing location, for 400 and 422',
  })
  errors?: ProblemFieldErrorDto[];

  @ApiPropertyOptional({
    enum: ['active_tasks', 'submits_per_minute'],
    description: 'For 429: the quota that refused the submit',
    example: 'submits_per_minute',
  })
  quota?: string;

  @ApiPropertyOptional({
    description: 'For 429: seconds to wait before trying again (as the Retry-After header)',
    example: 6,
    minimum: 1,
  })
  retry_after_seconds?: number;
}
