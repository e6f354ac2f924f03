/** An answer from the API: status and parsed JSON body (or null). */
export interface ApiAnswer {
  status: number;
  body: Record<string, unknown> | null;
}

/**
 * The driver's HTTP client over the API replicas. Requests alternate between replicas; a
 * network error, a 5xx or a 429 is retried on the other replica with a capped backoff until the
 * deadline, because a Postgres restart makes both answer 5xx for a few seconds. Submits carry
 * the task's tag as `Idempotency-Key`, so a retried POST never creates a second task.
 */
export class GatewayClient {
  private turn = 0;
  retries = 0;

  constructor(
    private readonly replicas: () => string[],
    private readonly apiKey: string,
  ) {}

  async submit(thread: string, tag: string, toolset: string, args: unknown): Promise<ApiAnswer> {
    return this.send('POST', `/v1/threads/${thread}/tasks`, { toolset, arguments: args }, tag);
  }

  async cancel(thread: string, taskId: string): Promise<ApiAnswer> {
    return this.send('POST', `/v1/threads/${thread}/tasks/${taskId}/cancel`);
  }

  async send(
    method: string,
    path: string,
    body?: unknown,
    idempotencyKey?: string,
    timeoutMs = 60_000,
  ): Promise<ApiAnswer> {
    const deadline = Date.now() + timeoutMs;
    let delay = 100;
    for (;;) {
      const urls = this.replicas();
      const base = urls[this.turn++ % urls.length];
      let answer: ApiAnswer | undefined;
      let failure = '';
      try {
        answer = await this.once(base, method, path, body, idempotencyKey);
        if (answer.status < 500 && answer.status !== 429) return answer;
        failure = `HTTP ${answer.status}`;
      } catch (error) {
        failure = error instanceof Error ? error.message : String(error);
      }
      if (Date.now() > deadline) {
        throw new Error(`${method} ${path}: still failing after ${timeoutMs} ms (${failure})`);
      }
      this.retries++;
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 2000);
    }
  }

  private async once(
    base: string,
    method: string,
    path: string,
    body: unknown,
    idempotencyKey?: string,
  ): Promise<ApiAnswer> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.apiKey}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    const res = await fetch(`${base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    return {
      status: res.status,
      body: text ? (JSON.parse(text) as Record<string, unknown>) : null,
    };
  }
}
