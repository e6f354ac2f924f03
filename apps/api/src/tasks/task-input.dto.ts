import { ApiProperty } from '@nestjs/swagger';
import { InputRequiredView } from '@app/views';

// OpenAPI shapes only: answers to a task's questions (docs/api.md, "Answering a question").

type InputRequestView = InputRequiredView['requests'][string];

/** One open question, as the upstream asked it. */
export class InputRequestDto implements InputRequestView {
  @ApiProperty({
    description: 'The kind of question: elicitation/create, sampling/createMessage, roots/list',
    example: 'elicitation/create',
  })
  method!: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The question itself; for elicitation/create: mode, message, requestedSchema',
    example: {
      mode: 'form',
      message: 'Go ahead?',
      requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } } },
    },
  })
  params!: Record<string, unknown>;
}

/** The task's open questions, the same shape for every contract. */
export class InputRequiredDto implements InputRequiredView {
  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/InputRequestDto' },
    description: "Open questions by key; a key names one question for the task's life",
  })
  requests!: Record<string, InputRequestDto>;
}

/** The body of POST …/input. */
export class AnswerInputDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'Answers by question key: each the result of its request, for elicitation/create ' +
      '{action: accept | decline | cancel, content?} with content fitting requestedSchema',
    example: { confirm: { action: 'accept', content: { confirm: true } } },
  })
  responses!: Record<string, unknown>;
}
