// The official MCP clients against the gateway's /mcp, one step per process: the task client
// @modelcontextprotocol/ext-tasks over the SDK v2 Client of @modelcontextprotocol/client, and that
// Client alone. Both packages are ESM only and the tests run as CommonJS (jest transforms them with
// @swc/jest, which rewrites import() into require()), so the test spawns this file with Node and
// reads the one JSON line it prints. A step per process also makes a handed-off task reference
// cross a process boundary, as it does for a real client that resumes after a restart.
//
//   node official-client.mjs <step> '<json input>'
//
// The task steps take {url, key, era}: the /mcp URL of one API replica, a bearer key, and the era
// the client speaks, "2025-11-25" (the Client's default connect, `initialize`) or "2026-07-28" (its
// own negotiation, `versionNegotiation: {mode: 'auto'}`, which probes `server/discover`). The
// lines between "README: begin" and "README: end" are the README's client snippet, word for word
// (test/front-door/front-door-official-client.test.ts holds the two equal).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';

const MODERN = '2026-07-28';

// README: begin
/**
 * An SDK v2 client connected to the gateway's `/mcp` with these headers (the bearer key). The
 * 2026-07-28 era is the client's own negotiation (`mode: 'auto'` probes `server/discover`);
 * without it the client speaks 2025-11-25.
 */
async function connect(url, headers, era, options = {}) {
  const client = new Client(
    { name: 'gateway-tests', version: '1.0.0' },
    era === '2026-07-28' ? { ...options, versionNegotiation: { mode: 'auto' } } : options,
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers },
    }),
  );
  return client;
}

/**
 * A task session of the official client over that connection. On 2026-07-28 the package needs
 * the host to send its task requests (`rawDispatch`: the SDK's codecs refuse the extension's
 * shapes) and the per-request envelope it frames them with (`v2RequestFraming`).
 */
function taskSession(client, url, key, options = {}) {
  const modern = client.getProtocolEra() === 'modern';
  return createTaskSessionFromClient(client, {
    // One deployment, whichever replica answers: a reference resumes on any of them.
    endpointId: 'mcp-task-gateway',
    ...options,
    ...(modern && {
      rawDispatch: postRequest(url, key, client.getNegotiatedProtocolVersion()),
      v2RequestFraming: {
        protocolVersion: client.getNegotiatedProtocolVersion(),
        clientInfo: { name: 'gateway-tests', version: '1.0.0' },
        clientCapabilities: {},
      },
    }),
  });
}
// README: end

/**
 * The host's request path for 2026-07-28 task requests: one POST per request with the headers the
 * transport requires (MCP-Protocol-Version, Mcp-Method, and Mcp-Name: the tool, or the task ID
 * the package passes), answered as JSON or as an SSE stream whose last message is the response.
 */
function postRequest(url, key, version) {
  let next = 0;
  return async (request, options = {}) => {
    const { method, params = {} } = request;
    const headers = {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': version,
      'mcp-method': method,
      ...(method === 'tools/call' ? { 'mcp-name': params.name } : {}),
      ...options.context?.headers,
    };
    const id = `raw-${++next}`;
    const res = await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
      signal: options.signal,
    });
    const text = await res.text();
    const messages = res.headers.get('content-type')?.startsWith('text/event-stream')
      ? text
          .split('\n')
          .filter((line) => line.startsWith('data: ') && line.length > 6)
          .map((line) => JSON.parse(line.slice(6)))
      : [JSON.parse(text)];
    const answer = messages.find((m) => m.id === id);
    if (!answer) throw new Error(`no response to ${method} (HTTP ${res.status})`);
    return answer.error
      ? { kind: 'error', error: answer.error }
      : { kind: 'result', result: answer.result };
  };
}

