import { AttemptDeadlineError, Contract, isAttemptDeadline } from '@app/common';
import { attemptMarginMs, type ToolsetConfig } from '@app/config';
import {
  AttemptDeadline,
  attemptDeadlineMs,
  localLeaseEndMs,
  sendFloorMs,
} from './attempt-deadline';

const DB_NOW = new Date('2026-01-01T00:00:00.000Z');
const at = (ms: number): Date => new Date(DB_NOW.getTime() + ms);

describe('attempt deadline arithmetic', () => {
  it('the margin is a thirtieth of the lease, between 100 ms and 5 s', () => {
    expect(attemptMarginMs(60_000)).toBe(2000);
    expect(attemptMarginMs(30_000)).toBe(1000);
    expect(attemptMarginMs(3000)).toBe(100);
    expect(attemptMarginMs(500)).toBe(100);
    expect(attemptMarginMs(600_000)).toBe(5000);
  });

  it("counts the lease's length in database time from when the claim was sent", () => {
    // The pod's clock is an hour behind the database's: irrelevant, only the difference counts.
    const sent = DB_NOW.getTime() - 3_600_000;
    expect(localLeaseEndMs({ dbNow: DB_NOW, leaseExpiresAt: at(3000), claimSentAtMs: sent })).toBe(
      sent + 3000,
    );
  });

  it('ends the attempt the margin before the lease', () => {
    const claim = { dbNow: DB_NOW, leaseExpiresAt: at(60_000), claimSentAtMs: 1_000_000 };
    expect(attemptDeadlineMs(claim, 60_000)).toBe(1_000_000 + 60_000 - 2000);
  });

  it('a row without a lease has no time left', () => {
    const claim = { dbNow: DB_NOW, leaseExpiresAt: null, claimSentAtMs: 5000 };
    expect(localLeaseEndMs(claim)).toBe(5000);
    expect(attemptDeadlineMs(claim, 3000)).toBe(4900);
  });
});

describe('the time a submit needs to be sent (docs/leases.md, "Time to send a submit")', () => {
  const base = { name: 't', server: 's', retryOnCrash: false };
  const toolset = (contract: Contract): ToolsetConfig => {
    if (contract === Contract.Ordinary) {
      return { ...base, contract, submitTool: 'a', statusTool: 'b', cancelTool: 'c' };
    }
    if (contract === Contract.SyncCall) return { ...base, contract, tool: 't', callTimeoutMs: 1 };
    return { ...base, contract: Contract.McpTasks, tool: 't' };
  };
  const timeouts = { connectTimeoutMs: 15_000, callTimeoutMs: 12_000 };

  it("is the submit's connects and calls with the server's timeouts", () => {
    const http = { transport: 'http' as const, ...timeouts };
    expect(sendFloorMs(http, toolset(Contract.Ordinary), 60_000)).toBe(27_000);
    const pinned2026 = { ...http, protocolVersion: '2026-07-28' as const };
    expect(sendFloorMs(pinned2026, toolset(Contract.McpTasks), 60_000)).toBe(12_000);
  });

  it("is at most half the attempt's time, so a mark that lands at once always sends", () => {
    // 2c + 2k = 54 s fits the 58 s an attempt of a 60 s lease has, but a mark that took 5 s
    // would leave a submit the deadline could cut: half of 58 s is the floor then.
    const http = { transport: 'http' as const, ...timeouts };
    expect(sendFloorMs(http, toolset(Contract.McpTasks), 60_000)).toBe(29_000);
  });

  it("is half the attempt's time for a held call, whose first renewal comes at a third", () => {
    const http = { transport: 'http' as const, ...timeouts };
    expect(sendFloorMs(http, toolset(Contract.SyncCall), 60_000)).toBe(29_000);
    expect(sendFloorMs(http, toolset(Contract.SyncCall), 3000)).toBe(1450);
  });
});

describe('AttemptDeadline', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('aborts with an AttemptDeadlineError when the deadline passes, not before', () => {
    const parent = new AbortController();
    const deadline = new AttemptDeadline(parent.signal, 10_000 + 2700, 10_000);
    jest.advanceTimersByTime(2699);
    expect(deadline.signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(isAttemptDeadline(deadline.signal)).toBe(true);
    expect(deadline.signal.reason).toBeInstanceOf(AttemptDeadlineError);
    expect(parent.signal.aborted).toBe(false);
    deadline.dispose();
  });

  it("passes the poller's own abort through with its reason", () => {
    const parent = new AbortController();
    const deadline = new AttemptDeadline(parent.signal, 60_000, 0);
    const reason = new Error('lease lost');
    parent.abort(reason);
    expect(deadline.signal.reason).toBe(reason);
    expect(isAttemptDeadline(deadline.signal)).toBe(false);
    deadline.dispose();
  });

  it('a deadline already past aborts at once', () => {
    const deadline = new AttemptDeadline(new AbortController().signal, 0, 5000);
    jest.advanceTimersByTime(0);
    expect(isAttemptDeadline(deadline.signal)).toBe(true);
    deadline.dispose();
  });
});
