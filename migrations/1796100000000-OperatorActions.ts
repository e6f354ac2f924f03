import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The operator action log (docs/operations.md, "Operator commands"): one row per re-drive,
 * force-fail or webhook replay, whoever ran it (CLI or admin route) and whatever came of it
 * (`ok`, or why it was refused). Append-only: nothing in the code updates or deletes a row.
 */
export class OperatorActions1796100000000 implements MigrationInterface {
  name = 'OperatorActions1796100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE operator_actions (
        id         bigserial PRIMARY KEY,
        actor      text NOT NULL CHECK (char_length(actor) BETWEEN 1 AND 200),
        via        text NOT NULL CHECK (via IN ('cli', 'api')),
        action     text NOT NULL CHECK (action IN ('redrive', 'force_fail', 'replay_delivery')),
        target     text NOT NULL,
        reason     text CHECK (char_length(reason) <= 1000),
        outcome    text NOT NULL,
        detail     text CHECK (char_length(detail) <= 1000),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX operator_actions_created_idx ON operator_actions (created_at DESC)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE operator_actions`);
  }
}
