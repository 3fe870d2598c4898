-- Quotas on unfinished work (issue 19): how many jobs a user, a user's jobs
-- of one type, and a tenant may have waiting or running at once.
--
-- A new job is checked in the transaction that records it, after taking the
-- tenant's quota lock (advisory, key space 0x65720003, see store/quota.rs):
-- two processes then cannot both let the cap's next job in. The counts are
-- kept by the database itself, per tenant, user and job type, by triggers on
-- the queue (which holds unfinished jobs only): every path that queues a job
-- or ends one is counted, whoever runs it, and a check reads a few rows
-- instead of counting a backlog. A claim (an UPDATE) writes nothing more.

-- Whose each queued job is.
ALTER TABLE job_queue ADD COLUMN user_id text;
UPDATE job_queue q SET user_id = j.user_id FROM jobs j WHERE j.id = q.job_id;
ALTER TABLE job_queue ALTER COLUMN user_id SET NOT NULL;

-- Unfinished (waiting or running) jobs per tenant, user and type. Updated
-- in place (HOT: no indexed column changes), often: eager autovacuum.
CREATE TABLE unfinished_jobs (
    tenant_id text NOT NULL,
    user_id   text NOT NULL,
    job_type  text NOT NULL,
    jobs      bigint NOT NULL CHECK (jobs >= 0),
    PRIMARY KEY (tenant_id, user_id, job_type)
) WITH (
    fillfactor = 50,
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0
);

INSERT INTO unfinished_jobs (tenant_id, user_id, job_type, jobs)
SELECT tenant_id, user_id, job_type, count(*) FROM job_queue GROUP BY 1, 2, 3;

-- One statement's queued jobs, counted in key order (two statements adding
-- to the same rows lock them in one order, so they cannot deadlock).
CREATE FUNCTION errand_count_queued() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO unfinished_jobs AS u (tenant_id, user_id, job_type, jobs)
    SELECT tenant_id, user_id, job_type, count(*) FROM queued GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (tenant_id, user_id, job_type) DO UPDATE SET jobs = u.jobs + EXCLUDED.jobs;
    RETURN NULL;
END $$;

-- One statement's ended jobs, uncounted: the rows are locked in key order
-- first, for the same reason.
CREATE FUNCTION errand_count_unqueued() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1
    FROM unfinished_jobs u
    JOIN (SELECT DISTINCT tenant_id, user_id, job_type FROM unqueued) g USING (tenant_id, user_id, job_type)
    ORDER BY u.tenant_id, u.user_id, u.job_type
    FOR UPDATE OF u;
    UPDATE unfinished_jobs u SET jobs = u.jobs - g.n
    FROM (SELECT tenant_id, user_id, job_type, count(*) AS n FROM unqueued GROUP BY 1, 2, 3) g
    WHERE u.tenant_id = g.tenant_id AND u.user_id = g.user_id AND u.job_type = g.job_type;
    RETURN NULL;
END $$;

CREATE TRIGGER job_queue_counted AFTER INSERT ON job_queue
    REFERENCING NEW TABLE AS queued FOR EACH STATEMENT EXECUTE FUNCTION errand_count_queued();
CREATE TRIGGER job_queue_uncounted AFTER DELETE ON job_queue
    REFERENCING OLD TABLE AS unqueued FOR EACH STATEMENT EXECUTE FUNCTION errand_count_unqueued();

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
