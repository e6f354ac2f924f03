/**
 * The fleet-wide cap of a server (docs/leases.md, "Fleet-wide caps"; `fleetMaxConcurrentCalls`):
 * before a claim that may lease rows of capped servers, in the same transaction, the claimer
 * takes one advisory lock per capped server (FLEET_LOCK_SQL), counts their live leases
 * (FLEET_LIVE_SQL) and cuts each server's room to what the fleet has left; the claim itself
 * knows nothing of fleet caps (task-claim.ts). Only claims with a capped server in view pay
 * for this; the others run the claim alone.
 *
 * Index: `task_leases_leased_idx` (lease_expires_at) WHERE lease_token IS NOT NULL: the count
 * reads the rows holding a lease (a few per slot of the fleet), never the backlog, so its cost
 * follows the fleet's slots and not the table's size. The lock is an advisory transaction lock:
 * no row is written, and it ends with the claim's commit.
 */
/** The advisory-lock key space of the fleet-cap locks (the second key is the server's hash). */
const FLEET_LOCK_SPACE = 0x6d637066;

/**
 * Taken before a claim that may lease rows of fleet-capped servers, in the same transaction:
 * one claimer at a time counts a capped server's live leases and claims. Locks are taken in key
 * order, so two claimers never wait on each other crosswise.
 */
export const FLEET_LOCK_SQL = `
SELECT count(pg_advisory_xact_lock(${FLEET_LOCK_SPACE}, k)) AS locked
  FROM (SELECT DISTINCT hashtext(s) AS k FROM unnest($1::text[]) AS s ORDER BY 1) keys`;

/**
 * Live leases per capped server ($1), fleet-wide, after FLEET_LOCK_SQL: a statement of its own,
 * so its snapshot (READ COMMITTED) includes every lease the lock's previous holder committed.
 * A held sync call renews its lease, so it counts for as long as it runs. Reads only
 * `task_leases_leased_idx` (the rows holding a lease), never the backlog.
 */
export const FLEET_LIVE_SQL = `
SELECT l.server, count(*)::int AS live
  FROM task_leases l
 WHERE l.lease_token IS NOT NULL
   AND l.lease_expires_at > now()
   AND l.server = ANY($1::text[])
 GROUP BY l.server`;
