-- The ceiling for job creation: the same statement errand runs for a new job
-- (record it and queue it), with a fresh key every time, on the same server
-- (a database of its own, migrated like errand's, so that no worker consumes
-- the rows).
\set n random(1, 2000000000)
WITH inserted AS (
    INSERT INTO jobs (id, tenant_id, user_id, user_email, idempotency_key, fingerprint, job_type, params, max_attempts)
    VALUES (gen_random_uuid(), 'pgbench-' || :client_id, 'bench', NULL, :n || '-' || md5(random()::text), '\x00', 'noop', '{}', 5)
    ON CONFLICT (tenant_id, user_id, idempotency_key) DO NOTHING
    RETURNING id, tenant_id, user_id, job_type, params, state, attempt, max_attempts, run_at, result,
              error_message, created_at, finished_at, fingerprint
), queued AS (
    INSERT INTO job_queue (job_id, tenant_id, user_id, job_type, run_at, priority, turn)
    SELECT x.id, x.tenant_id, x.user_id, x.job_type, x.run_at, 0, t.turn
    FROM inserted x CROSS JOIN LATERAL errand_turn(x.tenant_id, x.user_id) t
)
SELECT id, tenant_id, user_id, job_type, params, state, attempt, max_attempts, run_at, result,
       error_message, created_at, finished_at, fingerprint, true AS created
FROM inserted;
