import { createHmac } from 'node:crypto';
import { ApiKeyRepository, CatalogRepository } from '@app/persistence';
import { Contract, PublishedToolset } from '@app/common';
import { createTestDatabase, TestDatabase } from './db';
import { useFixture } from './fixture';
import { NodeProcess, startNode } from './node-process';

export const JWT_SECRET = 'test-secret-that-is-long-enough-0123456789';
export const ISSUER = 'https://issuer.test';
export const AUDIENCE = 'mcp-task-gateway';

/**
 * A running API over its own migrated database. The compiled app (dist/, built by `npm test`)
 * runs as a child process, exactly as deployed; in-process would also need jose, which is
 * ESM-only and not loadable by jest's CommonJS runtime.
 */
export interface ApiHarness {
  url: string;
  metricsUrl: string;
  db: TestDatabase;
  process: NodeProcess;
  close(): Promise<void>;
}

/** One API process (the compiled app, as deployed) on a given database. */
export interface ApiProcess {
  url: string;
  metricsUrl: string;
  process: NodeProcess;
}

/**
 * Starts an API process on `databaseUrl` and resolves once it listens; several of them on one
 * database make replicas of one deployment. `env` overrides settings.
 */
export async function startApiProcess(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<ApiProcess> {
  const child = startNode('apps/api/main.js', [], {
    DATABASE_URL: databaseUrl,
    PORT: '0',
    METRICS_PORT: '0',
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
    AUTH_JWT_SECRET: JWT_SECRET,
    AUTH_ISSUER: ISSUER,
    AUTH_AUDIENCE: AUDIENCE,
    SUBMIT_RATE_LIMIT_PER_MINUTE: '0',
    ...env,
  });
  try {
    const line = await child.waitForLine(/api listening on port \d+/, 30_000);
    const [, port, metricsPort] = /port (\d+), metrics on port (\d+)/.exec(line)!;
    return {
      url: `http://127.0.0.1:${port}`,
      metricsUrl: `http://127.0.0.1:${metricsPort}`,
      process: child,
    };
  } catch (error) {
    await child.kill();
    throw error;
  }
}

/** Starts the API on a free port against a fresh database; `env` overrides settings. */
export async function startApi(env: Record<string, string> = {}): Promise<ApiHarness> {
  const db = await createTestDatabase();
  let api: ApiProcess;
  try {
    api = await startApiProcess(db.url, env);
  } catch (error) {
    await db.drop();
    throw error;
  }
  return {
    ...api,
    db,
    async close() {
      await api.process.kill('SIGTERM');
      await db.drop();
    },
  };
}

/**
 * Registers a test file's API: started on a fresh database in beforeAll with `catalog` published
 * (default: one available `report` toolset; `[]` publishes nothing), closed in afterAll. The
 * harness it returns is usable from beforeAll on; `env` overrides settings.
 */
export function useApi(
  options: { env?: Record<string, string>; catalog?: PublishedToolset[] } = {},
): ApiHarness {
  return useFixture(
    'the API',
    async () => {
      const harness = await startApi(options.env);
      const catalog = options.catalog ?? [catalogEntry()];
      if (catalog.length > 0) await publishCatalog(harness, catalog);
      return harness;
    },
    (harness) => harness.close(),
  );
}

/** An HS256 JWT as the configured issuer would sign it; `claims` override the defaults. */
export function signJwt(
  sub: string | undefined,
  claims: Record<string, unknown> = {},
  secret = JWT_SECRET,
): string {
  const now = Math.floor(Date.now() / 1000);
  const payload = { iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + 300, sub, ...claims };
  const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  const signingInput = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(payload)}`;
  const signature = createHmac('sha256', secret).update(signingInput).digest('base64url');
  return `${signingInput}.${signature}`;
}

/** A fresh API key for `userId`, as `npm run keys -- create` makes one. */
export async function apiKeyFor(api: Pick<ApiHarness, 'db'>, userId: string): Promise<string> {
  return (await new ApiKeyRepository(api.db.db).create(userId, 'test')).key;
}

/** The operator's way to a key: the keys CLI, whose last stdout line is the key itself. */
export async function createKeyWithCli(
  databaseUrl: string,
  userId: string,
  name = 'test',
): Promise<string> {
  const cli = startNode('apps/cli/main.js', ['keys', 'create', '--user', userId, '--name', name], {
    DATABASE_URL: databaseUrl,
  });
  const code = await cli.exited;
  if (code !== 0) throw new Error(`keys create exited ${String(code)}: ${cli.stderr.join('\n')}`);
  const key = cli.lines.at(-1)?.trim();
  if (!key) throw new Error('keys create printed no key');
  return key;
}

/** A catalog entry as a poller would publish it; defaults to an available ordinary toolset. */
export function catalogEntry(overrides: Partial<PublishedToolset> = {}): PublishedToolset {
  return {
    name: 'report',
    server: 'srv-internal-x7q',
    contract: Contract.Ordinary,
    description: 'Builds a report (contract: ordinary)',
    inputSchema: {
      type: 'object',
      properties: {
        title: { type: 'string', minLength: 1 },
        pages: { type: 'integer', minimum: 1, maximum: 100 },
      },
      required: ['title'],
      additionalProperties: false,
    },
    available: true,
    unavailableReason: null,
    ...overrides,
  };
}

export async function publishCatalog(
  api: Pick<ApiHarness, 'db'>,
  entries: PublishedToolset[],
): Promise<void> {
  await new CatalogRepository(api.db.db).publish(entries);
}

/** `Authorization` header value for a token. */
export function bearer(token: string): string {
  return `Bearer ${token}`;
}
