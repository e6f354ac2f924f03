import { COMPANION_TOOL_NAMES } from '@app/common';

export { companionStartName } from '@app/common';

/**
 * The companion tools (docs/mcp.md): plain tools for clients without task support. One start
 * tool per toolset that turns them on, and these shared ones, which act on the caller's tasks.
 */
export const COMPANION_TOOLS = {
  get: {
    name: COMPANION_TOOL_NAMES.get,
    description:
      'Reads one of your gateway tasks: its status, and its result once it has ended, or the questions it waits on.',
    inputSchema: taskIdSchema(),
  },
  answer: {
    name: COMPANION_TOOL_NAMES.answer,
    description:
      'Answers the questions a gateway task waits on (status input_required): responses keyed as the task lists them.',
    inputSchema: {
      type: 'object',
      properties: {
        task_id: { type: 'string', description: 'The task ID a start tool returned.' },
        responses: { type: 'object', description: 'One response per question key.' },
      },
      required: ['task_id', 'responses'],
      additionalProperties: false,
    },
  },
  cancel: {
    name: COMPANION_TOOL_NAMES.cancel,
    description: 'Asks the gateway to cancel one of your tasks (durable; the task ends later).',
    inputSchema: taskIdSchema(),
  },
  list: {
    name: COMPANION_TOOL_NAMES.list,
    description: 'Lists your gateway tasks, newest first (at most 50), with their status.',
    inputSchema: {
      type: 'object',
      properties: {
        status: {
          type: 'string',
          enum: ['active', 'terminal'],
          description: 'Only running or only ended tasks.',
        },
      },
      additionalProperties: false,
    },
  },
} as const;

function taskIdSchema(): Record<string, unknown> {
  return {
    type: 'object',
    properties: { task_id: { type: 'string', description: 'The task ID a start tool returned.' } },
    required: ['task_id'],
    additionalProperties: false,
  };
}
