import { MigrationInterface, QueryRunner } from 'typeorm';

/** tasks_guard of the initial schema, with `queuedTo` the statuses a queued task may move to. */
function guardFunction(queuedTo: string): string {
  return `
    CREATE OR REPLACE FUNCTION tasks_guard() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF OLD.status IN ('completed', 'failed', 'cancelled') THEN
        IF (to_jsonb(NEW) - 'thread_deleted_at' - 'updated_at')
           IS DISTINCT FROM (to_jsonb(OLD) - 'thread_deleted_at' - 'updated_at') THEN
          RAISE EXCEPTION 'task % is terminal (%) and cannot change', OLD.id, OLD.status
            USING ERRCODE = 'check_violation';
        END IF;
      ELSIF NEW.status IS DISTINCT FROM OLD.status AND NOT (
           (OLD.status = 'queued' AND NEW.status IN (${queuedTo}))
        OR (OLD.status = 'working' AND NEW.status IN ('input_required', 'completed', 'failed', 'cancelled'))
        OR (OLD.status = 'input_required' AND NEW.status IN ('working', 'completed', 'failed', 'cancelled'))
      ) THEN
        RAISE EXCEPTION 'illegal task transition % -> % for %', OLD.status, NEW.status, OLD.id
          USING ERRCODE = 'check_violation';
      END IF;
      NEW.updated_at := now();
      RETURN NEW;
    END $$`;
}

/**
 * Answers to a task's questions (docs/contracts.md, "Answering questions").
 *
 * - `input_responses` maps a request key to `{response, received_at, sent_at?, delivered_at?}`.
 *   The API adds keys; only the poller holding the lease marks them sent (before it sends, so a
 *   crash leaves the key visibly uncertain) and delivered (after the upstream acknowledged).
 *   A key, once stored, is never replaced: answers are unique per key for the task's life.
 * - Questions waiting at migration time are rewritten to the one shape (not answerable: the
 *   gateway never sent them in a form an answer could go back to).
 * - A submit may now end without an upstream task: the server answered at once (`queued` →
 *   `completed` / `failed`) or asked questions first (`queued` → `input_required`).
 * - `tasks_answer_due`: a row released with answers never sent is due at once, so an answer the
 *   API stored while a poller held the row is not left waiting for the next slow poll. Only on a
 *   release without an error (`consecutive_errors = 0`): a failing upstream keeps its backoff.
 */
export class InputResponses1796089639290 implements MigrationInterface {
  name = 'InputResponses1796089639290';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tasks ADD COLUMN input_responses jsonb`);
    // Questions already waiting move to the one shape; their next poll rewrites them anyway.
    await q.query(`
      UPDATE tasks
         SET input_required = jsonb_build_object(
               'requests', jsonb_build_object('q-stored', jsonb_build_object(
                 'method', 'elicitation/create',
                 'params', jsonb_build_object(
                   'mode', 'form',
                   'message', coalesce(input_required->>'question', input_required::text),
                   'question', input_required))),
               'answerable', false)
       WHERE status = 'input_required' AND input_required IS NOT NULL
         AND NOT (input_required ? 'requests')`);
    await q.query(guardFunction(`'working', 'input_required', 'completed', 'failed', 'cancelled'`));
    await q.query(`
      CREATE FUNCTION tasks_answer_due() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.consecutive_errors = 0 AND NEW.next_attempt_at > now()
           AND EXISTS (SELECT 1 FROM jsonb_each(coalesce(NEW.input_responses, '{}'::jsonb)) a
                        WHERE NOT (a.value ? 'sent_at')) THEN
          NEW.next_attempt_at := now();
        END IF;
        RETURN NEW;
      END $$`);
    // The WHEN clause keeps the function off the hot path: only releases of waiting rows with
    // answers run it.
    await q.query(`CREATE TRIGGER tasks_answer_due BEFORE UPDATE ON tasks FOR EACH ROW
                   WHEN (NEW.status = 'input_required' AND NEW.input_responses IS NOT NULL
                         AND NEW.lease_token IS NULL AND OLD.lease_token IS NOT NULL)
                   EXECUTE FUNCTION tasks_answer_due()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER tasks_answer_due ON tasks`);
    await q.query(`DROP FUNCTION tasks_answer_due`);
    await q.query(guardFunction(`'working', 'failed', 'cancelled'`));
    await q.query(`ALTER TABLE tasks DROP COLUMN input_responses`);
  }
}
