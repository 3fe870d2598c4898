-- The operators' job detail (issue 22) shows a timeline of attempts: who
-- claimed each, when, under which lease, and how it ended. The attempt that
-- is running is read from its queue row; one that failed from the row it
-- left in `job_attempt_errors`; the attempt that ended the job from `jobs`.
-- Each of those rows is written by the statement that ends the attempt
-- anyway, so the timeline costs no extra write: only these columns, filled
-- from the queue row in that same statement. Rows written before them are
-- NULL here (the page shows what is known).
ALTER TABLE job_attempt_errors
    ADD COLUMN started_at  timestamptz,
    ADD COLUMN lease_id    uuid,
    ADD COLUMN lease_owner uuid;

-- Which lease owner (an errand process's dispatcher, or an external worker)
-- ran the attempt that ended the job; `ended_lease_id` is its lease.
ALTER TABLE jobs ADD COLUMN ended_by uuid;

-- The job detail lists the operator actions taken on the job.
CREATE INDEX operator_actions_job ON operator_actions (job_id, id) WHERE job_id IS NOT NULL;

-- An operator may cancel every unfinished job a filter matches (in steps,
-- each audited as `bulk_cancel`), as they may retry every failed one.
ALTER TABLE operator_actions DROP CONSTRAINT operator_actions_action_check;
ALTER TABLE operator_actions ADD CONSTRAINT operator_actions_action_check
    CHECK (action IN ('retry', 'cancel', 'bulk_retry', 'bulk_cancel', 'set_quotas'));

-- The operators' list filters by state over the whole history. A job that
-- has ended has no queue row, so its record's own state is its live one:
-- the view also shows that column (`recorded_state`), and a filter on ended
-- states names it too, which the planner can read from the statistics of
-- `jobs.state` and serve from `jobs_failed_or_cancelled` (the live `state`,
-- a coalesce over the join, it can do neither with: it scanned the history).
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
       j.state AS recorded_state
FROM jobs j LEFT JOIN job_queue q ON q.job_id = j.id;
