/**
 * An audit of every committed write of a task and of its lease row, installed by the chaos run
 * into its own database (never a migration: production does not pay for it). The checker reads
 * it to prove invariants the final rows cannot show: no write under an expired lease, no claim
 * of a row another worker still held, no stored remote handle replaced, no change to a terminal
 * row.
 *
 * A write touches the lease row (docs/leases.md, "The lease table": a claim, a release, a
 * renewal, a task's end), the task row, or both in one statement, after locking the lease row.
 * So each table has its own audit, and READ_AUDIT_SQL pairs the rows one statement wrote (same
 * task, transaction and statement start) into one row with the lease as it was before the write
 * and the task's fields before and after. A write of the task alone ran under a lease it only
 * locked: the lease the task's audit saw at that moment is that lease.
 *
 * `at` is the writing transaction's `now()`: the same clock the fenced `WHERE lease_expires_at >
 * now()` uses, so "old lease expired at write time" is exactly the fencing predicate, re-checked
 * from outside. An AFTER trigger sees only writes that happened (a fenced write that matched
 * nothing fires nothing), and a rolled-back transaction takes its audit rows with it.
 */
/**
 * Each audit row's identity: the write's task, transaction and statement start (a statement's
 * rows in both tables pair on these), its database time and the writer.
 */
const WRITE_COLUMNS = `id            bigint PRIMARY KEY DEFAULT nextval('chaos_audit_seq'),
  task_id       text NOT NULL,
  xid           xid8 NOT NULL DEFAULT pg_current_xact_id(),
  statement_at  timestamptz NOT NULL DEFAULT statement_timestamp(),
  at            timestamptz NOT NULL DEFAULT now(),
  app           text NOT NULL DEFAULT current_setting('application_name'),`;

export const INSTALL_LEASE_AUDIT_SQL = `
CREATE SEQUENCE chaos_audit_seq;
CREATE TABLE chaos_lease_audit (
  ${WRITE_COLUMNS}
  old_owner     text,
  new_owner     text,
  old_token     uuid,
  new_token     uuid,
  old_expires   timestamptz,
  new_expires   timestamptz,
  op            text NOT NULL,
  task_status   text,
  task_remote   text,
  task_submit_started timestamptz
);
CREATE TABLE chaos_task_audit (
  ${WRITE_COLUMNS}
  old_status    text NOT NULL,
  new_status    text NOT NULL,
  old_remote    text,
  new_remote    text,
  old_submit_started timestamptz,
  new_submit_started timestamptz,
  lease_owner   text,
  lease_token   uuid,
  lease_expires timestamptz
);
CREATE FUNCTION chaos_lease_audit() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  t tasks%ROWTYPE;
BEGIN
  SELECT * INTO t FROM tasks WHERE id = OLD.task_id;
  INSERT INTO chaos_lease_audit (task_id, old_owner, new_owner, old_token, new_token,
                                 old_expires, new_expires, op, task_status, task_remote,
                                 task_submit_started)
  VALUES (OLD.task_id, OLD.lease_owner,
          CASE WHEN TG_OP = 'UPDATE' THEN NEW.lease_owner END, OLD.lease_token,
          CASE WHEN TG_OP = 'UPDATE' THEN NEW.lease_token END, OLD.lease_expires_at,
          CASE WHEN TG_OP = 'UPDATE' THEN NEW.lease_expires_at END, TG_OP,
          t.status, t.remote_task_id, t.submit_started_at);
  RETURN NULL;
END $$;
CREATE TRIGGER zz_chaos_lease_audit AFTER UPDATE OR DELETE ON task_leases
  FOR EACH ROW EXECUTE FUNCTION chaos_lease_audit();
CREATE FUNCTION chaos_task_audit() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  l task_leases%ROWTYPE;
BEGIN
  SELECT * INTO l FROM task_leases WHERE task_id = NEW.id;
  INSERT INTO chaos_task_audit (task_id, old_status, new_status, old_remote, new_remote,
                                old_submit_started, new_submit_started, lease_owner,
                                lease_token, lease_expires)
  VALUES (NEW.id, OLD.status, NEW.status, OLD.remote_task_id, NEW.remote_task_id,
          OLD.submit_started_at, NEW.submit_started_at, l.lease_owner, l.lease_token,
          l.lease_expires_at);
  RETURN NULL;
END $$;
CREATE TRIGGER zz_chaos_task_audit AFTER UPDATE ON tasks
  FOR EACH ROW EXECUTE FUNCTION chaos_task_audit();
`;

/** One audited write, as the checker reads it (READ_AUDIT_SQL). */
export interface AuditRow {
  task_id: string;
  at: Date;
  app: string;
  old_status: string;
  new_status: string;
  old_owner: string | null;
  new_owner: string | null;
  old_token: string | null;
  new_token: string | null;
  old_expires: Date | null;
  old_remote: string | null;
  new_remote: string | null;
  old_submit_started: Date | null;
  new_submit_started: Date | null;
  /**
   * The write moved only the lease row's schedule (its due time or the answers flag): owner,
   * token and expiry as they were, the task row untouched. A push wake (docs/leases.md, "Pushed
   * changes") is such a write, holding no lease by design, as a consumer's answer is.
   */
  schedule_only: boolean;
}

/**
 * The audit as one row per write: the lease and task audit rows of one statement paired. With a
 * lease row written, its old and new lease count; with only the task written, the lease it held
 * is both. With only the lease written, the task did not change.
 */
export const READ_AUDIT_SQL = `
SELECT coalesce(l.task_id, t.task_id) AS task_id,
       coalesce(l.at, t.at) AS at,
       coalesce(l.app, t.app) AS app,
       CASE WHEN t.id IS NULL THEN l.task_status ELSE t.old_status END AS old_status,
       CASE WHEN t.id IS NULL THEN l.task_status ELSE t.new_status END AS new_status,
       CASE WHEN l.id IS NULL THEN t.lease_owner ELSE l.old_owner END AS old_owner,
       CASE WHEN l.id IS NULL THEN t.lease_owner ELSE l.new_owner END AS new_owner,
       CASE WHEN l.id IS NULL THEN t.lease_token ELSE l.old_token END AS old_token,
       CASE WHEN l.id IS NULL THEN t.lease_token ELSE l.new_token END AS new_token,
       CASE WHEN l.id IS NULL THEN t.lease_expires ELSE l.old_expires END AS old_expires,
       CASE WHEN t.id IS NULL THEN l.task_remote ELSE t.old_remote END AS old_remote,
       CASE WHEN t.id IS NULL THEN l.task_remote ELSE t.new_remote END AS new_remote,
       CASE WHEN t.id IS NULL THEN l.task_submit_started ELSE t.old_submit_started END
         AS old_submit_started,
       CASE WHEN t.id IS NULL THEN l.task_submit_started ELSE t.new_submit_started END
         AS new_submit_started,
       (t.id IS NULL AND l.op = 'UPDATE'
        AND l.old_owner IS NOT DISTINCT FROM l.new_owner
        AND l.old_token IS NOT DISTINCT FROM l.new_token
        AND l.old_expires IS NOT DISTINCT FROM l.new_expires) AS schedule_only
  FROM chaos_lease_audit l
  FULL JOIN chaos_task_audit t
    ON t.task_id = l.task_id AND t.xid = l.xid AND t.statement_at = l.statement_at
 ORDER BY 1, least(l.id, t.id)`;
