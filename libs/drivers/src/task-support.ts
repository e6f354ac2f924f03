import type { TaskProtocolVersion } from '@app/config';
import type { ServerCapabilities, Tool } from '@modelcontextprotocol/sdk/types.js';

/**
 * Why a tool may not be called with `params.task`, or null when it may: the server must
 * advertise `capabilities.tasks.requests.tools.call` and the tool's `execution.taskSupport`
 * must be `optional` or `required`. A task-augmented call to anything else may run the tool and
 * then fail, so this check runs before every submit and in the catalog. On 2026-07-28 the server
 * decides per call (it advertised the extension in `server/discover`), so the tool must only exist.
 */
export function taskSupportProblem(
  toolName: string,
  tools: readonly Tool[] | undefined,
  capabilities: ServerCapabilities | undefined,
  protocol?: TaskProtocolVersion,
): string | null {
  const tool = tools?.find((candidate) => candidate.name === toolName);
  if (!tool) return `tool "${toolName}" is not offered by the server`;
  if (protocol === '2026-07-28') return null;
  if (!capabilities?.tasks?.requests?.tools?.call)
    return 'server does not declare tasks capability';
  const support = tool.execution?.taskSupport;
  if (support !== 'optional' && support !== 'required') {
    return `tool "${toolName}" does not support tasks`;
  }
  return null;
}
