import { Controller, Delete, Get, Inject, Logger, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import {
  ErrorCode2026,
  JsonRpcWireError,
  isStatelessRequest,
  validateRequest2026,
} from '@app/wire';
import { THREAD_ID_PATTERN, isRecord } from '@app/common';
import { Settings, SETTINGS } from '@app/config';
import { isDatabaseUnavailable } from '@app/persistence';
import { Public } from '../auth/public.decorator';
import { Principal } from '../auth/token-verifier.service';
import { problemBody } from '../problem/problem.exception';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../problem/problem.filter';
import { refusalProblem } from '../problem/refusal-problems';
import { AnyRefusal, MalformedRequest, NotFound, isRefusal } from '../refusals/refusal';
import { HeldCallsRegistry, McpClientScope } from './2025/held-calls.registry';
import { LEGACY_VERSIONS, Mcp2025Handler } from './2025/mcp-2025.handler';
import { Mcp2026Handler } from './2026/mcp-2026.handler';
import { McpCall } from './mcp-call.context';
import { McpRequestGuard } from './mcp-request-guard.service';
import { RESOURCE_METADATA_PREFIX } from './resource-metadata';
import { refusalError } from './refusal-errors';
import {
  JsonRpcId,
  acceptsStream,
  clientScope,
  idOf,
  invalidRequest,
  isClientResponse,
  newSessionId,
  urlThread,
} from './mcp-request.reading';
import { McpResponseChannel } from './mcp-response.channel';
import { TaskStatusStream } from './2025/task-status-stream.service';
import { TaskSubscriptions } from './2026/task-subscriptions.service';

/**
 * The MCP front door (docs/mcp.md): Streamable HTTP at `/mcp`, one POST per JSON-RPC message,
 * answered as JSON. Both eras share the endpoint: a request that carries the 2026-07-28
 * envelope (or asks `server/discover`) goes to the 2026 side, the rest to the 2025-11-25 side.
 * It has no sessions (tasks are bound to the caller's identity): GET is the 2025-11-25 status
 * stream, keyed by identity and thread like everything else, and DELETE answers 405.
 * Authentication is the API's own (the same tokens as `/v1`), checked here after the Origin so
 * a rebinding page learns nothing.
 */
@ApiExcludeController()
@Public()
@Controller()
export class McpController {
  private readonly logger = new Logger('McpFrontDoor');

  constructor(
    private readonly guard: McpRequestGuard,
    private readonly legacy: Mcp2025Handler,
    private readonly modern: Mcp2026Handler,
    private readonly held: HeldCallsRegistry,
    private readonly subscriptions: TaskSubscriptions,
    private readonly statusStream: TaskStatusStream,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /**
   * The protected-resource metadata, at `/mcp`'s own well-known path and at MCP_PUBLIC_URL's
   * (RFC 9728 puts the resource's path after the prefix; a bare prefix is a resource at `/`).
   */
  @Get(['.well-known/oauth-protected-resource', '.well-known/oauth-protected-resource/*resource'])
  resourceMetadata(@Req() req: Request, @Res() res: Response): void {
    const suffix = req.path.slice(RESOURCE_METADATA_PREFIX.length);
    const document = this.guard.servesMetadataAt(suffix) ? this.guard.resourceMetadata(req) : null;
    if (!document) return this.refuse(res, new NotFound('Not found.'));
    res.json(document);
  }

  /**
   * The 2025-11-25 side's server stream: task status notifications of the caller's tasks in the
   * endpoint's thread (TaskStatusStream). The 2026-07-28 side has no such stream (it pushes only
   * after `subscriptions/listen`), so a request that names that revision is answered 405.
   */
  @Get('mcp')
  async getStream(@Req() req: Request, @Res() res: Response): Promise<void> {
    const originRefusal = this.guard.originRefusal(req);
    if (originRefusal) return this.refuse(res, originRefusal);
    const version = req.headers['mcp-protocol-version'];
    if (typeof version === 'string' && !LEGACY_VERSIONS.includes(version)) {
      return this.notAllowed(res, 'This revision has no server stream: use subscriptions/listen.');
    }
    const principal = await this.guard.principal(req);
    if (McpRequestGuard.isRefusal(principal)) return this.refuse(res, principal);
    if (!String(req.headers.accept ?? '').includes('text/event-stream')) {
      // A transport answer, not a refusal of the core: no kind has it (docs/refusals.md).
      res
        .status(406)
        .type('application/problem+json')
        .json(problemBody(406, 'GET /mcp is an event stream: send Accept: text/event-stream.'));
      return;
    }
    const thread = urlThread(req) ?? this.settings.mcp.defaultThread;
    if (!THREAD_ID_PATTERN.test(thread)) {
      return this.refuse(
        res,
        new MalformedRequest(`?thread= must match ${THREAD_ID_PATTERN.source}.`),
      );
    }
    const reverify = async (): Promise<boolean> => {
      const again = await this.guard.principal(req, true);
      return !McpRequestGuard.isRefusal(again) && again.userId === principal.userId;
    };
    const refusal = await this.statusStream.serve(req, res, principal, thread, reverify);
    if (refusal) this.refuse(res, refusal);
  }

  @Delete('mcp')
  deleteSession(@Req() req: Request, @Res() res: Response): void {
    const refusal = this.guard.originRefusal(req);
    if (refusal) return this.refuse(res, refusal);
    this.notAllowed(res, 'This endpoint keeps no sessions: there is nothing to end.');
  }

  private notAllowed(res: Response, detail: string): void {
    res
      .status(405)
      .setHeader('Allow', 'GET, POST')
      .type('application/problem+json')
      .json(problemBody(405, detail));
  }

  @Post('mcp')
  async post(@Req() req: Request, @Res() res: Response): Promise<void> {
    const originRefusal = this.guard.originRefusal(req);
    if (originRefusal) return this.refuse(res, originRefusal);
    const principal = await this.guard.principal(req);
    if (McpRequestGuard.isRefusal(principal)) return this.refuse(res, principal);
    const body: unknown = req.body;
    if (Array.isArray(body)) {
      return this.answerError(res, null, invalidRequest('Batches are not supported'), 400);
    }
    if (isClientResponse(body)) return this.clientResponse(res, principal, body);
    if (!isRecord(body) || body.jsonrpc !== '2.0' || typeof body.method !== 'string') {
      return this.answerError(res, idOf(body), invalidRequest('Not a JSON-RPC 2.0 message'), 400);
    }
    if (body.id === undefined) {
      this.notification(clientScope(req, principal), body);
      res.status(202).end();
      return;
    }
    const abort = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    if (isStatelessRequest(req.headers, body)) await this.post2026(req, res, principal, abort);
    else await this.post2025(req, res, principal, body, abort);
  }

  private async post2026(
    req: Request,
    res: Response,
    principal: Principal,
    abort: AbortController,
  ): Promise<void> {
    const body = req.body as Record<string, unknown>;
    const channel = new McpResponseChannel(res, acceptsStream(req));
    try {
      const request = validateRequest2026(req.headers, body);
      // No notifications/cancelled here: over HTTP this revision cancels a request by closing
      // its response stream (the abort above), so the call is not in the held-calls registry.
      const call = {
        ...request,
        principal,
        headers: req.headers,
        urlThread: urlThread(req),
        abort: abort.signal,
        channel,
        relaysQuestions: false,
      };
      if (call.method === 'subscriptions/listen') return await this.subscriptions.serve(call, res);
      channel.answer(request.id, await this.modern.handle(call));
    } catch (error) {
      const wire = this.wireError(error);
      // After progress went out as SSE, the error ends that stream as the call's answer.
      channel.error(idOf(body), wire, wire.httpStatus);
    }
  }

  private async post2025(
    req: Request,
    res: Response,
    principal: Principal,
    body: Record<string, unknown>,
    abort: AbortController,
  ): Promise<void> {
    const id = idOf(body);
    const version = req.headers['mcp-protocol-version'];
    if (typeof version === 'string' && !LEGACY_VERSIONS.includes(version)) {
      const error = new JsonRpcWireError(
        ErrorCode2026.UnsupportedProtocolVersion,
        `Unsupported protocol version: ${version}`,
        { supported: LEGACY_VERSIONS, requested: version },
      );
      return this.answerError(res, id, error, 400);
    }
    if (id === null) return this.answerError(res, null, invalidRequest('Bad request id'), 400);
    const params = body.params === undefined ? {} : body.params;
    if (!isRecord(params)) {
      return this.answerError(res, id, new JsonRpcWireError(-32602, 'params must be an object'));
    }
    const channel = new McpResponseChannel(res, acceptsStream(req));
    const call: McpCall = {
      id,
      method: body.method as string,
      params,
      principal,
      headers: req.headers,
      urlThread: urlThread(req),
      abort: abort.signal,
      channel,
      relaysQuestions: true,
    };
    const unregister = this.held.register(clientScope(req, principal), id, abort);
    try {
      const result = await this.legacy.handle(call);
      if (call.method === 'initialize') res.setHeader('Mcp-Session-Id', newSessionId());
      channel.answer(id, result);
    } catch (error) {
      channel.error(id, this.wireError(error));
    } finally {
      unregister();
    }
  }

  /**
   * The client's answer to a request the server sent (a task's question, on `tasks/result`):
   * stored through the durable input path, 202; one that cannot be taken is 400 with the
   * JSON-RPC error (Streamable HTTP gives a response no other way to fail).
   */
  private async clientResponse(
    res: Response,
    principal: Principal,
    body: Record<string, unknown>,
  ): Promise<void> {
    try {
      await this.legacy.clientResponse(principal, body.id as string | number, body.result);
      res.status(202).end();
    } catch (error) {
      this.answerError(res, null, this.wireError(error), 400);
    }
  }

  /**
   * Notifications need no answer; `notifications/cancelled` ends a request of the same client
   * (user and session) that this replica holds. What that does to a held call's task is the
   * toolset's `mcp.clientCancel` (McpToolCalls.hold).
   */
  private notification(client: McpClientScope, body: Record<string, unknown>): void {
    if (body.method !== 'notifications/cancelled' || !isRecord(body.params)) return;
    this.held.cancel(client, body.params.requestId);
  }

  private wireError(error: unknown): JsonRpcWireError {
    if (error instanceof JsonRpcWireError) return error;
    if (isRefusal(error)) return refusalError(error);
    if (isDatabaseUnavailable(error)) {
      this.logger.warn(`answered service unavailable: ${String(error)}`);
      return new JsonRpcWireError(
        ErrorCode2026.InternalError,
        'Service unavailable: retry shortly',
        { retry_after_seconds: UNAVAILABLE_RETRY_AFTER_SECONDS },
      );
    }
    this.logger.error(error);
    return new JsonRpcWireError(ErrorCode2026.InternalError, 'Internal error');
  }

  private answerError(res: Response, id: JsonRpcId, error: JsonRpcWireError, status = 200): void {
    if (res.writableEnded || res.destroyed) return;
    res.status(status).json({ jsonrpc: '2.0', id, error: error.toJson() });
  }

  /** A refusal before any JSON-RPC ran: the problem answer `/v1` gives (refusal-problems.ts). */
  private refuse(res: Response, refusal: AnyRefusal): void {
    const answer = refusalProblem(refusal);
    for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
    res.status(answer.body.status).type('application/problem+json').json(answer.body);
  }
}
