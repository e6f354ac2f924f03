// Guards the line between "the database cannot serve this now" (the API answers 503, retry) and
// every other database error (a 500 whose cause is logged): a wrong answer either hides a bug
// behind "retry" or turns a failover into internal errors. Also guards the ping: a database that
// does not answer in time is down to the probes, however long the statement would have taken,
// and one that takes no writes is not ready, its connection closed; and the statement bound: on
// every pool the apps open, never on the migrator's.
import type { Pool } from 'pg';
import { dataSourceOptions } from './data-source';
import { Database, poolConfig } from './database';
import { isDatabaseUnavailable } from './database-errors';

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
  // A write to a server that takes none: a standby the address still reaches.
  expect(isDatabaseUnavailable(pgError('25006'))).toBe(true);
});

it('takes a server out of disk, memory or another resource as unavailable (class 53)', () => {
  for (const code of ['53100', '53200', '53400']) {
    expect(isDatabaseUnavailable(pgError(code))).toBe(true);
  }
});

it('takes a statement past its bound as unavailable: no answer in time, or stopped by the server', () => {
  expect(isDatabaseUnavailable(new Error('Query read timeout'))).toBe(true);
  // statement_timeout (or a cancel), idle_in_transaction_session_timeout
  for (const code of ['57014', '25P03']) expect(isDatabaseUnavailable(pgError(code))).toBe(true);
});

it('leaves statement errors and anything that is not an Error alone', () => {
  for (const code of ['23505', '40001', '40P01', '42P01', '22P02', '58030', 'QUOTA']) {
    expect(isDatabaseUnavailable(pgError(code))).toBe(false);
  }
  expect(isDatabaseUnavailable(new Error('something else'))).toBe(false);
  expect(isDatabaseUnavailable('timeout exceeded when trying to connect')).toBe(false);
  expect(isDatabaseUnavailable(undefined)).toBe(false);
});

/**
 * A database over a pool whose one client answers `SHOW transaction_read_only` with `answer`;
 * `released` gets what the client was released with (an Error: the connection is closed).
 */
function database(answer: () => Promise<unknown>) {
  const released: unknown[] = [];
  const client = {
    query: answer,
    on: () => undefined,
    off: () => undefined,
    release: (error?: Error) => void released.push(error),
  };
  // pg-pool's callback form, which withClient uses (database.ts).
  const pool = {
    connect: (done: (error: undefined, checkedOut: typeof client) => void) =>
      done(undefined, client),
  } as unknown as Pool;
  return { db: new Database(pool), released };
}

const readOnly = (value: string) => () =>
  Promise.resolve({ rows: [{ transaction_read_only: value }] });

it('finds the database writable, read-only, or unreachable by no answer in time or an error', async () => {
  expect(await database(readOnly('off')).db.health(50)).toBe('writable');
  expect(await database(readOnly('on')).db.health(50)).toBe('read-only');
  expect(await database(() => Promise.reject(new Error('ECONNREFUSED'))).db.health(50)).toBe(
    'unreachable',
  );
  expect(await database(() => new Promise(() => undefined)).db.health(50)).toBe('unreachable');
});

it('pings true only for a writable database', async () => {
  expect(await database(readOnly('off')).db.ping(50)).toBe(true);
  expect(await database(readOnly('on')).db.ping(50)).toBe(false);
  expect(await database(() => Promise.reject(new Error('ECONNREFUSED'))).db.ping(50)).toBe(false);
});

it("closes a read-only server's connection, and pools a writable one's again", async () => {
  const writable = database(readOnly('off'));
  await writable.db.health(50);
  expect(writable.released).toEqual([undefined]);
  const standby = database(readOnly('on'));
  await standby.db.health(50);
  expect(standby.released).toEqual([expect.any(Error)]);
});

it("bounds every statement of the apps' pools, 10 s unless set, and not the migrator's", () => {
  const options = { url: 'postgres://db/gw', poolSize: 3, appName: 'app' };
  expect(poolConfig(options)).toMatchObject({
    query_timeout: 10_000,
    statement_timeout: 10_000,
    idle_in_transaction_session_timeout: 10_000,
    idleTimeoutMillis: 10_000,
  });
  // A connection idle longer than a shorter bound is not kept: it may have gone silent unseen.
  expect(poolConfig({ ...options, statementTimeoutMs: 2000 })).toMatchObject({
    query_timeout: 2000,
    statement_timeout: 2000,
    idle_in_transaction_session_timeout: 2000,
    idleTimeoutMillis: 2000,
  });
  const migrator = JSON.stringify(dataSourceOptions('postgres://db/gw', []));
  expect(migrator).not.toMatch(/query_timeout|statement_timeout|idle_in_transaction/);
  expect(migrator).toContain('jit=off');
});
