// Guards against secrets in log lines and probe requests flooding the access log.
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import pinoHttp from 'pino-http';
import {
  buildHttpLoggerOptions,
  createLogger,
  defaultLogFormat,
  isHealthPath,
  taskLogger,
} from '@app/logging';

/** A pino destination that keeps parsed lines in memory. */
function memoryStream(): { write(line: string): void; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return {
    lines,
    write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>),
  };
}

describe('createLogger', () => {
  it('redacts tokens, secrets, passwords, API keys and upstream headers', () => {
    const out = memoryStream();
    const log = createLogger({ level: 'info', format: 'json', destination: out });
    log.info(
      {
        password: 'p1',
        upstream: { token: 't1', apiKey: 'k1', secret: 's1', name: 'reports' },
        headers: { Authorization: 'Bearer b1' },
        server: { headers: { 'X-Api-Key': 'k2' }, env: { TOKEN: 't2' } },
      },
      'connect',
    );
    const text = JSON.stringify(out.lines);
    for (const secret of ['p1', 't1', 'k1', 's1', 'b1', 'k2', 't2'])
      expect(text).not.toContain(`"${secret}"`);
    expect(text).toContain('"reports"');
    expect(out.lines[0].level).toBe('info');
  });

  it('binds task_id, phase, toolset and claim_id on a task child logger', () => {
    const out = memoryStream();
    const log = taskLogger(createLogger({ destination: out }), {
      task_id: 'task_1',
      phase: 'poll',
      toolset: 'demo-ordinary',
      claim_id: 'c1',
    });
    log.warn('transient error');
    expect(out.lines[0]).toMatchObject({
      task_id: 'task_1',
      phase: 'poll',
      toolset: 'demo-ordinary',
      claim_id: 'c1',
    });
  });

  it('defaults to JSON in production and pretty elsewhere', () => {
    expect(defaultLogFormat('production')).toBe('json');
    expect(defaultLogFormat(undefined)).toBe('pretty');
  });
});

describe('HTTP access log', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  it('skips health and metrics paths and never logs headers or query strings', async () => {
    const out = memoryStream();
    const logger = pinoHttp(buildHttpLoggerOptions({ level: 'info' }), out);
    server = createServer((req, res) => {
      logger(req, res);
      res.end('ok');
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const headers = { authorization: 'Bearer sekrit', cookie: 'sid=sekrit' };
    for (const path of ['/healthz/live', '/healthz/ready', '/metrics', '/v1/tasks?token=sekrit']) {
      await (await fetch(base + path, { headers })).text();
    }
    const deadline = Date.now() + 2_000;
    while (out.lines.length < 1 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 5));
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0]).toMatchObject({
      req: { method: 'GET', url: '/v1/tasks' },
      res: { statusCode: 200 },
    });
    expect(JSON.stringify(out.lines)).not.toContain('sekrit');
    expect(isHealthPath('/healthz/ready?x=1')).toBe(true);
    expect(isHealthPath('/v1/healthz')).toBe(false);
  });
});
