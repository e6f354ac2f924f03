// Guards the line between "the database cannot serve this now" (the API answers 503, retry) and
// every other database error (a 500 whose cause is logged): a wrong answer either hides a bug
// behind "retry" or turns a failover into internal errors. Also guards the ping: a database that
// does not answer in time is down to the probes, however long the statement would have taken.
import type { Pool } from 'pg';
import { Database, isDatabaseUnavailable } from './database';

const pgError = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code });

it('takes a checkout timeout, a lost or refused connection and a server going away as unavailable', () => {
  expect(isDatabaseUnavailable(new Error('timeout exceeded when trying to connect'))).toBe(true);
  expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
  expect(
    isDatabaseUnavailable(pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')),
  ).toBe(true);
  for (const code of ['57P01', '57P03', '53300', '08006', '08P01']) {
    expect(isDatabaseUnavailable(pgError(code))).toBe(true);
  }
});

it('leaves statement errors and anything that is not an Error alone', () => {
  for (const code of ['23505', '40001', '42P01', '22P02', 'QUOTA']) {
    expect(isDatabaseUnavailable(pgError(code))).toBe(false);
  }
  expect(isDatabaseUnavailable(new Error('something else'))).toBe(false);
  expect(isDatabaseUnavailable('timeout exceeded when trying to connect')).toBe(false);
  expect(isDatabaseUnavailable(undefined)).toBe(false);
});

it('pings: true on an answer, false on an error or no answer in time', async () => {
  const pinging = (query: () => Promise<unknown>) => new Database({ query } as unknown as Pool);
  expect(await pinging(async () => ({ rows: [{ '?column?': 1 }] })).ping(50)).toBe(true);
  expect(await pinging(() => Promise.reject(new Error('ECONNREFUSED'))).ping(50)).toBe(false);
  expect(await pinging(() => new Promise(() => undefined)).ping(50)).toBe(false);
});
