-- Quotas on unfinished work (issue 19): how many jobs a user, a user's jobs
-- of one type, and a tenant may have waiting or running at once.
--
-- A new job is checked in the transaction that records it, after taking the
-- tenant's quota lock (advisory, key space 0x65720002, see store/quota.rs):
-- two processes then cannot both let the cap's next job in. The counts come
-- from the queue, which holds unfinished jobs only; the claim and end of a
-- job write nothing more for them.

-- Whose each queued job is: a user's unfinished jobs are counted here.
ALTER TABLE job_queue ADD COLUMN user_id text;
UPDATE job_queue q SET user_id = j.user_id FROM jobs j WHERE j.id = q.job_id;
ALTER TABLE job_queue ALTER COLUMN user_id SET NOT NULL;

-- A tenant's waiting jobs by user and type, for the quota check. Partial, so
-- that a claim (waiting to running) adds no entry to it; running jobs are
-- found through job_queue_running_tenant (a tenant runs few at once).
CREATE INDEX job_queue_waiting_owner ON job_queue (tenant_id, user_id, job_type)
    WHERE state IN ('available', 'retryable');

-- An operator's overrides of the configured caps, per tenant (NULL: the
-- configured cap). Read in the recording transaction itself, so a change
-- holds from the next submission on, in every process, without a restart.
CREATE TABLE tenant_quotas (
    tenant_id                 text PRIMARY KEY,
    max_unfinished_per_user   integer CHECK (max_unfinished_per_user >= 0),
    max_unfinished_per_tenant integer CHECK (max_unfinished_per_tenant >= 0),
    updated_at                timestamptz NOT NULL DEFAULT now(),
    updated_by                text NOT NULL
);

-- Setting a tenant's quotas is audited as any operator action; its filter
-- column holds the tenant and the new caps.
ALTER TABLE operator_actions DROP CONSTRAINT operator_actions_action_check;
ALTER TABLE operator_actions ADD CONSTRAINT operator_actions_action_check
    CHECK (action IN ('retry', 'cancel', 'bulk_retry', 'set_quotas'));
