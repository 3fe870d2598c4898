-- The counts of unfinished jobs in one table (issue 18: what creation and
-- ends cost). V2 and V3 kept them in three tables, per tenant, per user and
-- per user and type, so every statement that queued jobs ran three upserts
-- and every statement that ended jobs six statements, each planned and
-- started on its own. One table takes a statement's counts of every kind
-- in one upsert (queued) or one lock and one update (ended). A drain's ends
-- cost PostgreSQL about 6 % less CPU (jobs/s +4 %); creation, whose
-- statements are small, costs the same within the noise: the rows written,
-- not the statements, are most of what counting costs it (BENCHMARKS,
-- "Session of 2026-12-03, later").
--
-- A row's kind is in its key: a tenant's total has user_id = job_type = '',
-- a user's total job_type = '', a user's jobs of one type neither. Ids are
-- never empty (domain/ids.rs), so '' stands for "all" and sorts first: in
-- key order a tenant's total comes before its users', and a user's before
-- their types'. Every statement here locks its rows in key order, so two
-- cannot deadlock; the checks and their caps are V18's.

-- Writers wait while the counts move, so that none is counted in the old
-- tables and missed by the new one.
LOCK TABLE job_queue IN EXCLUSIVE MODE;

CREATE TABLE unfinished_counts (
    tenant_id text NOT NULL,
    user_id   text NOT NULL,  -- '': the tenant's total
    job_type  text NOT NULL,  -- '': the user's (or tenant's) total
    jobs      bigint NOT NULL CHECK (jobs >= 0),
    PRIMARY KEY (tenant_id, user_id, job_type),
    CHECK (user_id <> '' OR job_type = '')
) WITH (
    fillfactor = 50,  -- updated in place (HOT), often: eager autovacuum
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0
);

INSERT INTO unfinished_counts (tenant_id, user_id, job_type, jobs)
SELECT tenant_id, '', '', jobs FROM unfinished_jobs_per_tenant
UNION ALL SELECT tenant_id, user_id, '', jobs FROM unfinished_jobs_per_user
UNION ALL SELECT tenant_id, user_id, job_type, jobs FROM unfinished_jobs;

CREATE OR REPLACE FUNCTION errand_count_queued() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    caps jsonb := nullif(current_setting('errand.quota_caps', true), '')::jsonb;
    over text;
BEGIN
    WITH counted AS (
        INSERT INTO unfinished_counts AS u (tenant_id, user_id, job_type, jobs)
        SELECT tenant_id, coalesce(user_id, ''), coalesce(job_type, ''), count(*) FROM queued
        GROUP BY GROUPING SETS ((tenant_id), (tenant_id, user_id), (tenant_id, user_id, job_type))
        ORDER BY 1, 2, 3
        ON CONFLICT (tenant_id, user_id, job_type) DO UPDATE SET jobs = u.jobs + EXCLUDED.jobs
        RETURNING u.tenant_id, u.user_id, u.job_type, u.jobs
    )
    SELECT CASE WHEN c.user_id = '' THEN format('tenant %s: %s unfinished jobs', c.tenant_id, c.jobs)
                WHEN c.job_type = '' THEN format('user %s of tenant %s: %s unfinished jobs', c.user_id, c.tenant_id, c.jobs)
                ELSE format('user %s of tenant %s: %s unfinished %s jobs', c.user_id, c.tenant_id, c.jobs, c.job_type)
           END INTO over
    FROM counted c LEFT JOIN tenant_quotas o ON o.tenant_id = c.tenant_id
    -- Only beside caps that are set (V18); a type without a cap is never over.
    WHERE caps IS NOT NULL AND c.jobs > CASE
        WHEN c.user_id = '' THEN coalesce(o.max_unfinished_per_tenant::bigint, (caps ->> 'tenant')::bigint)
        WHEN c.job_type = '' THEN coalesce(o.max_unfinished_per_user::bigint, (caps ->> 'user')::bigint)
        ELSE (caps -> 'types' ->> c.job_type)::bigint END
    -- The broadest count first, as V18 reported it.
    ORDER BY c.user_id <> '', c.job_type <> ''
    LIMIT 1;
    IF over IS NOT NULL THEN
        RAISE EXCEPTION 'over quota: %', over USING ERRCODE = 'ER019';
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION errand_count_unqueued() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1
    FROM unfinished_counts u
    JOIN (SELECT tenant_id, coalesce(user_id, '') AS user_id, coalesce(job_type, '') AS job_type
          FROM unqueued
          GROUP BY GROUPING SETS ((tenant_id), (tenant_id, user_id), (tenant_id, user_id, job_type))) g
      USING (tenant_id, user_id, job_type)
    ORDER BY u.tenant_id, u.user_id, u.job_type
    FOR UPDATE OF u;
    UPDATE unfinished_counts u SET jobs = u.jobs - g.n
    FROM (SELECT tenant_id, coalesce(user_id, '') AS user_id, coalesce(job_type, '') AS job_type, count(*) AS n
          FROM unqueued
          GROUP BY GROUPING SETS ((tenant_id), (tenant_id, user_id), (tenant_id, user_id, job_type))) g
    WHERE u.tenant_id = g.tenant_id AND u.user_id = g.user_id AND u.job_type = g.job_type;
    RETURN NULL;
END $$;

DROP TABLE unfinished_jobs, unfinished_jobs_per_user, unfinished_jobs_per_tenant;
