-- Schedules (issue 23): a user's own recurring jobs, "every Monday at 08:00,
-- Europe/Paris". A schedule row holds its next occurrence; a process whose
-- scheduler finds it due takes the row (FOR UPDATE SKIP LOCKED: processes
-- share the work and never block on one another), records the occurrence's
-- job and moves the row to the occurrence after, in one transaction. The
-- job's idempotency key derives from (schedule, occurrence instant), and the
-- jobs' key is unique: two processes, a restart or a failover cannot make
-- two jobs for one occurrence. No process holds a schedule in memory: there
-- is no leader to elect, and nothing to rebuild after one dies.
CREATE TYPE schedule_missed AS ENUM ('skip', 'catch_up');
CREATE TYPE schedule_overlap AS ENUM ('skip', 'queue', 'cancel_previous');

CREATE TABLE schedules (
    id              uuid PRIMARY KEY DEFAULT errand_uuid_v7(),
    tenant_id       text NOT NULL,
    user_id         text NOT NULL,
    -- From the creator's token, for the jobs' emails (as `jobs.user_email`).
    user_email      text,
    -- As for jobs: one schedule per (tenant, user, key); the fingerprint is of
    -- the request, so a key reused for another schedule is refused.
    idempotency_key text NOT NULL,
    fingerprint     bytea NOT NULL,
    job_type        text NOT NULL,
    params          jsonb NOT NULL,
    -- Five cron fields or a shorthand, read on `timezone`'s wall clock
    -- (`src/domain/schedule.rs` says how gaps and repeated hours fire).
    cron            text NOT NULL,
    timezone        text NOT NULL,
    ends_at         timestamptz,
    -- Occurrences missed (errand down, the schedule paused): skipped, or the
    -- latest `catch_up_limit` of them run.
    missed          schedule_missed NOT NULL DEFAULT 'skip',
    catch_up_limit  integer NOT NULL DEFAULT 1 CHECK (catch_up_limit BETWEEN 1 AND 100),
    -- When an occurrence comes while the job of the one before is unfinished.
    overlap         schedule_overlap NOT NULL DEFAULT 'skip',
    paused_at       timestamptz,
    -- The next occurrence: when it fires, the wall-clock time it matched,
    -- and whether it is the second of a repeated wall time. NULL: no more
    -- (past `ends_at`, or an expression with no future match).
    next_run_at     timestamptz,
    next_local      timestamp,
    next_second_of_fold boolean NOT NULL DEFAULT false,
    -- The job of the latest occurrence that made one (for `overlap`); the
    -- history's pruning may delete it, and an ended job has no overlap.
    last_job_id     uuid REFERENCES jobs (id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT schedules_idempotency_key_unique UNIQUE (tenant_id, user_id, idempotency_key),
    CONSTRAINT schedules_next_whole CHECK ((next_run_at IS NULL) = (next_local IS NULL))
);

-- What schedulers look for: due, not paused.
CREATE INDEX schedules_due ON schedules (next_run_at) WHERE paused_at IS NULL AND next_run_at IS NOT NULL;
-- A user's schedules, newest first; and how many they have (the quota).
CREATE INDEX schedules_owner_newest ON schedules (tenant_id, user_id, id DESC);

-- Pruning a job looks here for schedules naming it.
CREATE INDEX schedules_last_job ON schedules (last_job_id) WHERE last_job_id IS NOT NULL;

-- A job made by a schedule: which, and for which occurrence. Deleting the
-- schedule keeps its jobs (their schedule_id emptied, through this index).
ALTER TABLE jobs ADD COLUMN schedule_id uuid REFERENCES schedules (id) ON DELETE SET NULL,
                 ADD COLUMN scheduled_for timestamptz;
CREATE INDEX jobs_schedule ON jobs (schedule_id) WHERE schedule_id IS NOT NULL;

-- Jobs as their owners read them show which schedule made them, and for when.
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
       j.scheduled_for
FROM jobs j LEFT JOIN job_queue q ON q.job_id = j.id;
