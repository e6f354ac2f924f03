-- The wake-up the API sends after its submits commit, back to back from one client: more often
-- than the API's coalescing ever sends it (at most one in flight per process).
SELECT pg_notify('mcp_tasks_due', 'submit');
