import {
  COMPANION_TOOL_NAMES,
  Contract,
  ConfigError,
  MCP_CLIENT_CANCELS,
  MCP_TASK_MODES,
  MCP_TOOL_NAME_PATTERN,
  McpExposure,
  companionStartName,
  defaultMcpExposure,
} from '@app/common';
import { checkAttemptChains } from './attempt-chains';
import { FieldReader } from './field-reader';
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  McpServersConfig,
  ServerConfig,
  TASK_PROTOCOL_VERSIONS,
  ToolsetConfig,
  TransportKind,
} from './mcp-servers.types';

const SERVER_KEYS = [
  'command',
  'args',
  'env',
  'cwd',
  'url',
  'transport',
  'headers',
  'oauth',
  'connectTimeoutMs',
  'callTimeoutMs',
  'maxConcurrentCalls',
  'fleetMaxConcurrentCalls',
  'keepaliveIntervalMs',
  'maxMessageBytes',
  'parkedProbeMs',
  'connectAttempts',
  'sharedState',
  'protocolVersion',
  'taskToolsets',
];
const TOOLSET_KEYS: Record<Contract, string[]> = {
  [Contract.Ordinary]: ['submitTool', 'statusTool', 'cancelTool', 'inputTool'],
  [Contract.McpTasks]: ['tool', 'ttlMs'],
  [Contract.SyncCall]: ['tool', 'callTimeoutMs'],
};
const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const TOOLSET_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** Validates the interpolated file; every message names the server and the field. */
export function validateServers(json: unknown, leaseMs: number): McpServersConfig {
  const root = new FieldReader(json, 'mcpServers file');
  root.onlyKeys(['mcpServers']);
  const serversObj = root.object('mcpServers');
  const servers: ServerConfig[] = [];
  const toolsets = new Map<string, ToolsetConfig>();
  for (const [name, raw] of Object.entries(serversObj)) {
    if (!SERVER_NAME.test(name)) {
      throw new ConfigError(`mcpServers: server name must match ${SERVER_NAME.source}`);
    }
    const server = readServer(name, new FieldReader(raw, `server "${name}"`), leaseMs);
    for (const toolset of server.toolsets) {
      const other = toolsets.get(toolset.name);
      if (other) {
        throw new ConfigError(
          `server "${name}": toolset name "${toolset.name}" is already used by server "${other.server}"`,
        );
      }
      toolsets.set(toolset.name, toolset);
    }
    servers.push(server);
  }
  checkMcpToolNames([...toolsets.values()]);
  return { servers, toolsets };
}

/**
 * Every name a tool of `/mcp` may take must be one tool's: an exposed toolset's tool name, its
 * start tool (`<toolName>_start`) and the shared companion tools are all reserved, whether or not
 * companion tools are on today, so that turning them on later cannot make `tools/call` ambiguous.
 * The message names both owners.
 */
function checkMcpToolNames(toolsets: ToolsetConfig[]): void {
  const owners = new Map<string, string>();
  for (const [action, name] of Object.entries(COMPANION_TOOL_NAMES)) {
    owners.set(name, `the companion tool "${action}"`);
  }
  const exposed = toolsets
    .map((toolset) => ({ toolset, mcp: toolset.mcp ?? defaultMcpExposure(toolset.name) }))
    .filter(({ mcp }) => mcp.expose);
  for (const { toolset, mcp } of exposed) {
    const start = companionStartName(mcp.toolName);
    for (const [name, what] of [
      [mcp.toolName, `mcp.toolName "${mcp.toolName}"`],
      [start, `its start tool "${start}"`],
    ]) {
      const owner = owners.get(name);
      if (owner !== undefined) {
        throw new ConfigError(`toolset "${toolset.name}": ${what} is already ${owner}`);
      }
    }
    owners.set(mcp.toolName, `the tool name of toolset "${toolset.name}"`);
    owners.set(start, `the start tool of toolset "${toolset.name}"`);
  }
}

