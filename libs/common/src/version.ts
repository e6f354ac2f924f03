import { version } from '../../../package.json';

/**
 * The gateway's version: `version` of the repository's package.json, the one place it is
 * written. Compiled in (esbuild inlines the JSON into each bundle), so a process reports the
 * version it was built from: `GET /healthz`, every command's `--version`, the MCP server and
 * client info. The image's OCI labels take the same value as a build argument (Dockerfile).
 */
export const GATEWAY_VERSION: string = version;
