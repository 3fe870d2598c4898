-- Operators: retries of ended jobs, attempts' errors, and an audit trail.
--
-- A job may run more than once: an operator's retry puts a failed or
-- cancelled job back in the queue under the same id and key, as run 2, 3, …
-- Each run ends with its own notification (and email); those of earlier runs
-- stay. "One notification per job" becomes one per job and run, kept by the
-- unique constraints below.
ALTER TABLE jobs ADD COLUMN run integer NOT NULL DEFAULT 1;

ALTER TABLE notifications ADD COLUMN run integer NOT NULL DEFAULT 1;
ALTER TABLE notifications DROP CONSTRAINT notifications_once_per_job;
ALTER TABLE notifications ADD CONSTRAINT notifications_once_per_run UNIQUE (job_id, run, kind);

ALTER TABLE email_outbox ADD COLUMN run integer NOT NULL DEFAULT 1;
ALTER TABLE email_outbox DROP CONSTRAINT email_outbox_job_id_key;
ALTER TABLE email_outbox ADD CONSTRAINT email_outbox_once_per_run UNIQUE (job_id, run);

-- Why each attempt that failed failed (the job keeps only the last error).
-- Written by the statement that ends the attempt; pruned with the job.
CREATE TABLE job_attempt_errors (
    job_id   uuid NOT NULL REFERENCES jobs (id),
    run      integer NOT NULL,
    attempt  integer NOT NULL,
    error    text NOT NULL,
    ended_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, run, attempt)
);

-- Every operator action, written in the transaction that does it: who (the
-- operator token's `sub`), what, on which job or which filter, how many jobs.
CREATE TABLE operator_actions (
    id       uuid PRIMARY KEY DEFAULT errand_uuid_v7(),
    at       timestamptz NOT NULL DEFAULT now(),
    operator text NOT NULL,
    action   text NOT NULL CHECK (action IN ('retry', 'cancel', 'bulk_retry')),
    job_id   uuid,
    filter   jsonb,
    affected integer NOT NULL,
    CHECK ((job_id IS NULL) <> (filter IS NULL))
);

-- The operators' job list: newest first within a tenant (the all-tenants
-- list walks the primary key, also newest first).
CREATE INDEX jobs_tenant_newest ON jobs (tenant_id, id DESC);