/**
 * `"mcp": {expose, toolName, taskMode, companionTools, clientCancel}`, each optional (defaults in
 * docs/mcp.md).
 */
function readMcpExposure(r: FieldReader, toolset: string): McpExposure {
  const defaults = defaultMcpExposure(toolset);
  const raw = r.optionalObject('mcp');
  if (raw === undefined) return defaults;
  const m = new FieldReader(raw, `${r.where}: mcp`);
  m.onlyKeys(['expose', 'toolName', 'taskMode', 'companionTools', 'clientCancel']);
  const toolName = m.optionalString('toolName') ?? defaults.toolName;
  if (!MCP_TOOL_NAME_PATTERN.test(toolName)) {
    throw new ConfigError(`${m.where}: toolName must match ${MCP_TOOL_NAME_PATTERN.source}`);
  }
  return {
    expose: m.bool('expose', defaults.expose),
    toolName,
    taskMode: m.optionalEnum('taskMode', MCP_TASK_MODES) ?? defaults.taskMode,
    companionTools: m.bool('companionTools', defaults.companionTools),
    clientCancel: m.optionalEnum('clientCancel', MCP_CLIENT_CANCELS) ?? defaults.clientCancel,
  };
}

function readServer(name: string, r: FieldReader, leaseMs: number): ServerConfig {
  r.onlyKeys(SERVER_KEYS);
  const command = r.optionalString('command');
  const url = r.optionalString('url');
  if ((command === undefined) === (url === undefined)) {
    throw new ConfigError(`server "${name}": set exactly one of command (stdio) or url (http)`);
  }
  const transportField = r.optionalEnum('transport', ['http', 'sse', 'stdio']);
  let transport: TransportKind = command !== undefined ? 'stdio' : 'http';
  if (transportField !== undefined) {
    if ((transportField === 'stdio') !== (command !== undefined)) {
      throw new ConfigError(
        `server "${name}": transport "${transportField}" does not fit ${command ? 'command' : 'url'}`,
      );
    }
    transport = transportField;
  }
  if (url !== undefined) checkUrl(name, url);
  if (command !== undefined && command.trim() === '') {
    throw new ConfigError(`server "${name}": command must not be empty`);
  }
  const server: ServerConfig = {
    name,
    transport,
    command,
    args: r.stringArray('args'),
    env: r.stringMap('env'),
    cwd: r.optionalString('cwd'),
    url,
    headers: r.stringMap('headers'),
    oauth: readOAuth(r),
    // 12 s per call so the longest chains (docs/leases.md, "Attempt deadlines": a native submit
    // over HTTP, two connects and two calls; a native cancel, one connect and three calls) fit
    // the default 60 s lease minus its 2 s margin.
    connectTimeoutMs: r.int('connectTimeoutMs', 15000, 100),
    callTimeoutMs: r.int('callTimeoutMs', 12000, 100),
    maxConcurrentCalls: r.int('maxConcurrentCalls', 16, 1),
    fleetMaxConcurrentCalls: r.optionalInt('fleetMaxConcurrentCalls', 1),
    keepaliveIntervalMs: r.int('keepaliveIntervalMs', 30000, 1000),
    maxMessageBytes: r.int('maxMessageBytes', DEFAULT_MAX_MESSAGE_BYTES, 1024),
    parkedProbeMs: r.int('parkedProbeMs', 300000, 1000),
    connectAttempts: r.int('connectAttempts', 4, 1),
    sharedState: r.bool('sharedState', false),
    protocolVersion: r.optionalEnum('protocolVersion', TASK_PROTOCOL_VERSIONS),
    toolsets: [],
  };
  if (server.sharedState && transport !== 'stdio') {
    throw new ConfigError(
      `server "${name}": sharedState applies to stdio servers (command) only; every poller ` +
        'already reaches the same process over a url',
    );
  }
  // The 2026-07-28 client speaks over HTTP POST or a stdio child's lines; the legacy SSE
  // transport is a 2024-11-05 framing.
  if (server.protocolVersion === '2026-07-28' && transport === 'sse') {
    throw new ConfigError(
      `server "${name}": protocolVersion "2026-07-28" needs the http or stdio transport, not sse`,
    );
  }
  const list = r.array('taskToolsets');
  const boundTools = new Map<string, string>();
  list.forEach((item, index) => {
    const toolset = readToolset(
      name,
      new FieldReader(item, `server "${name}": taskToolsets[${index}]`),
      server,
    );
    for (const tool of rawTools(toolset)) {
      const owner = boundTools.get(tool);
      if (owner !== undefined) {
        throw new ConfigError(
          `server "${name}": tool "${tool}" is bound twice (toolsets "${owner}" and "${toolset.name}")`,
        );
      }
      boundTools.set(tool, toolset.name);
    }
    server.toolsets.push(toolset);
  });
  checkAttemptChains(server, leaseMs);
  return server;
}

