import { INestApplication } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Express } from 'express';
import type { Server } from 'node:http';
import { Settings } from '@app/config';
import { GatewayMetrics } from '@app/metrics';
import { bearerFirstMiddleware } from './auth/bearer-first.middleware';
import { httpMetricsMiddleware } from './http/http-metrics.middleware';
import { jsonBodyMiddlewares } from './http/json-body.middleware';
import { McpRequestGuard } from './front-door/mcp-request-guard.service';
import { setupOpenApi } from './openapi/openapi';
import { ProblemFilter } from './problem/problem.filter';
import { SubmitFastPathHandler } from './tasks/submit-fast-path.handler';

/**
 * Everything main.ts does to the app besides listening, shared with the tests so they run the
 * API exactly as it is deployed. The app must be created with `bodyParser: false` (see
 * createApiApp): the body parsing here is the only one, with its limit and its 415.
 */
export function configureApp(app: INestApplication, settings: Settings): void {
  const express = app.getHttpAdapter().getInstance() as Express;
  // A proxy in front ends idle connections, not the API (HTTP_KEEP_ALIVE_TIMEOUT_MS).
  (app.getHttpServer() as Server).keepAliveTimeout = settings.http.keepAliveTimeoutMs;
  // In front of Express for the one route whose CPU per request sets the API's capacity.
  if (settings.api.submitFastPath) {
    app.get(SubmitFastPathHandler).install(app.getHttpServer() as Server, express);
  }
  express.disable('x-powered-by');
  // Middleware order matters: timing first, so refused requests are measured too.
  app.use(httpMetricsMiddleware(app.get(GatewayMetrics)));
  // Then the bearer's syntax, so an anonymous request is refused before its body is read.
  app.use(bearerFirstMiddleware(app.get(McpRequestGuard)));
  for (const middleware of jsonBodyMiddlewares()) app.use(middleware);
  app.useGlobalFilters(new ProblemFilter(app.get(HttpAdapterHost)));
  setupOpenApi(app);
}
