-- The hot queue, apart from the job record.
--
-- `jobs` is the user-facing history: written when a job is recorded and once
-- more when it ends. Everything rewritten on every claim, heartbeat and
-- attempt end lives in `job_queue`, one narrow row per unfinished job,
-- deleted in the statement that ends the job. So finished jobs never sit in
-- the claim path, and a claim or heartbeat rewrites a narrow row with three
-- small indexes instead of the wide job row with five.
--
-- Queue row life cycle (column `state`, the `job_state` values below):
--   available  --claim-->   running  --attempt ends, attempts left-->  retryable (run_at = backoff)
--   retryable  --claim-->   running  --lease expired (rescue)------->  available | (row deleted)
--   running    --completes or fails for good-->  (row deleted; jobs.state set)
--   running    --released at shutdown-->  available (the attempt given back)
-- A job's live state is its queue row's when it has one, else `jobs.state`
-- (`available` until it ends, then `completed` or `failed`).
--
-- Who may claim what: a claim takes a transaction-scoped advisory lock per
-- tenant (and per job type with a cluster-wide `concurrency`), skipping any
-- that another claim holds, then counts that tenant's running rows with a
-- fresh snapshot. Claims of one tenant are thereby serialised, so its limit
-- holds exactly across processes, while claims of other tenants run at once.

CREATE TABLE job_queue (
    job_id           uuid PRIMARY KEY REFERENCES jobs (id),
    tenant_id        text NOT NULL,
    job_type         text NOT NULL,
    state            job_state NOT NULL DEFAULT 'available',
    -- Attempts started so far (a claim increments it; a release gives it back).
    attempt          integer NOT NULL DEFAULT 0,
    -- When the job may next be claimed.
    run_at           timestamptz NOT NULL DEFAULT now(),
    -- The fencing token of the current claim: new for every claim.
    lease_id         uuid,
    -- Which errand process holds the lease.
    lease_owner      uuid,
    lease_expires_at timestamptz,
    started_at       timestamptz,
    -- Why the last attempt failed, while the job waits to retry.
    last_error       text,
    CONSTRAINT job_queue_unfinished CHECK (state IN ('available', 'running', 'retryable')),
    CONSTRAINT job_queue_lease_iff_running
        CHECK ((state = 'running') = (lease_id IS NOT NULL AND lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL))
) WITH (
    -- Heartbeats change only lease_expires_at: room on the page lets them be HOT updates.
    fillfactor = 70,
    -- Rows live for seconds: vacuum after a fixed number of dead rows, not a share of the table.
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 2000,
    autovacuum_vacuum_insert_scale_factor = 0,
    autovacuum_vacuum_insert_threshold = 5000,
    autovacuum_analyze_scale_factor = 0,
    autovacuum_analyze_threshold = 5000,
    autovacuum_vacuum_cost_delay = 0
);

-- No statistics on job_type: when every queued job has one type (a bulk
-- operation), the planner would conclude from them that a claim's filter
-- "not one of the types at their limit" removes every row, and scan and sort
-- the whole queue instead of walking a tenant's due jobs in index order.
ALTER TABLE job_queue ALTER COLUMN job_type SET STATISTICS 0;

-- Claims: tenants with due work in tenant order (a bounded loose index scan
-- from a cursor), and each tenant's next jobs in due order.
CREATE INDEX job_queue_due ON job_queue (tenant_id, run_at, job_id) WHERE state IN ('available', 'retryable');
-- Claims count running jobs per tenant and per job type; the rescuer reads
-- every running row (a few hundred per process at most).
CREATE INDEX job_queue_running_tenant ON job_queue (tenant_id) WHERE state = 'running';
CREATE INDEX job_queue_running_type ON job_queue (job_type) WHERE state = 'running';

-- Move unfinished jobs forward: queued, running (with their leases: a worker
-- of an older errand still running them is rescued when its lease expires)
-- and waiting to retry.
INSERT INTO job_queue (job_id, tenant_id, job_type, state, attempt, run_at, lease_id, lease_owner,
                       lease_expires_at, started_at, last_error)
SELECT id, tenant_id, job_type, state, attempt, run_at, lease_id, lease_owner, lease_expires_at, started_at,
       CASE WHEN state = 'retryable' THEN error_message END
FROM jobs WHERE state IN ('available', 'running', 'retryable');

ALTER TABLE jobs DROP CONSTRAINT jobs_lease_iff_running;
UPDATE jobs SET state = 'available', error_message = NULL WHERE state IN ('running', 'retryable');

DROP INDEX jobs_runnable;
DROP INDEX jobs_running;
ALTER TABLE jobs DROP COLUMN lease_id, DROP COLUMN lease_owner, DROP COLUMN lease_expires_at;
ALTER TABLE jobs ADD CONSTRAINT jobs_queued_or_ended CHECK (state IN ('available', 'completed', 'failed'));

-- A job row is written twice: the second write (its end) finds room on the
-- page for a HOT update more often. The claim path no longer reads this
-- table's state, so it needs no eager vacuum for claims' sake.
ALTER TABLE jobs SET (fillfactor = 85);
