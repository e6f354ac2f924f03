/**
 * An audit of every committed UPDATE of `tasks`, installed by the chaos run into its own
 * database (never a migration: production does not pay for it). The checker reads it to prove
 * invariants the final rows cannot show: no write under an expired lease, no claim of a row
 * another worker still held, no stored remote handle replaced, no change to a terminal row.
 *
 * `at` is the writing transaction's `now()`: the same clock the fenced `WHERE lease_expires_at >
 * now()` uses, so "old lease expired at write time" is exactly the fencing predicate, re-checked
 * from outside. An AFTER trigger sees only writes that happened (a fenced write that matched
 * nothing fires nothing), and a rolled-back transaction takes its audit rows with it.
 */
export const INSTALL_LEASE_AUDIT_SQL = `
CREATE TABLE chaos_task_audit (
  id            bigserial PRIMARY KEY,
  task_id       text NOT NULL,
  at            timestamptz NOT NULL DEFAULT now(),
  app           text NOT NULL DEFAULT current_setting('application_name'),
  old_status    text NOT NULL,
  new_status    text NOT NULL,
  old_owner     text,
  new_owner     text,
  old_token     uuid,
  new_token     uuid,
  old_expires   timestamptz,
  old_remote    text,
  new_remote    text,
  old_submit_started timestamptz,
  new_submit_started timestamptz
);
CREATE INDEX chaos_task_audit_task_idx ON chaos_task_audit (task_id, id);
CREATE FUNCTION chaos_task_audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO chaos_task_audit (task_id, old_status, new_status, old_owner, new_owner, old_token,
                                new_token, old_expires, old_remote, new_remote,
                                old_submit_started, new_submit_started)
  VALUES (NEW.id, OLD.status, NEW.status, OLD.lease_owner, NEW.lease_owner, OLD.lease_token,
          NEW.lease_token, OLD.lease_expires_at, OLD.remote_task_id, NEW.remote_task_id,
          OLD.submit_started_at, NEW.submit_started_at);
  RETURN NULL;
END $$;
CREATE TRIGGER zz_chaos_task_audit AFTER UPDATE ON tasks
  FOR EACH ROW EXECUTE FUNCTION chaos_task_audit();
`;

/** One audited UPDATE, as the checker reads it. */
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
}

export const READ_AUDIT_SQL = `SELECT * FROM chaos_task_audit ORDER BY task_id, id`;
