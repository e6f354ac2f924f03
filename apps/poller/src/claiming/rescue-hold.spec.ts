// Guards the hold on rescues after a database outage (docs/leases.md, "Rescues after an
// outage"): no hold without an outage, a hold that spares every lease that ran out since this
// worker last reached the database, for half a lease from the first claim that reaches it again.
import { RescueHold } from './rescue-hold';

const HOLD_MS = 5000;

/** A pg connection refused, as an unreachable server answers. */
const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
  code: 'ECONNREFUSED',
});

function holdAt(startMs: number) {
  let nowMs = startMs;
  const hold = new RescueHold(HOLD_MS, () => nowMs);
  return {
    hold,
    at(ms: number) {
      nowMs = ms;
      return ms;
    },
  };
}

it('rescues every expired lease while the database answers', () => {
  const { hold, at } = holdAt(1000);
  expect(hold.minRescueAgeMs(at(2000))).toBe(0);
  expect(hold.reached(2000)).toBeUndefined();
  expect(hold.minRescueAgeMs(at(9000))).toBe(0);
});

it('an error that is not the database being unreachable holds nothing', () => {
  const { hold, at } = holdAt(1000);
  hold.failed(new Error('syntax error at or near "SELEC"'));
  expect(hold.minRescueAgeMs(at(2000))).toBe(0);
  expect(hold.reached(2000)).toBeUndefined();
});

it('after an outage, spares the leases that ran out since the database was last reached', () => {
  const { hold, at } = holdAt(0);
  // The last claim that reached the database, then claims refused for 20 s.
  hold.reached(at(1000));
  hold.failed(refused);
  at(21_000);
  // The first claim back is sent at 21 s: it may rescue only leases that ran out 20 s ago or
  // more, before 1 s by its clock, and it starts the hold.
  expect(hold.minRescueAgeMs(21_000)).toBe(20_000);
  expect(hold.reached(21_000)).toBe(HOLD_MS);
  // Claims within the hold keep the same bound on the database's clock (it moves with now()).
  expect(hold.minRescueAgeMs(at(25_000))).toBe(24_000);
  expect(hold.reached(25_000)).toBeUndefined();
  // At the hold's end every expired lease is a rescue again.
  expect(hold.minRescueAgeMs(at(26_000))).toBe(0);
  expect(hold.minRescueAgeMs(at(27_000))).toBe(0);
});

it('a failed heartbeat before any claim holds the next claim too', () => {
  const { hold, at } = holdAt(500);
  hold.failed(refused);
  expect(hold.minRescueAgeMs(at(8000))).toBe(7500);
  expect(hold.reached(8000)).toBe(HOLD_MS);
});

it("a busy worker's heartbeats, not only its claims, mark when it last reached the database", () => {
  const { hold, at } = holdAt(0);
  hold.reached(at(1000));
  // No claim for a minute (every slot busy), but heartbeats: the last one before the outage
  // bounds what the hold spares.
  hold.sawDatabase(at(58_000));
  hold.failed(refused);
  // A heartbeat during the outage that happens to get through starts no hold.
  hold.sawDatabase(at(60_000));
  expect(hold.minRescueAgeMs(at(70_000))).toBe(12_000);
  expect(hold.reached(70_000)).toBe(HOLD_MS);
});

it('a failure during the hold starts it over, from the first outage', () => {
  const { hold, at } = holdAt(0);
  hold.reached(at(1000));
  hold.failed(refused);
  hold.reached(at(10_000));
  at(12_000);
  hold.failed(refused);
  // Still failing: the hold has no end yet, whatever time passes.
  expect(hold.minRescueAgeMs(at(40_000))).toBe(39_000);
  expect(hold.reached(40_000)).toBe(HOLD_MS);
  expect(hold.minRescueAgeMs(at(44_999))).toBe(43_999);
  expect(hold.minRescueAgeMs(at(45_000))).toBe(0);
});

it("a hold that ran out with no claim since does not widen the next outage's", () => {
  const { hold, at } = holdAt(0);
  hold.reached(at(1000));
  hold.failed(refused);
  hold.reached(at(10_000));
  // The hold ends at 15 s, but no claim is made then (every slot busy); heartbeats go on.
  hold.sawDatabase(at(50_000));
  at(52_000);
  hold.failed(refused);
  expect(hold.minRescueAgeMs(at(60_000))).toBe(10_000);
});
