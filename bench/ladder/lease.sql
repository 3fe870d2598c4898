-- Rung `lease` of the ceiling ladder (bench/ladder.sh), a pgbench script:
-- rung `pg_notify`'s work (bench/ladder/pg_notify.sql) in the two
-- transactions a worker that survives its crashes needs, as errand's claim
-- and end are:
--
--   1. the claim commits on its own: up to :batch due queue rows, oldest
--      first (rows another claim holds are skipped), marked running under
--      a new lease (owner :owner, :lease_ms long) and one more attempt; the
--      jobs' params read from their records;
--   2. if it got jobs, their end, fenced on the leases (a row whose lease
--      is no longer the one claimed is left alone): the queue rows deleted
--      (counted by the trigger), the records updated to `completed` with
--      what the lease knew (attempts, start, who ran them), a notification
--      each, and one pg_notify naming their owners.
WITH claimed AS (
    UPDATE job_queue q
    SET state = 'running', attempt = q.attempt + 1, lease_id = gen_random_uuid(), lease_owner = :owner,
        lease_expires_at = now() + :lease_ms::float8 * interval '1 millisecond', started_at = clock_timestamp()
    WHERE q.job_id = ANY (ARRAY (SELECT d.job_id FROM job_queue d
                                 WHERE d.state IN ('available', 'retryable') AND d.run_at <= now()
                                 ORDER BY d.run_at, d.job_id
                                 LIMIT :batch
                                 FOR UPDATE SKIP LOCKED))
      AND q.state IN ('available', 'retryable')
    RETURNING q.job_id, q.attempt, q.lease_id
), handed AS (
    SELECT c.job_id, c.lease_id, j.tenant_id, j.user_id, j.job_type, j.params, c.attempt
    FROM jobs j JOIN claimed c ON c.job_id = j.id
    WHERE j.id = ANY (ARRAY (SELECT c2.job_id FROM claimed c2))
)
-- (Counting the params, not the rows: a worker is handed them, so they are
-- read, as errand's claim reads them.)
SELECT count(h.params) AS claimed,
       coalesce(array_agg(h.job_id), '{}') AS ids,
       coalesce(array_agg(h.lease_id), '{}') AS leases
FROM handed h
\gset
\if :claimed > 0
WITH input AS (
    SELECT * FROM unnest(:ids::uuid[], :leases::uuid[]) AS input (job_id, lease_id)
), ended AS (
    SELECT q.job_id, q.attempt, q.started_at, q.lease_owner, q.lease_id
    FROM job_queue q
    JOIN input i ON i.job_id = q.job_id
    WHERE q.state = 'running' AND q.lease_id = i.lease_id
    ORDER BY q.job_id
    FOR UPDATE OF q
), dequeued AS (
    DELETE FROM job_queue q USING ended e
    WHERE q.job_id = e.job_id
), finished AS (
    UPDATE jobs j
    SET state = 'completed', attempt = e.attempt, started_at = e.started_at, finished_at = clock_timestamp(),
        ended_lease_id = e.lease_id, ended_by = e.lease_owner
    FROM ended e
    WHERE j.id = e.job_id
    RETURNING j.id, j.tenant_id, j.user_id, j.job_type, j.state, j.run, j.error_message
), notified AS (
    INSERT INTO notifications (tenant_id, user_id, kind, job_id, run, job_type, job_status, error_message)
    SELECT tenant_id, user_id, 'job_completed', id, run, job_type, state::text, error_message
    FROM finished
    ON CONFLICT (job_id, run, kind) DO NOTHING
    RETURNING tenant_id, user_id
), announced AS (
    SELECT pg_notify('errand_notifications', string_agg(tag, ','))
    FROM (SELECT tag, (row_number() OVER (ORDER BY tag) - 1) / 400 AS chunk
          FROM (SELECT DISTINCT errand_owner_tag(tenant_id, user_id) AS tag
                FROM notified) owners) tags
    GROUP BY chunk
)
SELECT f.id, f.tenant_id, f.user_id, f.job_type, f.state, (SELECT count(*) FROM announced) AS announcements
FROM finished f;
\endif
