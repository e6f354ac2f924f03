// An MCP server nobody here wrote, as strict as its library allows: the official SDK v2
// (@modelcontextprotocol/server) serving 2026-07-28 only (`legacy: 'reject'`: no initialize, no
// session), every answer an SSE stream (`responseMode: 'sse'`) with a keep-alive comment every
// 50 ms. With `--defaults`, the same server on the library's defaults instead: both eras without
// sessions, JSON unless a notification comes first. It has no tasks extension, as the SDK has
// none: a tools/call answers with its result, or with questions first (the SDK's
// `inputRequired`, a multi-round-trip call). The package is ESM only and the tests run as
// CommonJS, so the test spawns this file with Node.
//
//   node official-2026-server.mjs [--defaults]   prints "listening on http://127.0.0.1:<port>"
//   node official-2026-server.mjs --stdio [--defaults]   the same server over stdio
//
// Tools: `slow_echo {text, ms}` sends a log notification (and a progress one when the request has
// a progress token), waits `ms`, then answers `echo: <text>` (or throws, for the text `fail`);
// `confirm_echo {text}` first asks whether to echo (a form elicitation), then answers
// `confirmed: <text>` or `declined`. A client that leaves during a call aborts it (the request's
// signal, as a server on Node's fetch-style adapters has it): `GET /aborted` lists the texts of
// the `slow_echo` calls aborted so far (over stdio, a line each in the file `ABORTED_FILE` names).
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import {
  McpServer,
  acceptedContent,
  createMcpHandler,
  inputRequired,
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod/v4';

/** The texts of the slow_echo calls whose client left before the answer. */
const aborted = [];

/** Waits `ms`, or until the call is aborted (its client left). */
function wait(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}

function build() {
  const server = new McpServer(
    { name: 'official-strict', version: '1.0.0' },
    { capabilities: { logging: {} } },
  );
  server.registerTool(
    'slow_echo',
    {
      description: 'Echoes text after a delay, with a log and a progress notification first.',
      inputSchema: z.object({ text: z.string(), ms: z.number().int().min(0).max(60_000) }),
    },
    async ({ text, ms }, ctx) => {
      await ctx.mcpReq.notify({
        method: 'notifications/message',
        params: { level: 'info', data: `echoing ${text.length} characters` },
      });
      const progressToken = ctx.mcpReq._meta?.progressToken;
      if (progressToken !== undefined) {
        await ctx.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken, progress: 1, total: 2, message: 'half way' },
        });
      }
      await wait(ms, ctx.mcpReq.signal);
      if (ctx.mcpReq.signal.aborted) {
        aborted.push(text);
        if (process.env.ABORTED_FILE) appendFileSync(process.env.ABORTED_FILE, `${text}\n`);
        throw new Error('the client left');
      }
      if (text === 'fail') throw new Error('asked to fail');
      return { content: [{ type: 'text', text: `echo: ${text}` }] };
    },
  );
  const confirmation = z.object({ confirm: z.boolean() });
  server.registerTool(
    'confirm_echo',
    {
      description: 'Asks whether to echo the text, then does what the answer says.',
      inputSchema: z.object({ text: z.string() }),
    },
    async ({ text }, ctx) => {
      const answer = acceptedContent(ctx.mcpReq.inputResponses, 'confirm', confirmation);
      if (answer === undefined) {
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({
              message: `Echo "${text}"?`,
              requestedSchema: confirmation,
            }),
          },
        });
      }
      return {
        content: [{ type: 'text', text: answer.confirm ? `confirmed: ${text}` : 'declined' }],
      };
    },
  );
  return server;
}

if (process.argv.includes('--stdio')) {
  // Over stdio: strict refuses initialize (a 2025-11-25 client) with an error; defaults serve it.
  serveStdio(build, process.argv.includes('--defaults') ? {} : { legacy: 'reject' });
} else {
  serveHttp(
    process.argv.includes('--defaults')
      ? createMcpHandler(build)
      : createMcpHandler(build, { legacy: 'reject', responseMode: 'sse', keepAliveMs: 50 }),
  );
}

/**
 * Node's request as a web Request (the body read whole: requests here are small), whose signal
 * aborts when the client leaves before the answer is written.
 */
async function webRequest(req, res) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const method = req.method ?? 'GET';
  const body = method === 'GET' || method === 'HEAD' ? undefined : Buffer.concat(chunks);
  const left = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) left.abort();
  });
  const url = `http://${req.headers.host}${req.url}`;
  return new Request(url, { method, headers, body, signal: left.signal });
}

/** Serves `handler` over HTTP on a free loopback port, and `GET /aborted`. */
function serveHttp(handler) {
  const http = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/aborted') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify(aborted));
    }
    webRequest(req, res)
      .then((request) => handler.fetch(request))
      .then((response) => {
        res.writeHead(response.status, Object.fromEntries(response.headers));
        if (response.body === null) return res.end();
        const body = Readable.fromWeb(response.body);
        res.on('close', () => body.destroy());
        body.on('error', () => res.destroy());
        body.pipe(res);
      })
      .catch((error) => {
        process.stderr.write(`official-2026-server: ${error?.stack ?? error}\n`);
        res.destroy();
      });
  });
  http.keepAliveTimeout = 60_000;
  http.listen(0, '127.0.0.1', () => {
    process.stdout.write(`listening on http://127.0.0.1:${http.address().port}\n`);
  });
  process.on('SIGTERM', () => {
    http.closeAllConnections();
    http.close(() => process.exit(0));
  });
}
