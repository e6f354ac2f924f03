import { INestApplication } from '@nestjs/common';
import { GATEWAY_VERSION } from '@app/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { PathItemObject, ResponseObject } from '@nestjs/swagger';
import { RETRY_AFTER_HEADER } from '../problem/api-problems.decorator';
import { PROBLEM_KINDS } from '../problem/problem-kinds';

/** The OpenAPI document of the API as registered (every controller and DTO). */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('MCP Task Gateway')
    .setDescription(
      'Durable long-running MCP tool work. Submit a task against a toolset, read it back later, ' +
        'cancel it. Every error is application/problem+json (RFC 9457). Authenticate with ' +
        '`Authorization: Bearer <JWT or API key>`.',
    )
    .setVersion(GATEWAY_VERSION)
    .setLicense('Apache-2.0', 'https://www.apache.org/licenses/LICENSE-2.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'A JWT or an mtg_ API key' })
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (controller, method) => OPERATION_IDS[`${controller}.${method}`] ?? '',
  });
  return withUnknownParameter(withUnavailable(withMethodNotAllowed(document)));
}

/**
 * The operation ID of each route, by controller class and method: the names a generated client
 * calls (`client.submitTask`), chosen for a caller, not derived from class names. A route missing
 * here gets an empty ID, and test/api/openapi-artifact.test.ts fails until it has one.
 */
const OPERATION_IDS: Readonly<Record<string, string>> = {
  'HealthController.health': 'getHealth',
  'HealthController.live': 'getLiveness',
  'HealthController.ready': 'getReadiness',
  'ToolsetsController.list': 'listToolsets',
  'StatusController.status': 'getStatus',
  'ThreadTasksController.submit': 'submitTask',
  'ThreadTasksController.list': 'listThreadTasks',
  'ThreadTasksController.get': 'getThreadTask',
  'ThreadTasksController.cancel': 'cancelTask',
  'ThreadTasksController.retry': 'retryTask',
  'TaskInputController.answer': 'answerTask',
  'ThreadsController.remove': 'deleteThread',
  'UserTasksController.list': 'listTasks',
  'UserTasksController.get': 'getTask',
  'ThreadEventsController.stream': 'streamThreadEvents',
  'ThreadEventsController.streamAll': 'streamEvents',
  'WebhooksController.create': 'createWebhook',
  'WebhooksController.list': 'listWebhooks',
  'WebhooksController.remove': 'deleteWebhook',
  'WebhooksController.deliveries': 'listWebhookDeliveries',
  'AdminController.stuck': 'listStuckTasks',
  'AdminController.redrive': 'redriveTask',
  'AdminController.fail': 'failTask',
  'AdminController.deadLetters': 'listDeadLetters',
  'AdminController.replay': 'replayDelivery',
  'AdminController.actions': 'listOperatorActions',
};

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const PROBLEM_CONTENT = {
  'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDto' } },
};

/**
 * Every path answers any method it does not route with 405 and `Allow` (the problem filter
 * does it). OpenAPI has no operation for an unrouted method, so each operation of the path
 * carries the 405 its siblings would give, with the path's own `Allow` list.
 */
function withMethodNotAllowed(doc: OpenAPIObject): OpenAPIObject {
  for (const item of Object.values(doc.paths)) {
    const routed = METHODS.filter((m) => item[m] !== undefined).map((m) => m.toUpperCase());
    if (routed.includes('GET')) routed.push('HEAD');
    const allow = [...new Set(routed)].sort().join(', ');
    addWhereMissing(item, '405', {
      description: `A method other than ${allow} on this path`,
      headers: {
        Allow: { description: "The path's methods", schema: { type: 'string', example: allow } },
      },
      content: PROBLEM_CONTENT,
    });
  }
  return doc;
}

/**
 * Every operation that reads the database answers 503 with `Retry-After` when the database cannot
 * serve it in time (the problem filter; docs/api.md, "Errors"): each operation without a 503 of
 * its own carries that one.
 */
function withUnavailable(doc: OpenAPIObject): OpenAPIObject {
  for (const [path, item] of Object.entries(doc.paths)) {
    // The probes answer from memory (liveness) or say 503 in their own words (readiness).
    if (path === '/healthz' || path.startsWith('/healthz/')) continue;
    addWhereMissing(item, '503', {
      description:
        'The database could not serve the request now (busy, unreachable or out of space); retry',
      headers: { 'Retry-After': RETRY_AFTER_HEADER },
      content: PROBLEM_CONTENT,
    });
  }
  return doc;
}

/**
 * Every operation refuses a query parameter it does not take with a 400 (QueryParamsGuard;
 * docs/api.md, "Errors"): each operation without a 400 of its own carries that one.
 */
function withUnknownParameter(doc: OpenAPIObject): OpenAPIObject {
  const kind = PROBLEM_KINDS.unknownParameter;
  for (const item of Object.values(doc.paths)) {
    addWhereMissing(item, '400', {
      description: `\`${kind.slug}\`: ${kind.means}`,
      content: PROBLEM_CONTENT,
    });
  }
  return doc;
}

/** Gives each operation of `item` that has no answer for `status` this one. */
function addWhereMissing(item: PathItemObject, status: string, response: ResponseObject): void {
  for (const method of METHODS) {
    const operation = item[method];
    if (operation && !operation.responses[status]) operation.responses[status] = response;
  }
}

/**
 * Serves the document at `/openapi.json` and a browsable page at `/docs`. Both are public (no
 * token): the contract is not a secret, and a newcomer needs it before holding a key.
 */
export function setupOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'openapi.json',
    yamlDocumentUrl: 'openapi.yaml',
  });
}
