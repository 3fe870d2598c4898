-- Rung `pg_notify` of the ceiling ladder (bench/ladder.sh), a pgbench
-- script: rung `notification`'s statement (bench/ladder/notification.sql),
-- on the counted queue of rung `counts`, announcing its committed
-- notifications as errand's end does: one pg_notify on errand_notifications
-- whose payload names the notified owners (their tags, up to 400 a payload).
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
), announced AS (
    SELECT pg_notify('errand_notifications', string_agg(tag, ','))
    FROM (SELECT tag, (row_number() OVER (ORDER BY tag) - 1) / 400 AS chunk
          FROM (SELECT DISTINCT errand_owner_tag(tenant_id, user_id) AS tag
                FROM notified) owners) tags
    GROUP BY chunk
)
-- (`announced` is read here because a CTE that writes nothing runs only
-- when something reads it.)
SELECT f.id, f.tenant_id, f.user_id, f.job_type, f.params, (SELECT count(*) FROM announced) AS announcements
FROM finished f;
