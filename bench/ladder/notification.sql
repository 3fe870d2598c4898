-- Rungs `notification` and `counts` of the ceiling ladder (bench/ladder.sh),
-- a pgbench script: rung `update`'s claim and end (bench/ladder/update.sql),
-- and in the same statement one notification per ended job, as errand's end
-- writes it (once per job, run and kind: ON CONFLICT DO NOTHING). Rung
-- `counts` runs it on a queue whose deletes are counted by a trigger.
WITH claimed AS (
    SELECT d.job_id FROM job_queue d
    WHERE d.run_at <= now()
    ORDER BY d.run_at, d.job_id
    LIMIT :batch
    FOR UPDATE SKIP LOCKED
), dequeued AS (
    DELETE FROM job_queue q
    WHERE q.job_id = ANY (ARRAY (SELECT c.job_id FROM claimed c))
    RETURNING q.job_id
), finished AS (
    UPDATE jobs j
    SET state = 'completed', finished_at = clock_timestamp()
    WHERE j.id = ANY (ARRAY (SELECT d.job_id FROM dequeued d))
    RETURNING j.id, j.tenant_id, j.user_id, j.job_type, j.params, j.state, j.run, j.error_message
), notified AS (
    INSERT INTO notifications (tenant_id, user_id, kind, job_id, run, job_type, job_status, error_message)
    SELECT tenant_id, user_id, 'job_completed', id, run, job_type, state::text, error_message
    FROM finished
    ON CONFLICT (job_id, run, kind) DO NOTHING
    RETURNING tenant_id, user_id
)
SELECT f.id, f.tenant_id, f.user_id, f.job_type, f.params FROM finished f;
