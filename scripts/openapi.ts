// `npm run openapi`: writes the API's OpenAPI document to openapi.json at the repository root,
// built from the app itself (every controller and DTO, as GET /openapi.json serves it), so a
// client can be generated from a file in the repository (clients/typescript). The app is created
// on a scratch migrated database (it checks the schema at boot) and never listens.
// Run: `DATABASE_URL=postgres://... npm run openapi` (a server where it may create a database).
// test/api/openapi-artifact.test.ts fails while the committed file differs from what the app serves.
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSettings } from '@app/config';
import { createApiApp } from '../apps/api/src/api-app.factory';
import { buildOpenApiDocument } from '../apps/api/src/openapi/openapi';
import { withMigratedDatabase } from './schema-snapshot';

const ROOT = join(__dirname, '..', __filename.endsWith('.js') ? '..' : '');
/** The committed document. */
export const OPENAPI_FILE = join(ROOT, 'openapi.json');

/** Settings the app needs to be created besides its database; none changes a route or a type. */
const ENV: Readonly<Record<string, string>> = {
  AUTH_JWT_SECRET: 'openapi-document-needs-no-real-secret-0123456789',
  AUTH_ISSUER: 'https://issuer.invalid',
  AUTH_AUDIENCE: 'mcp-task-gateway',
  LOG_LEVEL: 'error',
};

/** The document as the app builds it, serialised as the committed file is. */
export function renderOpenApi(adminUrl: string): Promise<string> {
  return withMigratedDatabase(adminUrl, async (url) => {
    Object.assign(process.env, ENV, { DATABASE_URL: url });
    const app = await createApiApp(loadSettings());
    try {
      return `${JSON.stringify(buildOpenApiDocument(app), null, 2)}\n`;
    } finally {
      await app.close();
    }
  });
}

if (require.main === module) {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    process.stderr.write('DATABASE_URL is not set: point it at a Postgres server\n');
    process.exit(2);
  }
  renderOpenApi(adminUrl)
    .then((text) => {
      writeFileSync(OPENAPI_FILE, text);
      process.stdout.write(`wrote ${OPENAPI_FILE}\n`);
      process.exit(0);
    })
    .catch((error: unknown) => {
      process.stderr.write(`openapi: ${String(error)}\n`);
      process.exit(1);
    });
}
