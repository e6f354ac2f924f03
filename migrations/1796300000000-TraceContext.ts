import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The W3C trace context of the submit request (`{"traceparent": …, "tracestate": …}`), so every
 * poller attempt and webhook delivery of the task joins the same trace (docs/operations.md,
 * Traces). NULL when tracing was off at submit.
 */
export class TraceContext1796300000000 implements MigrationInterface {
  name = 'TraceContext1796300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tasks ADD COLUMN trace_context jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tasks DROP COLUMN trace_context`);
  }
}