function readToolset(serverName: string, r: FieldReader, server: ServerConfig): ToolsetConfig {
  const contract = r.enumValue('contract', [
    Contract.Ordinary,
    Contract.McpTasks,
    Contract.SyncCall,
  ]);
  r.onlyKeys([
    'name',
    'contract',
    'retryOnCrash',
    'description',
    'mcp',
    'deadlineSeconds',
    ...TOOLSET_KEYS[contract],
  ]);
  const name = r.string('name');
  if (!TOOLSET_NAME.test(name)) {
    throw new ConfigError(`${r.where}: name must match ${TOOLSET_NAME.source}`);
  }
  const base = {
    name,
    server: serverName,
    retryOnCrash: r.bool('retryOnCrash', false),
    mcp: readMcpExposure(r, name),
    deadlineSeconds: r.optionalInt('deadlineSeconds', 1),
  };
  switch (contract) {
    case Contract.Ordinary:
      return {
        ...base,
        contract,
        submitTool: r.string('submitTool'),
        statusTool: r.string('statusTool'),
        cancelTool: r.string('cancelTool'),
        inputTool: r.optionalString('inputTool'),
      };
    case Contract.McpTasks:
      return { ...base, contract, tool: r.string('tool'), ttlMs: r.optionalInt('ttlMs', 1000) };
    case Contract.SyncCall:
      return {
        ...base,
        contract,
        tool: r.string('tool'),
        callTimeoutMs: r.int('callTimeoutMs', server.callTimeoutMs, 100),
      };
  }
}

function rawTools(toolset: ToolsetConfig): string[] {
  if (toolset.contract !== Contract.Ordinary) return [toolset.tool];
  const tools = [toolset.submitTool, toolset.statusTool, toolset.cancelTool];
  return toolset.inputTool === undefined ? tools : [...tools, toolset.inputTool];
}

function readOAuth(r: FieldReader): ServerConfig['oauth'] {
  const raw = r.optionalObject('oauth');
  if (raw === undefined) return undefined;
  const o = new FieldReader(raw, `${r.where}: oauth`);
  o.onlyKeys(['clientId', 'clientSecret', 'scope']);
  return {
    clientId: o.string('clientId'),
    clientSecret: o.string('clientSecret'),
    scope: o.optionalString('scope'),
  };
}

/** http/https with a host only: no credentials, query or fragment (they belong in headers). */
function checkUrl(server: string, value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`server "${server}": url is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`server "${server}": url must use http or https`);
  }
  if (!url.hostname) throw new ConfigError(`server "${server}": url must have a host`);
  if (url.username || url.password) {
    throw new ConfigError(`server "${server}": url must not carry credentials (use headers)`);
  }
  if (url.search || url.hash) {
    throw new ConfigError(`server "${server}": url must not have a query or fragment`);
  }
}
