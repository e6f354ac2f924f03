import { UpstreamProtocolError } from '../upstream.errors';
import type { StatelessRequestOptions, StatelessSession } from '../upstream.port';
import { StatelessToolSession } from './stateless-tool.session';

/** A stateless client that records each request and answers `reply`. */
function answering(reply: Record<string, unknown>) {
  const sent: Array<{ method: string; params: unknown; options: StatelessRequestOptions }> = [];
  const client: StatelessSession = {
    server: 'up',
    request: (method, params, options) => {
      sent.push({ method, params, options });
      return Promise.resolve(reply);
    },
  };
  return { session: new StatelessToolSession(client, () => ({ tools: {} })), sent };
}

describe('StatelessToolSession', () => {
  it('calls the tool without the tasks extension, named in Mcp-Name, and returns its result', async () => {
    const { session, sent } = answering({
      resultType: 'complete',
      content: [{ type: 'text', text: 'done' }],
    });
    const signal = new AbortController().signal;
    const onProgress = () => undefined;
    const result = await session.callTool(
      'run',
      { n: 1 },
      { idempotent: false, timeoutMs: 5000, signal, onProgress },
    );
    expect(result).toEqual({ content: [{ type: 'text', text: 'done' }] });
    expect(sent).toEqual([
      {
        method: 'tools/call',
        params: { name: 'run', arguments: { n: 1 } },
        options: {
          idempotent: false,
          timeoutMs: 5000,
          signal,
          onProgress,
          name: 'run',
          withoutTasks: true,
        },
      },
    ]);
    expect(session.protocolVersion).toBe('2026-07-28');
    expect(session.sessionId).toBeUndefined();
    expect(session.capabilities).toEqual({ tools: {} });
  });

  it('a task or questions cannot end such a call: a protocol error naming what came', async () => {
    for (const resultType of ['task', 'input_required']) {
      const { session } = answering({ resultType, task: {}, inputRequests: {} });
      const call = session.callTool('run', {}, { idempotent: false });
      await expect(call).rejects.toBeInstanceOf(UpstreamProtocolError);
      await expect(call).rejects.toThrow(`"${resultType}"`);
    }
  });

  it('an answer that is not a CallToolResult is a protocol error', async () => {
    const { session } = answering({ content: 'not a list' });
    await expect(session.callTool('run', {}, { idempotent: false })).rejects.toBeInstanceOf(
      UpstreamProtocolError,
    );
  });
});