const bearer = (key) => ({ Authorization: `Bearer ${key}` });

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `read` until `done` holds of its value, or fails after `ms`. */
async function until(read, done, what, ms = 30_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** An outcome as the test reads it: its status, and the result or error it carries. */
function outcomeOf(outcome) {
  if (outcome.status === 'completed') return { status: 'completed', result: outcome.result };
  if (outcome.status === 'failed') return { status: 'failed', error: outcome.error.message };
  return { status: outcome.status };
}

const steps = {
  /** Connects with the given headers on the Client's defaults and prints the tools' names. */
  async list({ url, headers }) {
    const client = await connect(url, headers);
    try {
      const { tools } = await client.listTools();
      return { tools: tools.map((t) => t.name) };
    } finally {
      await client.close();
    }
  },

  /** Calls `tool` as a task, hands the execution off and prints the serialised reference. */
  async create({ url, key, era, tool, arguments: args }) {
    const client = await connect(url, bearer(key), era);
    const session = taskSession(client, url, key);
    try {
      const execution = await session.callTool(tool, args, { task: { preference: 'require' } });
      if (execution.kind !== 'task') throw new Error(`the call made no task (${execution.kind})`);
      let reference;
      await execution.handoff((ref) => {
        reference = JSON.stringify(ref);
      });
      // ext-tasks 0.2.2 cancels every execution it still tracks on session.close(), a handed-off
      // one included until its local driver has wound down: wait for that before closing.
      await execution.result().catch(() => undefined);
      return { reference, generation: session.capabilities, era: client.getProtocolEra() };
    } finally {
      await session.close();
      await client.close();
    }
  },

  /**
   * Resumes a handed-off task and settles it, printing how it ended. With
   * `answer` (2026-07-28): first waits for the task's question and answers it with
   * `update(inputResponses)`. On 2025-11-25 the package refuses `update` (that revision has no
   * `tasks/update`; the step reports the refusal) and the test answers the question itself.
   */
  async resume({ url, key, era, reference, answer }) {
    const ref = JSON.parse(reference);
    const client = await connect(url, bearer(key), era);
    const session = taskSession(client, url, key);
    try {
      const task = session.task(ref.taskId);
      let questions;
      let updateRefused;
      if (answer) {
        const waiting = await until(
          () => task.snapshot(),
          (view) => view.status === 'input_required',
          'the task to ask its question',
        );
        questions = Object.keys(waiting.raw.inputRequests ?? {});
        await task.update(answer);
      } else {
        updateRefused = await task.update({}).then(
          () => undefined,
          (error) => error.name,
        );
      }
      const execution = await session.resumeTask(ref);
      const { outcome } = await execution.settle();
      return { ...outcomeOf(outcome), questions, updateRefused };
    } finally {
      await session.close();
      await client.close();
    }
  },

  /** Calls `tool` as a task, cancels it at once, and prints how the execution settled. */
  async cancel({ url, key, era, tool, arguments: args }) {
    const client = await connect(url, bearer(key), era);
    const session = taskSession(client, url, key);
    try {
      const execution = await session.callTool(tool, args, { task: { preference: 'require' } });
      if (execution.kind !== 'task') throw new Error(`the call made no task (${execution.kind})`);
      await execution.cancel();
      const { outcome } = await execution.settle();
      return { taskId: execution.handle.taskId, ...outcomeOf(outcome) };
    } finally {
      await session.close();
      await client.close();
    }
  },

  /**
   * The SDK v2 Client alone on 2026-07-28: `server/discover`, `tools/list`, and
   * `subscriptions/listen` on `taskIds` until each has ended.
   */
  async listen({ url, key, taskIds }) {
    // Listening on tasks is the tasks extension's: the Client declares it on every request.
    const client = await connect(url, bearer(key), MODERN, {
      capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    });
    const notifications = [];
    client.fallbackNotificationHandler = async (notification) => {
      if (notification.method === 'notifications/tasks') notifications.push(notification.params);
    };
    try {
      const discover = await client.discover();
      const { tools } = await client.listTools();
      const subscription = await client.listen({ taskIds });
      // The stream ends once every listed task has; a timer of its own bounds the wait.
      let timer;
      const ended = await Promise.race([
        subscription.closed,
        new Promise((resolve) => (timer = setTimeout(resolve, 30_000, 'timeout'))),
      ]);
      clearTimeout(timer);
      await subscription.close();
      return {
        era: client.getProtocolEra(),
        discover,
        tools: tools.map((t) => ({ name: t.name, taskSupport: t.execution?.taskSupport })),
        honored: subscription.honoredFilter,
        ended,
        notifications: notifications.map((n) => ({ taskId: n.taskId, status: n.status })),
      };
    } finally {
      await client.close();
    }
  },
};

const [step, input] = process.argv.slice(2);
try {
  const output = await steps[step](JSON.parse(input));
  process.stdout.write(`${JSON.stringify(output)}\n`);
} catch (error) {
  process.stderr.write(`${error?.stack ?? String(error)}\n`);
  process.exitCode = 1;
}
