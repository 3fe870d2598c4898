-- A job as its owner sees it: the job record, with the live state of its
-- queue row while it has one (see V5: `job_queue` holds what changes while a
-- job is unfinished). Every read of a caller's jobs goes through this view,
-- so how a job's state is worked out is written once. PostgreSQL inlines it:
-- plans are those of the join written out.
CREATE VIEW jobs_live AS
SELECT j.id, j.tenant_id, j.user_id, j.idempotency_key, j.fingerprint, j.job_type, j.params,
       coalesce(q.state, j.state) AS state,
       coalesce(q.attempt, j.attempt) AS attempt,
       j.max_attempts,
       coalesce(q.run_at, j.run_at) AS run_at,
       j.result,
       coalesce(j.error_message, q.last_error) AS error_message,
       j.created_at, j.finished_at
FROM jobs j LEFT JOIN job_queue q ON q.job_id = j.id;
