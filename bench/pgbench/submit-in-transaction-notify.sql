-- The quota-checked submit as an older API sends it: submit_task, whose insert trigger NOTIFYs
-- inside the submit's transaction. 50 users, as the API benchmark. See docs/benchmarks.md,
-- "End to end and API submit", for the command and the figures.
\set u random(1, 50)
SELECT id FROM submit_task('t' || md5(random()::text), 'user-' || :u, 'th', 'demo-ordinary', 'ordinary', 'demo', '{}', NULL, NULL, NULL, NULL, 3600, NULL, 0, 0, 1);
