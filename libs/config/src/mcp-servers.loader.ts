import { readFileSync } from 'node:fs';
import { ConfigError } from '@app/common';
import { interpolateEnv } from './interpolate';
import { McpServersConfig } from './mcp-servers.types';
import { validateServers } from './mcp-servers.validator';

/**
 * Reads and validates an `mcpServers` file. `${VAR}` references are replaced from `env`;
 * a missing one is an error naming the variable. Messages name the server and field, never
 * a value, so an interpolated secret cannot leak through an error or a log.
 */
export function loadMcpServersFile(
  path: string,
  env: NodeJS.ProcessEnv,
  leaseMs: number,
): McpServersConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new ConfigError(`MCP_SERVERS_FILE: cannot read the file (${code})`);
  }
  return parseMcpServers(text, env, leaseMs);
}

export function parseMcpServers(
  text: string,
  env: NodeJS.ProcessEnv,
  leaseMs: number,
): McpServersConfig {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    // The parser's message can quote the text around the error, which may hold a secret.
    const position = /position (\d+)/.exec((error as Error).message)?.[1];
    throw new ConfigError(
      `mcpServers file: not valid JSON${position ? ` (at character ${position})` : ''}`,
    );
  }
  return validateServers(interpolateEnv(json, env), leaseMs);
}
