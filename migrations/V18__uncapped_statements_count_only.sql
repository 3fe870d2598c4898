-- A statement that sets no caps is counted, never checked (V3 says so; its
-- trigger did not hold to it). Without `errand.quota_caps` (quotas off, an
-- operator's retry) V3's checks still compared each count with the
-- tenant's `tenant_quotas` override, so an override written while quotas
-- were on refused the jobs of a process with quotas off, whose submission
-- path does not expect a refusal: it answered 500. The override now counts
-- only beside caps that are set, in the checks themselves; the upserts and
-- their order (tenants, then users, then types, each in key order: no
-- deadlock with the other triggers) are V3's.
--
-- And where the caps name no job type, the types' upsert is not checked
-- either: no count can be over a cap that does not exist, and the check
-- was the larger part of what the trigger added to a job's creation.

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
    WHERE caps IS NOT NULL AND c.jobs > coalesce(o.max_unfinished_per_tenant::bigint, (caps ->> 'tenant')::bigint)
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
        WHERE caps IS NOT NULL AND c.jobs > coalesce(o.max_unfinished_per_user::bigint, (caps ->> 'user')::bigint)
        LIMIT 1;
    END IF;
    IF over IS NULL AND coalesce(caps -> 'types', '{}') = '{}' THEN
        INSERT INTO unfinished_jobs AS u (tenant_id, user_id, job_type, jobs)
        SELECT tenant_id, user_id, job_type, count(*) FROM queued GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT (tenant_id, user_id, job_type) DO UPDATE SET jobs = u.jobs + EXCLUDED.jobs;
    ELSIF over IS NULL THEN
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
