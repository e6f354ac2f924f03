import { Contract } from '@app/common';
import type { ServerConfig, ToolsetConfig } from '@app/config';
import { TASKS_EXTENSION } from '@app/wire';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import {
  hasStatelessSide,
  listsNoSessionVersion,
  mayServeStateless,
  needsSession,
  refusesSession,
  sessionless,
  speaksStateless,
} from './protocol-era.rules';

const TASKS = { extensions: { [TASKS_EXTENSION]: {} } };

describe('speaksStateless', () => {
  it('serves on the 2026-07-28 side when the tasks extension is named', () => {
    expect(speaksStateless({ capabilities: TASKS })).toBe(true);
    expect(
      speaksStateless({ supportedVersions: ['2026-07-28', '2025-11-25'], capabilities: TASKS }),
    ).toBe(true);
  });

  it('serves on the 2026-07-28 side when no listed version can open a session', () => {
    // The official SDK v2 answers this way, whether or not it also serves 2025-11-25.
    expect(speaksStateless({ supportedVersions: ['2026-07-28'], capabilities: {} })).toBe(true);
    expect(speaksStateless({ supportedVersions: ['2026-07-28', '2027-01-01'] })).toBe(true);
  });

  it('leaves a server that also opens sessions, and has no extension, to the session side', () => {
    expect(speaksStateless({ supportedVersions: ['2026-07-28', '2025-11-25'] })).toBe(false);
    expect(speaksStateless({ supportedVersions: ['2026-07-28', '2025-06-18'] })).toBe(false);
    expect(speaksStateless({ capabilities: {} })).toBe(false);
  });

  it('never serves a server that does not list 2026-07-28 among the versions it lists', () => {
    expect(speaksStateless({ supportedVersions: ['2027-01-01'], capabilities: TASKS })).toBe(false);
    expect(speaksStateless({ supportedVersions: [] })).toBe(false);
  });
});

describe('listsNoSessionVersion', () => {
  it('holds for 2026-07-28 listed without any version a session opens with, extension or not', () => {
    expect(listsNoSessionVersion({ supportedVersions: ['2026-07-28'] })).toBe(true);
    expect(listsNoSessionVersion({ supportedVersions: ['2026-07-28'], capabilities: TASKS })).toBe(
      true,
    );
    expect(listsNoSessionVersion({ supportedVersions: ['2026-07-28', '2025-11-25'] })).toBe(false);
    // No list says nothing about sessions; a list without 2026-07-28 is another server's.
    expect(listsNoSessionVersion({ capabilities: TASKS })).toBe(false);
    expect(listsNoSessionVersion({ supportedVersions: ['2027-01-01'] })).toBe(false);
  });
});

describe('refusesSession', () => {
  it("takes the server's own refusal of initialize as evidence", () => {
    // A strict 2026-07-28 server: HTTP 400 with -32020 in the body.
    expect(refusesSession(new StreamableHTTPError(400, 'Error POSTing to endpoint'))).toBe(true);
    expect(refusesSession(new StreamableHTTPError(405, 'Method Not Allowed'))).toBe(true);
    expect(refusesSession(new McpError(-32022, 'Unsupported protocol version'))).toBe(true);
    const wrapped = new Error('connect failed', {
      cause: new Error("Server's protocol version is not supported: 2026-07-28"),
    });
    expect(refusesSession(wrapped)).toBe(true);
  });

  it('never a timeout, a lost connection, load, the credentials or a server error', () => {
    // The demo server under load: its initialize did not finish in time. Taken for a refusal,
    // a server that opens sessions lost its sync-call tools (they exist on its session only).
    expect(refusesSession(new Error('connect and initialize did not finish within 1000 ms'))).toBe(
      false,
    );
    expect(refusesSession(new McpError(ErrorCode.RequestTimeout, 'Request timed out'))).toBe(false);
    expect(refusesSession(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'))).toBe(
      false,
    );
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(refusesSession(refused)).toBe(false);
    for (const status of [401, 403, 408, 429, 500, 502, 503]) {
      expect(refusesSession(new StreamableHTTPError(status, 'x'))).toBe(false);
    }
  });
});

describe('which sides a server has', () => {
  const held: ToolsetConfig = {
    name: 'held',
    server: 's',
    contract: Contract.SyncCall,
    tool: 'run',
    callTimeoutMs: 60_000,
    retryOnCrash: false,
  };
  const native: ToolsetConfig = {
    name: 'native',
    server: 's',
    contract: Contract.McpTasks,
    tool: 'task',
    retryOnCrash: false,
  };
  const server = (extra: Partial<ServerConfig>) =>
    ({ name: 's', transport: 'http', toolsets: [held], ...extra }) as ServerConfig;

  it('a server over HTTP or stdio not pinned to 2025-11-25 may be found to speak 2026-07-28', () => {
    expect(mayServeStateless(server({}))).toBe(true);
    expect(mayServeStateless(server({ protocolVersion: '2026-07-28' }))).toBe(true);
    expect(mayServeStateless(server({ protocolVersion: '2025-11-25' }))).toBe(false);
    expect(mayServeStateless(server({ transport: 'stdio' }))).toBe(true);
    expect(mayServeStateless(server({ transport: 'stdio', protocolVersion: '2025-11-25' }))).toBe(
      false,
    );
    expect(mayServeStateless(server({ transport: 'sse' }))).toBe(false);
  });

  it('over stdio, pinned to 2026-07-28 it has no session; unpinned its 2026-07-28 side is latent', () => {
    const pinned = server({ transport: 'stdio', protocolVersion: '2026-07-28' });
    expect([sessionless(pinned), hasStatelessSide(pinned), needsSession(pinned)]).toEqual([
      true,
      true,
      false,
    ]);
    const unpinned = server({ transport: 'stdio', toolsets: [held, native] });
    expect([sessionless(unpinned), hasStatelessSide(unpinned), needsSession(unpinned)]).toEqual([
      false,
      false,
      true,
    ]);
  });

  it('pinned to 2026-07-28, every toolset runs on stateless requests: no session side', () => {
    const pinned = server({ protocolVersion: '2026-07-28', toolsets: [held, native] });
    expect([sessionless(pinned), hasStatelessSide(pinned), needsSession(pinned)]).toEqual([
      true,
      true,
      false,
    ]);
  });

  it('unpinned, a sync-call toolset needs a session beside the 2026-07-28 side', () => {
    const mixed = server({ toolsets: [held, native] });
    expect([sessionless(mixed), hasStatelessSide(mixed), needsSession(mixed)]).toEqual([
      false,
      true,
      true,
    ]);
    const plain = server({});
    expect([hasStatelessSide(plain), needsSession(plain)]).toEqual([false, true]);
  });

  it('pinned to 2025-11-25 or on stdio, there is only the session side', () => {
    for (const config of [
      server({ protocolVersion: '2025-11-25', toolsets: [native] }),
      server({ transport: 'stdio', toolsets: [native] }),
    ]) {
      expect([sessionless(config), hasStatelessSide(config), needsSession(config)]).toEqual([
        false,
        false,
        true,
      ]);
    }
  });
});
