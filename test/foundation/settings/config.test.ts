// Guards configuration validation: every bad variable or mcpServers file stops the process with
// a message that names the variable or the server and field, and never prints a value.
import { parseMcpServers, parseSettings } from '@app/config';

const SECRET = 'sup3r-s3cret-value';
const LEASE = 60000;
const URL = 'postgres://u@h/db';

describe('environment', () => {
  it('applies defaults into one nested object', () => {
    const s = parseSettings({ DATABASE_URL: URL });
    expect(s.lease.ms).toBe(60000);
    expect(s.scheduling).toMatchObject({
      pollIntervalMs: 5000,
      minPollIntervalMs: 1000,
      trackingDegradedAfter: 3,
    });
    expect(s.results).toEqual({ maxBytes: 262144, previewChars: 2000 });
    expect(s.webhooks.allowPrivateNetworks).toBe(false);
    expect(s.worker.fairShare).toBe(true);
    expect(s.worker.fairShareWeights).toEqual(new Map());
    expect(s.worker.fairShareHeadroom).toBe(2);
    // Above a proxy's 60 s idle timeout (docs/operations.md, "Proxies in front of the API").
    expect(s.http.keepAliveTimeoutMs).toBe(65000);
    // Under the manifests' startupProbe budget (docs/operations.md, "Starting before the database").
    expect(s.database.startupWaitMs).toBe(45000);
  });

  it('reads the fair-share headroom; unset, a worker of one or two slots keeps fewer', () => {
    expect(parseSettings({ DATABASE_URL: URL, FAIR_SHARE_HEADROOM: '0' }).worker).toMatchObject({
      fairShareHeadroom: 0,
    });
    expect(
      parseSettings({ DATABASE_URL: URL, FAIR_SHARE_HEADROOM: '7', WORKER_SLOTS: '8' }).worker
        .fairShareHeadroom,
    ).toBe(7);
    expect(parseSettings({ DATABASE_URL: URL, WORKER_SLOTS: '2' }).worker.fairShareHeadroom).toBe(
      1,
    );
    expect(parseSettings({ DATABASE_URL: URL, WORKER_SLOTS: '1' }).worker.fairShareHeadroom).toBe(
      0,
    );
  });

  it('reads fair-share weights', () => {
    const s = parseSettings({
      DATABASE_URL: URL,
      FAIR_SHARE_WEIGHTS: ' alice=3, acme=0.5 ',
      CLAIM_FAIR_SHARE: 'false',
    });
    expect(s.worker.fairShare).toBe(false);
    expect(s.worker.fairShareWeights).toEqual(
      new Map([
        ['alice', 3],
        ['acme', 0.5],
      ]),
    );
  });

  it.each([
    [{ LEASE_MS: 'abc' }, 'LEASE_MS must be an integer number'],
    [{ LEASE_MS: '42' }, 'LEASE_MS must not be less than 100'],
    [{ PORT: '70000' }, 'PORT must not be greater than 65535'],
    // Under a second, Keep-Alive: timeout=0 would tell clients not to reuse the connection.
    [
      { HTTP_KEEP_ALIVE_TIMEOUT_MS: '500' },
      'HTTP_KEEP_ALIVE_TIMEOUT_MS must not be less than 1000',
    ],
    [{ DATABASE_STARTUP_WAIT_MS: '-1' }, 'DATABASE_STARTUP_WAIT_MS must not be less than 0'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of the following values'],
    [{ LOG_FORMAT: 'xml' }, 'LOG_FORMAT must be one of the following values: json, pretty'],
    [
      { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'maybe' },
      'WEBHOOK_ALLOW_PRIVATE_NETWORKS must be a boolean value',
    ],
    [{ DATABASE_URL: `mysql://u:${SECRET}@h/db` }, 'DATABASE_URL must be a URL address'],
    // MCP_PUBLIC_URL is a resource identifier (RFC 9728): scheme, host and path only.
    [{ MCP_PUBLIC_URL: 'gateway.example/tools/mcp' }, 'MCP_PUBLIC_URL must be a URL address'],
    [{ MCP_PUBLIC_URL: 'https://gateway.example/mcp?x=1' }, 'MCP_PUBLIC_URL must be a URL address'],
    [{ MCP_PUBLIC_URL: 'https://gateway.example/mcp#top' }, 'MCP_PUBLIC_URL must be a URL address'],
    [
      { MCP_PUBLIC_URL: `https://u:${SECRET}@gateway.example/mcp` },
      'MCP_PUBLIC_URL must be a URL address',
    ],
    [
      { AUTH_JWT_SECRET: 'short', AUTH_ISSUER: 'https://iss.test', AUTH_AUDIENCE: 'aud-x' },
      'AUTH_JWT_SECRET: must be at least 32 characters',
    ],
    [
      { AUTH_JWT_SECRET: SECRET.repeat(2), AUTH_ISSUER: 'https://issuer.test' },
      'AUTH_ISSUER, AUTH_AUDIENCE: both are required when JWTs are verified',
    ],
    [
      { AUTH_JWKS_URL: 'https://idp.test/jwks.json', AUTH_AUDIENCE: 'gw' },
      'AUTH_ISSUER, AUTH_AUDIENCE: both are required when JWTs are verified',
    ],
    [
      { MIN_POLL_INTERVAL_MS: '9000', POLL_INTERVAL_MS: '5000' },
      'MIN_POLL_INTERVAL_MS: must not be greater than POLL_INTERVAL_MS',
    ],
    [{ CLAIM_FAIR_SHARE: 'sometimes' }, 'CLAIM_FAIR_SHARE must be a boolean value'],
    [{ FAIR_SHARE_HEADROOM: '-1' }, 'FAIR_SHARE_HEADROOM must not be less than 0'],
    [{ FAIR_SHARE_HEADROOM: 'two' }, 'FAIR_SHARE_HEADROOM must be an integer number'],
    [
      { FAIR_SHARE_HEADROOM: '8', WORKER_SLOTS: '8' },
      'FAIR_SHARE_HEADROOM: must be less than WORKER_SLOTS',
    ],
    [{ FAIR_SHARE_WEIGHTS: 'alice:3' }, 'FAIR_SHARE_WEIGHTS: pair 1 must be principal=weight'],
    [{ FAIR_SHARE_WEIGHTS: 'alice=0' }, 'FAIR_SHARE_WEIGHTS: pair 1 must be principal=weight'],
    [
      { FAIR_SHARE_WEIGHTS: 'a=1,a=2' },
      'FAIR_SHARE_WEIGHTS: pair 2 names a principal given before',
    ],
    [{}, 'DATABASE_URL: is required'],
  ])('%j is refused: %s', (env, message) => {
    expect(() => parseSettings(env)).toThrow(message);
    try {
      parseSettings(env);
    } catch (error) {
      for (const value of Object.values(env)) expect((error as Error).message).not.toContain(value);
    }
  });
});

const ok = (servers: unknown) => JSON.stringify({ mcpServers: servers });
const ordinary = {
  name: 'r',
  contract: 'ordinary',
  submitTool: 's',
  statusTool: 'st',
  cancelTool: 'c',
};

describe('mcpServers file', () => {
  it('reads all three contracts with defaults, interpolating ${VAR}', () => {
    const config = parseMcpServers(
      ok({
        reports: {
          url: 'https://reports.internal/mcp',
          headers: { Authorization: 'Bearer ${TOKEN}' },
          taskToolsets: [ordinary, { name: 'n', contract: 'mcp-tasks', tool: 't' }],
        },
        local: {
          command: 'node',
          args: ['x.js'],
          maxMessageBytes: 65536,
          taskToolsets: [{ name: 'b', contract: 'sync-call', tool: 'run', callTimeoutMs: 3600000 }],
        },
      }),
      { TOKEN: SECRET },
      LEASE,
    );
    expect(config.servers.map((s) => [s.name, s.transport])).toEqual([
      ['reports', 'http'],
      ['local', 'stdio'],
    ]);
    expect(config.servers[0].headers.Authorization).toBe(`Bearer ${SECRET}`);
    expect([...config.toolsets.keys()]).toEqual(['r', 'n', 'b']);
    expect(config.servers.map((s) => s.sharedState)).toEqual([false, false]);
    // docs/connections.md, "Message size": 8 MiB unless the server says otherwise.
    expect(config.servers.map((s) => s.maxMessageBytes)).toEqual([8 * 1024 * 1024, 65536]);
    expect(config.toolsets.get('b')).toMatchObject({
      contract: 'sync-call',
      callTimeoutMs: 3600000,
      retryOnCrash: false,
      mcp: {
        expose: true,
        toolName: 'b',
        taskMode: 'optional',
        companionTools: false,
        clientCancel: 'hold',
      },
    });
  });

  it("reads a toolset's MCP exposure; an unexposed one frees its tool name", () => {
    const config = parseMcpServers(
      ok({
        a: {
          url: 'http://h/mcp',
          taskToolsets: [
            {
              ...ordinary,
              mcp: { toolName: 'slow_compute', taskMode: 'required', clientCancel: 'task' },
            },
            {
              name: 'z',
              contract: 'sync-call',
              tool: 'y',
              mcp: { toolName: 'slow_compute', expose: false },
            },
          ],
        },
      }),
      {},
      LEASE,
    );
    expect(config.toolsets.get('r')!.mcp).toEqual({
      expose: true,
      toolName: 'slow_compute',
      taskMode: 'required',
      companionTools: false,
      clientCancel: 'task',
    });
  });

  it.each([
    ['not json', '{', 'mcpServers file: not valid JSON'],
    ['unknown top key', JSON.stringify({ servers: {} }), 'mcpServers file: unknown key "servers"'],
    [
      'unknown server key',
      ok({ a: { url: 'http://h/mcp', retries: 3 } }),
      'server "a": unknown key "retries"',
    ],
    [
      'both command and url',
      ok({ a: { url: 'http://h/mcp', command: 'x' } }),
      'server "a": set exactly one of command (stdio) or url (http)',
    ],
    ['neither', ok({ a: {} }), 'server "a": set exactly one of command (stdio) or url (http)'],
    [
      'fleet cap below 1',
      ok({ a: { url: 'http://h/mcp', fleetMaxConcurrentCalls: 0 } }),
      'server "a": fleetMaxConcurrentCalls',
    ],
    ['bad url scheme', ok({ a: { url: 'ftp://h/x' } }), 'server "a": url must use http or https'],
    ['not a url', ok({ a: { url: 'nope' } }), 'server "a": url is not a valid URL'],
    [
      'credentials in url',
      ok({ a: { url: `https://u:${SECRET}@h/mcp` } }),
      'server "a": url must not carry credentials (use headers)',
    ],
    [
      'missing variable',
      ok({ a: { url: 'http://h/mcp', headers: { X: '${NOPE}' } } }),
      'mcpServers file: mcpServers.a.headers.X references ${NOPE}, which is not set',
    ],
    [
      'timeouts over the lease',
      ok({
        a: {
          url: 'http://h/mcp',
          connectTimeoutMs: 30000,
          callTimeoutMs: 30000,
          taskToolsets: [ordinary],
        },
      }),
      'server "a": LEASE_MS (60000) is too short for the ordinary submit of toolset "r": ' +
        '1 × connectTimeoutMs (30000) + 1 × callTimeoutMs (30000) = 60000 ms must fit in ' +
        'LEASE_MS minus the attempt margin (2000 ms)',
    ],
    [
      // One connect and one call fit, but a native cancel chains three calls.
      'a native chain over the lease',
      ok({
        a: {
          url: 'http://h/mcp',
          connectTimeoutMs: 10000,
          callTimeoutMs: 17000,
          taskToolsets: [{ name: 'n', contract: 'mcp-tasks', tool: 't' }],
        },
      }),
      'server "a": LEASE_MS (60000) is too short for the mcp-tasks cancel of toolset "n": ' +
        '1 × connectTimeoutMs (10000) + 3 × callTimeoutMs (17000) = 61000 ms',
    ],
    [
      'bad contract',
      ok({ a: { url: 'http://h/mcp', taskToolsets: [{ name: 'x', contract: 'magic' }] } }),
      'server "a": taskToolsets[0]: contract must be one of ordinary, mcp-tasks, sync-call',
    ],
    [
      'missing status tool',
      ok({ a: { url: 'http://h/mcp', taskToolsets: [{ ...ordinary, statusTool: undefined }] } }),
      'server "a": taskToolsets[0]: statusTool is required and must be a non-empty string',
    ],
    [
      'field of another contract',
      ok({ a: { url: 'http://h/mcp', taskToolsets: [{ ...ordinary, tool: 'x' }] } }),
      'server "a": taskToolsets[0]: unknown key "tool"',
    ],
    [
      'tool bound twice',
      ok({
        a: {
          url: 'http://h/mcp',
          taskToolsets: [ordinary, { name: 'z', contract: 'sync-call', tool: 's' }],
        },
      }),
      'server "a": tool "s" is bound twice (toolsets "r" and "z")',
    ],
    [
      'toolset name twice',
      ok({
        a: { url: 'http://h/mcp', taskToolsets: [ordinary] },
        b: { command: 'x', taskToolsets: [ordinary] },
      }),
      'server "b": toolset name "r" is already used by server "a"',
    ],
    [
      'mcp task mode unknown',
      ok({ a: { url: 'http://h/mcp', taskToolsets: [{ ...ordinary, mcp: { taskMode: 'x' } }] } }),
      'server "a": taskToolsets[0]: mcp: taskMode must be one of forbidden, optional, required',
    ],
    [
      'mcp unknown key',
      ok({ a: { url: 'http://h/mcp', taskToolsets: [{ ...ordinary, mcp: { tool: 'x' } }] } }),
      'server "a": taskToolsets[0]: mcp: unknown key "tool"',
    ],
    [
      'mcp tool name with a space',
      ok({ a: { url: 'http://h/mcp', taskToolsets: [{ ...ordinary, mcp: { toolName: 'a b' } }] } }),
      'server "a": taskToolsets[0]: mcp: toolName must match',
    ],
    [
      'mcp tool name twice',
      ok({
        a: {
          url: 'http://h/mcp',
          taskToolsets: [
            { ...ordinary, mcp: { toolName: 'greet' } },
            { name: 'z', contract: 'sync-call', tool: 'y', mcp: { toolName: 'greet' } },
          ],
        },
      }),
      'toolset "z": mcp.toolName "greet" is already the tool name of toolset "r"',
    ],
    [
      "mcp tool name that is another toolset's start tool",
      ok({
        a: {
          url: 'http://h/mcp',
          taskToolsets: [
            { ...ordinary, mcp: { toolName: 'greet' } },
            { name: 'z', contract: 'sync-call', tool: 'y', mcp: { toolName: 'greet_start' } },
          ],
        },
      }),
      'toolset "z": mcp.toolName "greet_start" is already the start tool of toolset "r"',
    ],
    [
      "a start tool that is another toolset's tool name",
      ok({
        a: {
          url: 'http://h/mcp',
          taskToolsets: [
            { ...ordinary, mcp: { toolName: 'greet_start' } },
            { name: 'z', contract: 'sync-call', tool: 'y', mcp: { toolName: 'greet' } },
          ],
        },
      }),
      'toolset "z": its start tool "greet_start" is already the tool name of toolset "r"',
    ],
    [
      'mcp tool name that is a companion tool',
      ok({
        a: {
          url: 'http://h/mcp',
          taskToolsets: [{ ...ordinary, mcp: { toolName: 'gateway_task_get' } }],
        },
      }),
      'toolset "r": mcp.toolName "gateway_task_get" is already the companion tool "get"',
    ],
    [
      'toolset name that is a companion tool',
      ok({
        a: { url: 'http://h/mcp', taskToolsets: [{ ...ordinary, name: 'gateway_task_list' }] },
      }),
      'toolset "gateway_task_list": mcp.toolName "gateway_task_list" is already the companion tool "list"',
    ],
    [
      'mcp clientCancel unknown',
      ok({
        a: { url: 'http://h/mcp', taskToolsets: [{ ...ordinary, mcp: { clientCancel: 'x' } }] },
      }),
      'server "a": taskToolsets[0]: mcp: clientCancel must be one of hold, task',
    ],
    [
      'bad toolset name',
      ok({ a: { url: 'http://h/mcp', taskToolsets: [{ ...ordinary, name: 'Bad Name' }] } }),
      'server "a": taskToolsets[0]: name must match',
    ],
    [
      'sharedState on a url server',
      ok({ a: { url: 'http://h/mcp', sharedState: true } }),
      'server "a": sharedState applies to stdio servers (command) only',
    ],
    [
      'sharedState not a boolean',
      ok({ a: { command: 'x', sharedState: 'yes' } }),
      'server "a": sharedState',
    ],
    [
      'unknown protocol version',
      ok({ a: { url: 'http://h/mcp', protocolVersion: '2024-11-05' } }),
      'server "a": protocolVersion must be one of 2025-11-25, 2026-07-28',
    ],
    [
      '2026-07-28 over legacy SSE',
      ok({ a: { url: 'http://h/sse', transport: 'sse', protocolVersion: '2026-07-28' } }),
      'server "a": protocolVersion "2026-07-28" needs the http or stdio transport, not sse',
    ],
    [
      'negative timeout',
      ok({ a: { url: 'http://h/mcp', callTimeoutMs: -1 } }),
      'server "a": callTimeoutMs must be an integer >= 100',
    ],
    [
      'a message bound too small for any answer',
      ok({ a: { url: 'http://h/mcp', maxMessageBytes: 100 } }),
      'server "a": maxMessageBytes must be an integer >= 1024',
    ],
  ])('%s', (_case, text, message) => {
    let thrown: Error | undefined;
    try {
      parseMcpServers(text, { TOKEN: SECRET }, LEASE);
    } catch (error) {
      thrown = error as Error;
    }
    expect(thrown?.name).toBe('ConfigError');
    expect(thrown?.message).toContain(message);
    expect(thrown?.message).not.toContain(SECRET);
  });

  it('never echoes an interpolated secret in a URL error', () => {
    expect(() =>
      parseMcpServers(ok({ a: { url: '${URL}' } }), { URL: `gopher://${SECRET}` }, LEASE),
    ).toThrow(/^server "a": url must use http or https$/);
  });
});

it('a JSON syntax error never quotes the file', () => {
  expect(() => parseMcpServers(`{"mcpServers": {"a": {"url": "${SECRET}" x}}}`, {}, LEASE)).toThrow(
    /^mcpServers file: not valid JSON \(at character \d+\)$/,
  );
});
