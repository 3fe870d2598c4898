-- Job ends as HOT updates (issue 18). A job's end rewrites its row in
-- `jobs`, and with `state` in an index (`jobs_failed_or_cancelled`, V11)
-- every end also wrote a new entry in each of the table's eight indexes.
-- The failed and cancelled jobs are indexed by a column of their own
-- instead, computed from `state`, which a completion leaves NULL as it
-- was; with room left on each page for the end's new row version, the end
-- of a job that completes now rewrites its row alone. (The planner reads
-- the new column's own statistics, so a filter on it is estimated as
-- closely as one on `state` was.)
ALTER TABLE jobs ADD COLUMN unsuccessful_state job_state
    GENERATED ALWAYS AS (CASE WHEN state IN ('failed', 'cancelled') THEN state END) STORED;
DROP INDEX jobs_failed_or_cancelled;
CREATE INDEX jobs_unsuccessful ON jobs (unsuccessful_state, id) WHERE unsuccessful_state IS NOT NULL;
ALTER TABLE jobs SET (fillfactor = 80);

-- The operators' list names it too, beside the record's own state (V12).
CREATE OR REPLACE VIEW jobs_live AS
SELECT j.id, j.tenant_id, j.user_id, j.idempotency_key, j.fingerprint, j.job_type, j.params,
       coalesce(q.state, j.state) AS state,
       coalesce(q.attempt, j.attempt) AS attempt,
       j.max_attempts,
       coalesce(q.run_at, j.run_at) AS run_at,
       j.result,
       coalesce(j.error_message, q.last_error) AS error_message,
       j.created_at, j.finished_at,
       q.progress,
       q.cancel_requested_by,
       j.state AS recorded_state,
       j.schedule_id,
       j.scheduled_for,
       j.unsuccessful_state
FROM jobs j LEFT JOIN job_queue q ON q.job_id = j.id;
