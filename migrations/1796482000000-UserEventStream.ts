import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `GET /v1/events` (docs/api.md, "Events across threads"): a user's events of every thread in
 * stream order, (tx, id), read page by page after a cursor. The (user_id, thread_id, tx, id)
 * index serves one thread only; without this one each page would read and sort all the user's
 * retained events.
 *
 * Rolling-deploy safe: an index only. Built in the migration's transaction, it holds writes to
 * task_events (so every status change) for as long as the build takes; the table holds only the
 * events of the last EVENT_RETENTION_HOURS.
 */
export class UserEventStream1796482000000 implements MigrationInterface {
  name = 'UserEventStream1796482000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX task_events_user_stream_idx ON task_events (user_id, tx, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX task_events_user_stream_idx`);
  }
}
