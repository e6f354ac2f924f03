import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema';

/** The typed client of the gateway's HTTP API: one method per route, typed from openapi.json. */
export type GatewayClient = Client<paths>;

/** A task in detail, a task in a list, an event, a problem: the API's own shapes. */
export type Task = components['schemas']['TaskDto'];
export type TaskSummary = components['schemas']['TaskSummaryDto'];
export type TaskEvent = components['schemas']['TaskEventDto'];
export type Problem = components['schemas']['ProblemDto'];

export interface GatewayClientOptions {
  /** Where the API listens, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** A JWT or an `mtg_` API key, sent as `Authorization: Bearer …`. */
  token: string;
  /** Another fetch (a proxy agent, a test double); the global one by default. */
  fetch?: typeof fetch;
}

/** Creates the typed client; every request carries the bearer token. */
export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const auth: Middleware = {
    onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${options.token}`);
      return request;
    },
  };
  client.use(auth);
  return client;
}

/**
 * A refusal of the API (`application/problem+json`): branch on `problem.type`, one URI per cause
 * (`…/problems/quota-exceeded`, `…/problems/not-found`, …; the gateway's docs/api.md lists them).
 */
export class GatewayProblem extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(`${problem.title} (${status}): ${problem.detail}`);
    this.name = 'GatewayProblem';
  }

  /** The last segment of `type`, e.g. `quota-exceeded`. */
  get kind(): string {
    return this.problem.type.slice(this.problem.type.lastIndexOf('/') + 1);
  }
}

/** The data of an openapi-fetch answer, or its problem thrown as a {@link GatewayProblem}. */
export function unwrap<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.error !== undefined || answer.data === undefined) {
    throw new GatewayProblem(answer.response.status, answer.error as Problem);
  }
  return answer.data;
}
