-- The quota-checked submit as the API sends it now: no NOTIFY inside its transaction (the API
-- sends the pollers' wake-up after the commit; notify.sql stands in for that). 50 users.
\set u random(1, 50)
SELECT id FROM submit_task_notify_after_commit('t' || md5(random()::text), 'user-' || :u, 'th', 'demo-ordinary', 'ordinary', 'demo', '{}', NULL, NULL, NULL, NULL, 3600, NULL, 0, 0, 1);
