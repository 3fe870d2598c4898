-- errand's schema: jobs are the source of truth; actors only cache and dispatch.
--
-- Job life cycle (column `state`; the API folds the first three into `processing`):
--   available  --claim-->  running  --complete-->  completed
--   retryable  --claim-->  running  --fail-->      retryable (attempts left) | failed
--   running    --lease expired (rescue) / released at shutdown--> available | failed
-- Every move out of `running` is fenced on `lease_id`, so a worker whose lease
-- was taken away can never overwrite what another worker or the rescuer wrote.

CREATE TYPE job_state AS ENUM ('available', 'running', 'retryable', 'completed', 'failed');

-- UUID v7 (time-ordered) for rows created inside SQL, e.g. notifications
-- written by the rescuer for many jobs at once. Same layout as the uuid crate's v7.
CREATE FUNCTION errand_uuid_v7() RETURNS uuid
LANGUAGE sql VOLATILE AS $$
  SELECT encode(
    set_bit(set_bit(
      overlay(uuid_send(gen_random_uuid())
              PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
              FROM 1 FOR 6),
      52, 1), 53, 1),
    'hex')::uuid
$$;

CREATE TABLE jobs (
    id               uuid PRIMARY KEY,
    tenant_id        text NOT NULL,
    user_id          text NOT NULL,
    -- Captured from the caller's token when the job is created; used for the completion email.
    user_email       text,
    idempotency_key  text NOT NULL,
    -- sha256 of the job type and the canonical JSON of its params.
    fingerprint      bytea NOT NULL,
    job_type         text NOT NULL,
    params           jsonb NOT NULL,
    state            job_state NOT NULL DEFAULT 'available',
    -- Attempts started so far (a claim increments it; a graceful release gives it back).
    attempt          integer NOT NULL DEFAULT 0,
    max_attempts     integer NOT NULL CHECK (max_attempts >= 1),
    -- When an available/retryable job may next be claimed.
    run_at           timestamptz NOT NULL DEFAULT now(),
    -- The fencing token of the current claim: new for every claim.
    lease_id         uuid,
    -- Which errand process holds the lease (for logs and graceful release).
    lease_owner      uuid,
    lease_expires_at timestamptz,
    result           jsonb,
    error_message    text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    finished_at      timestamptz,
    CONSTRAINT jobs_idempotency_key_unique UNIQUE (tenant_id, user_id, idempotency_key),
    CONSTRAINT jobs_lease_iff_running
        CHECK ((state = 'running') = (lease_id IS NOT NULL AND lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL)),
    CONSTRAINT jobs_finished_iff_terminal
        CHECK ((state IN ('completed', 'failed')) = (finished_at IS NOT NULL)),
    CONSTRAINT jobs_failed_has_error CHECK (state <> 'failed' OR error_message IS NOT NULL)
);

-- The claim walks the tenants that have runnable jobs (a loose index scan) and
-- takes each one's next few in due order, so its cost follows the number of
-- tenants, not the size of the backlog.
CREATE INDEX jobs_runnable ON jobs (tenant_id, run_at, id) WHERE state IN ('available', 'retryable');
-- The rescuer looks for expired leases; the claim counts running jobs per tenant.
CREATE INDEX jobs_running ON jobs (tenant_id, lease_expires_at) WHERE state = 'running';
-- A user's job list, newest first (ids are UUID v7, so id order is creation order).
-- It INCLUDEs the idempotency key only to be larger than the unique index on
-- (tenant_id, user_id, idempotency_key): before the table has statistics both
-- look equally cheap for a key lookup, and the planner then took this one and
-- filtered all of the user's jobs to find one key.
CREATE INDEX jobs_owner_newest ON jobs (tenant_id, user_id, id DESC) INCLUDE (idempotency_key);

CREATE TABLE notifications (
    id            uuid PRIMARY KEY DEFAULT errand_uuid_v7(),
    tenant_id     text NOT NULL,
    user_id       text NOT NULL,
    kind          text NOT NULL CHECK (kind IN ('job_completed')),
    job_id        uuid NOT NULL REFERENCES jobs (id),
    job_type      text NOT NULL,
    job_status    text NOT NULL CHECK (job_status IN ('completed', 'failed')),
    error_message text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    read_at       timestamptz,
    -- Exactly one notification of a kind per job, whoever finishes it and however often.
    CONSTRAINT notifications_once_per_job UNIQUE (job_id, kind)
);

CREATE INDEX notifications_owner_newest ON notifications (tenant_id, user_id, id DESC);
