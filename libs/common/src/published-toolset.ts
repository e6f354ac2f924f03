import type { Contract } from './task.enums';
import type { McpExposure } from './mcp-exposure';

/**
 * A toolset as a poller publishes it: its own view, before the fleet-wide removal mark. The
 * drivers build it and the catalog stores it, so it lives here rather than in either.
 */
export interface PublishedToolset {
  name: string;
  server: string;
  contract: Contract;
  description: string;
  inputSchema: Record<string, unknown>;
  available: boolean;
  unavailableReason: string | null;
  /** The toolset's MCP front-door exposure (defaults when the publisher gave none). */
  mcp?: McpExposure;
  /** Each task's maximum lifetime from submit, in seconds (`deadlineSeconds`); absent = none. */
  deadlineSeconds?: number | null;
}
