import { ConfigError } from '@app/common';

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Replaces `${VAR}` in every string of a parsed JSON value. Object keys are left alone.
 * The error for a missing variable names the variable and where it was used.
 */
export function interpolateEnv(value: unknown, env: NodeJS.ProcessEnv, path = ''): unknown {
  if (typeof value === 'string') {
    return value.replace(REFERENCE, (_match, name: string) => {
      const replacement = env[name];
      if (replacement === undefined) {
        throw new ConfigError(
          `mcpServers file: ${path || 'value'} references \${${name}}, which is not set`,
        );
      }
      return replacement;
    });
  }
  if (Array.isArray(value))
    return value.map((item, i) => interpolateEnv(item, env, `${path}[${i}]`));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] = interpolateEnv(item, env, path ? `${path}.${key}` : key);
    }
    return out;
  }
  return value;
}
