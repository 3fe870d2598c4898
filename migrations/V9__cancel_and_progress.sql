-- Cancellation and progress.
--
-- Cancel: a job still waiting ends at once (its queue row deleted, the job
-- `cancelled`). A running one is asked to stop: its queue row records who
-- asked, and `NOTIFY errand_cancel, '<job id>'` tells the process holding its
-- lease, which stops the handler and writes the fenced end `cancelled`. Until
-- then, any end of that attempt that would run the job again (a retry, a
-- rescue) ends it `cancelled` instead: a cancelled job never runs again. A
-- completion that wins the race stands: exactly one terminal state.
--
-- Who asked decides the notification: an owner knows, so their streams get a
-- `job_cancelled` event (a notification row of that kind, kept out of the
-- feed and the unread count) and no email; an operator's cancel notifies the
-- owner like any end (`job_completed` with job_status `cancelled`, and email).
ALTER TABLE job_queue ADD COLUMN cancel_requested_by text
    CONSTRAINT job_queue_cancel_requested_by CHECK (cancel_requested_by IN ('owner', 'operator'));

ALTER TABLE jobs DROP CONSTRAINT jobs_queued_or_ended;
ALTER TABLE jobs ADD CONSTRAINT jobs_queued_or_ended CHECK (state IN ('available', 'completed', 'failed', 'cancelled'));
ALTER TABLE jobs DROP CONSTRAINT jobs_finished_iff_terminal;
ALTER TABLE jobs ADD CONSTRAINT jobs_finished_iff_terminal
    CHECK ((state IN ('completed', 'failed', 'cancelled')) = (finished_at IS NOT NULL));

-- Progress, as the handler last reported it (at most about once a second),
-- fenced on the lease like every write of a running job: {done, total,
-- message, updated_at}. It lives on the queue row and goes with it.
ALTER TABLE job_queue ADD COLUMN progress jsonb;

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
       q.cancel_requested_by
FROM jobs j LEFT JOIN job_queue q ON q.job_id = j.id;

ALTER TABLE notifications DROP CONSTRAINT notifications_kind_check;
ALTER TABLE notifications ADD CONSTRAINT notifications_kind_check CHECK (kind IN ('job_completed', 'job_cancelled'));
ALTER TABLE notifications DROP CONSTRAINT notifications_job_status_check;
ALTER TABLE notifications ADD CONSTRAINT notifications_job_status_check
    CHECK (job_status IN ('completed', 'failed', 'cancelled'));
ALTER TABLE email_outbox DROP CONSTRAINT email_outbox_job_status_check;
ALTER TABLE email_outbox ADD CONSTRAINT email_outbox_job_status_check
    CHECK (job_status IN ('completed', 'failed', 'cancelled'));
