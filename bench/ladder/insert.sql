-- The ceiling ladder's backlog (bench/ladder.sh): :jobs no-op jobs spread
-- round-robin over :tenants tenants, one user each, inserted by one
-- statement as bench/drain.sh's errand_drain_insert inserts errand's, on
-- the rung's schema (booleans :history and :errand, as bench/ladder/schema.sql
-- and migrations/ made it). Prints how long the statement took, its commit
-- included, in seconds, on the database's clock.

SELECT clock_timestamp() AS insert_started
\gset

\if :errand
-- errand's schema: the statement of errand_drain_insert (bench/drain.sh),
-- kept in step with it. Each tenant's backlog is one user's: its turns are
-- 0, 1, 2, ...
WITH recorded AS (
    INSERT INTO jobs (id, tenant_id, user_id, idempotency_key, fingerprint, job_type, params, max_attempts)
    SELECT errand_uuid_v7(), 'tenant-' || (i % :tenants), 'bench', 'drain-' || i, '\x00', 'noop', '{}', 3
    FROM generate_series(1, :jobs) AS i
    RETURNING id, tenant_id, user_id, job_type, run_at
)
INSERT INTO job_queue (job_id, tenant_id, user_id, job_type, run_at, turn)
SELECT id, tenant_id, user_id, job_type, run_at, row_number() OVER (PARTITION BY tenant_id ORDER BY id) - 1
FROM recorded;
\elif :history
-- The job recorded and queued, as errand records and queues it.
WITH recorded AS (
    INSERT INTO jobs (id, tenant_id, user_id, idempotency_key, fingerprint, job_type, params, max_attempts)
    SELECT errand_uuid_v7(), 'tenant-' || (i % :tenants), 'bench', 'drain-' || i, '\x00', 'noop', '{}', 3
    FROM generate_series(1, :jobs) AS i
    RETURNING id, tenant_id, user_id, job_type, run_at
)
INSERT INTO job_queue (job_id, tenant_id, user_id, job_type, run_at)
SELECT id, tenant_id, user_id, job_type, run_at FROM recorded;
\else
-- The minimal queue: the job is its queue row.
INSERT INTO queue (id, tenant_id, user_id, job_type, params)
SELECT errand_uuid_v7(), 'tenant-' || (i % :tenants), 'bench', 'noop', '{}'
FROM generate_series(1, :jobs) AS i;
\endif

SELECT round(extract(epoch FROM clock_timestamp() - :'insert_started'::timestamptz)::numeric, 3);
