import type { IncomingHttpHeaders } from 'node:http';
import { isStatelessRequest, validateRequest2026 } from './request-2026.validator';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {
    extensions: { 'io.modelcontextprotocol/tasks': {} },
  },
};

function body(method: string, params: Record<string, unknown> = {}) {
  return { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: META } };
}

function headers(method: string, name?: string): IncomingHttpHeaders {
  return {
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
    ...(name === undefined ? {} : { 'mcp-name': name }),
  };
}

const codeOf = (run: () => unknown): number | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    return (error as { code?: number }).code;
  }
};

describe('isStatelessRequest', () => {
  it('routes 2026 markers to the 2026 side and keeps initialize and batches on 2025', () => {
    expect(isStatelessRequest({}, { jsonrpc: '2.0', id: 1, method: 'server/discover' })).toBe(true);
    expect(isStatelessRequest({}, body('tools/list'))).toBe(true);
    expect(
      isStatelessRequest({ 'mcp-protocol-version': '2026-07-28' }, { method: 'tools/list' }),
    ).toBe(true);
    expect(
      isStatelessRequest({}, { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
    ).toBe(false);
    expect(isStatelessRequest({}, [body('tools/list')])).toBe(false);
    expect(
      isStatelessRequest({ 'mcp-protocol-version': '2025-11-25' }, { method: 'tools/list' }),
    ).toBe(false);
  });
});

describe('validateRequest2026', () => {
  it('accepts a well-formed request and reads the tasks declaration from its own _meta', () => {
    const request = validateRequest2026(
      headers('tasks/get', 'abc'),
      body('tasks/get', { taskId: 'abc' }),
    );
    expect(request).toMatchObject({ method: 'tasks/get', declaresTasks: true });
  });

  it('without a header layer (stdio) checks the body alone, and still needs its envelope', () => {
    const call = body('tools/call', { name: 'slow' });
    expect(validateRequest2026(undefined, call)).toMatchObject({ method: 'tools/call' });
    expect(codeOf(() => validateRequest2026(undefined, body('tools/call', { name: 7 })))).toBe(
      -32602,
    );
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} };
    expect(codeOf(() => validateRequest2026(undefined, initialize))).toBe(-32602);
  });

  it('decodes a base64 Mcp-Name before comparing', () => {
    const name = `=?base64?${Buffer.from('tâche').toString('base64')}?=`;
    expect(
      codeOf(() =>
        validateRequest2026(headers('tools/call', name), body('tools/call', { name: 'tâche' })),
      ),
    ).toBe(undefined);
  });

  it('answers the spec codes for header, version and envelope problems', () => {
    const get = body('tasks/get', { taskId: 'abc' });
    expect(codeOf(() => validateRequest2026(headers('tasks/get'), get))).toBe(-32020);
    expect(codeOf(() => validateRequest2026(headers('tasks/get', 'other'), get))).toBe(-32020);
    expect(codeOf(() => validateRequest2026(headers('tools/list', 'abc'), get))).toBe(-32020);
    expect(
      codeOf(() => validateRequest2026({ 'mcp-method': 'tasks/get', 'mcp-name': 'abc' }, get)),
    ).toBe(-32020);
    const future = {
      ...get,
      params: {
        taskId: 'abc',
        _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' },
      },
    };
    expect(
      codeOf(() =>
        validateRequest2026(
          { ...headers('tasks/get', 'abc'), 'mcp-protocol-version': '2099-01-01' },
          future,
        ),
      ),
    ).toBe(-32022);
    expect(
      codeOf(() => validateRequest2026(headers('tasks/get', 'abc'), { ...get, id: undefined })),
    ).toBe(-32600);
    expect(
      codeOf(() =>
        validateRequest2026(headers('tools/list'), { jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      ),
    ).toBe(-32602);
  });
});
