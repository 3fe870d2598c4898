-- The quota check made by the counting trigger (issue 19: what the checks
-- cost). V2 checked a batch in a transaction of its own: the tenants' quota
-- locks, then a statement that counted the batch's owners and tested that
-- it fit, four statements where quotas off need one (creation 18 % slower).
--
-- Now the trigger that counts a statement's queued jobs also checks them,
-- on the counts it has just written: an upsert locks its row and sees its
-- newest committed version, so the count after adding is exact whatever
-- other processes do, and no separate lock or read is needed. Per-user and
-- per-tenant totals get rows of their own for the same reason (a sum over
-- rows another transaction may be adding to would not be exact). The rows
-- of a statement are locked tenants first, then users, then types, each in
-- key order, by every trigger here: two statements cannot deadlock.
--
-- Which caps hold is the recording statement's to say (its process's
-- configuration): it sets `errand.quota_caps` for its own transaction,
-- JSON {"user": n|null, "tenant": n|null, "types": {type: n}}; a tenant's
-- `tenant_quotas` row overrides the first two. Where it is not set (quotas
-- off, an operator's retry), jobs are counted and not checked. Over a cap,
-- the trigger raises SQLSTATE ER019 and the statement records nothing: the
-- process then decides job by job which to refuse (store/quota.rs).

-- Writers wait while the totals are filled in and the triggers replaced, so
-- that no job is counted by the old trigger and missed by the totals.
LOCK TABLE job_queue IN EXCLUSIVE MODE;

CREATE TABLE unfinished_jobs_per_user (
    tenant_id text NOT NULL,
    user_id   text NOT NULL,
    jobs      bigint NOT NULL CHECK (jobs >= 0),
    PRIMARY KEY (tenant_id, user_id)
) WITH (
    fillfactor = 50,
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0
);

CREATE TABLE unfinished_jobs_per_tenant (
    tenant_id text PRIMARY KEY,
    jobs      bigint NOT NULL CHECK (jobs >= 0)
) WITH (
    fillfactor = 50,
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0
);

INSERT INTO unfinished_jobs_per_user (tenant_id, user_id, jobs)
SELECT tenant_id, user_id, sum(jobs) FROM unfinished_jobs GROUP BY 1, 2;
INSERT INTO unfinished_jobs_per_tenant (tenant_id, jobs)
SELECT tenant_id, sum(jobs) FROM unfinished_jobs GROUP BY 1;

CREATE OR REPLACE FUNCTION errand_count_queued() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    caps jsonb := nullif(current_setting('errand.quota_caps', true), '')::jsonb;
    over text;
BEGIN
    WITH counted AS (
        INSERT INTO unfinished_jobs_per_tenant AS u (tenant_id, jobs)
        SELECT tenant_id, count(*) FROM queued GROUP BY 1 ORDER BY 1
        ON CONFLICT (tenant_id) DO UPDATE SET jobs = u.jobs + EXCLUDED.jobs
        RETURNING u.tenant_id, u.jobs
    )
    SELECT format('tenant %s: %s unfinished jobs', c.tenant_id, c.jobs) INTO over
    FROM counted c LEFT JOIN tenant_quotas o ON o.tenant_id = c.tenant_id
    WHERE c.jobs > coalesce(o.max_unfinished_per_tenant::bigint, (caps ->> 'tenant')::bigint)
    LIMIT 1;
    IF over IS NULL THEN
        WITH counted AS (
            INSERT INTO unfinished_jobs_per_user AS u (tenant_id, user_id, jobs)
            SELECT tenant_id, user_id, count(*) FROM queued GROUP BY 1, 2 ORDER BY 1, 2
            ON CONFLICT (tenant_id, user_id) DO UPDATE SET jobs = u.jobs + EXCLUDED.jobs
            RETURNING u.tenant_id, u.user_id, u.jobs
        )
        SELECT format('user %s of tenant %s: %s unfinished jobs', c.user_id, c.tenant_id, c.jobs) INTO over
        FROM counted c LEFT JOIN tenant_quotas o ON o.tenant_id = c.tenant_id
        WHERE c.jobs > coalesce(o.max_unfinished_per_user::bigint, (caps ->> 'user')::bigint)
        LIMIT 1;
    END IF;
    IF over IS NULL THEN
        WITH counted AS (
            INSERT INTO unfinished_jobs AS u (tenant_id, user_id, job_type, jobs)
            SELECT tenant_id, user_id, job_type, count(*) FROM queued GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
            ON CONFLICT (tenant_id, user_id, job_type) DO UPDATE SET jobs = u.jobs + EXCLUDED.jobs
            RETURNING u.tenant_id, u.user_id, u.job_type, u.jobs
        )
        SELECT format('user %s of tenant %s: %s unfinished %s jobs', c.user_id, c.tenant_id, c.jobs, c.job_type)
        INTO over
        FROM counted c
        WHERE c.jobs > (caps -> 'types' ->> c.job_type)::bigint
        LIMIT 1;
    END IF;
    IF over IS NOT NULL THEN
        RAISE EXCEPTION 'over quota: %', over USING ERRCODE = 'ER019';
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION errand_count_unqueued() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1
    FROM unfinished_jobs_per_tenant u JOIN (SELECT DISTINCT tenant_id FROM unqueued) g USING (tenant_id)
    ORDER BY u.tenant_id
    FOR UPDATE OF u;
    UPDATE unfinished_jobs_per_tenant u SET jobs = u.jobs - g.n
    FROM (SELECT tenant_id, count(*) AS n FROM unqueued GROUP BY 1) g
    WHERE u.tenant_id = g.tenant_id;

    PERFORM 1
    FROM unfinished_jobs_per_user u JOIN (SELECT DISTINCT tenant_id, user_id FROM unqueued) g USING (tenant_id, user_id)
    ORDER BY u.tenant_id, u.user_id
    FOR UPDATE OF u;
    UPDATE unfinished_jobs_per_user u SET jobs = u.jobs - g.n
    FROM (SELECT tenant_id, user_id, count(*) AS n FROM unqueued GROUP BY 1, 2) g
    WHERE u.tenant_id = g.tenant_id AND u.user_id = g.user_id;

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
