// Guards against a JWT mode booting without an issuer and an audience to check, which would accept any token signed by the same keys.
import { JWT_SECRET } from '../helpers/api';
import { useProcesses } from '../helpers/process-scope';

const DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const processes = useProcesses();

it.each([
  ['AUTH_JWT_SECRET without AUTH_ISSUER', { AUTH_JWT_SECRET: JWT_SECRET, AUTH_AUDIENCE: 'gw' }],
  [
    'AUTH_JWT_SECRET without AUTH_AUDIENCE',
    { AUTH_JWT_SECRET: JWT_SECRET, AUTH_ISSUER: 'https://i' },
  ],
  ['AUTH_JWKS_URL without either', { AUTH_JWKS_URL: 'https://idp.invalid/jwks.json' }],
])('%s: the API and the poller refuse to boot, exit 78, naming the variables', async (_, env) => {
  for (const app of ['apps/api/main.js', 'apps/poller/main.js']) {
    const child = processes.node(app, [], {
      DATABASE_URL,
      PORT: '0',
      METRICS_PORT: '0',
      AUTH_JWKS_URL: '',
      AUTH_JWT_SECRET: '',
      AUTH_ISSUER: '',
      AUTH_AUDIENCE: '',
      ...env,
    });
    expect(await child.exited).toBe(78);
    const text = child.stderr.join('\n');
    expect(text).toContain('AUTH_ISSUER, AUTH_AUDIENCE: both are required');
    expect(text).not.toContain(JWT_SECRET);
  }
});
