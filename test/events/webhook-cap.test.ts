// Guards against the 10-webhooks-per-user cap being a check-then-insert race: creates sent at once
// (each with its DNS check between the count and the insert) must never store more than 10.
import request from 'supertest';
import { signJwt, useApi } from '../helpers/api';

const api = useApi({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }, catalog: [] });

it('stores at most 10 subscriptions when 30 creates of one user race', async () => {
  const token = signJwt('racer');
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      request(api.url)
        .post('/v1/webhooks')
        .set('Authorization', `Bearer ${token}`)
        .send({ url: `http://127.0.0.1:9/hook-${i}` }),
    ),
  );
  const statuses = answers.map((res) => res.status);
  expect(statuses.filter((s) => s === 201)).toHaveLength(10);
  expect(statuses.filter((s) => s === 422)).toHaveLength(20);
  for (const res of answers.filter((r) => r.status === 422)) {
    expect(res.body.detail).toBe('At most 10 webhooks per user.');
  }
  const stored = await api.db.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_subscriptions WHERE user_id = 'racer'`,
  );
  expect(stored[0].n).toBe(10);
});
