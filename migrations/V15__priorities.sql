-- Priorities (issue 23): scheduled work never delays interactive work.
-- A job's priority is its class, interactive 0, scheduled -10, bulk (a
-- batch's children) -20, moved by its type's `priority` and (interactive
-- jobs) the request's, each within -4..4, so the classes never cross.
-- Within a tenant's fair share, a claim takes its highest priority first,
-- then the oldest due; across tenants the fair share decides, as before.
-- The job keeps its priority (an operator's retry queues it again with it);
-- the queue row carries it for the claim's index.
ALTER TABLE jobs ADD COLUMN priority smallint NOT NULL DEFAULT 0;
ALTER TABLE job_queue ADD COLUMN priority smallint NOT NULL DEFAULT 0;

-- Each tenant's due jobs, highest priority first, then in due order. A
-- higher priority's jobs that are not yet due (waiting out a retry's
-- backoff) are read past before a lower one's due jobs: as few as a
-- tenant's retrying jobs of that priority.
DROP INDEX job_queue_due;
CREATE INDEX job_queue_due ON job_queue (tenant_id, priority DESC, run_at, job_id)
    WHERE state IN ('available', 'retryable');

-- errand_claim_due as in V4, ranking each tenant's candidates by priority
-- before their due time.
CREATE OR REPLACE FUNCTION errand_claim_due(
    after_tenant text, max_tenants integer, tenant_limit bigint,
    limited_types text[], type_limits integer[], max_jobs bigint,
    claim_owner uuid, lease_ms double precision, only_types text[], claim uuid)
RETURNS TABLE (kind text, next_after_tenant text, id uuid, tenant_id text, user_id text, job_type text,
               params jsonb, attempt integer, lease_id uuid, due_at timestamptz)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    locked_tenants text[];
    locked_types boolean[];
    considered integer;
    last_tenant text;
    wrapped boolean;
BEGIN
    -- The next tenants with waiting work after the cursor (a loose index
    -- scan of job_queue_due, one index probe per tenant), then, if the walk
    -- reached the last tenant with room to spare, those from the first up to
    -- the cursor; each try-locked: a tenant another claim holds is skipped,
    -- never waited for. Lock key spaces: 0x65720001 tenants, 0x65720002 job
    -- types.
    WITH RECURSIVE after_cursor (tenant_id, n) AS (
        (SELECT q.tenant_id, 1 FROM job_queue q
         WHERE q.state IN ('available', 'retryable') AND q.tenant_id > after_tenant
         ORDER BY q.tenant_id LIMIT 1)
        UNION ALL
        SELECT (SELECT q.tenant_id FROM job_queue q
                WHERE q.state IN ('available', 'retryable') AND q.tenant_id > w.tenant_id
                ORDER BY q.tenant_id LIMIT 1),
               w.n + 1
        FROM after_cursor w
        WHERE w.tenant_id IS NOT NULL AND w.n < max_tenants
    ), seen_after AS (
        SELECT count(*)::integer AS n FROM after_cursor WHERE tenant_id IS NOT NULL
    ), from_start (tenant_id, n) AS (
        (SELECT q.tenant_id, s.n + 1 FROM job_queue q, seen_after s
         WHERE after_tenant <> '' AND s.n < max_tenants
           AND q.state IN ('available', 'retryable') AND q.tenant_id <= after_tenant
         ORDER BY q.tenant_id LIMIT 1)
        UNION ALL
        SELECT (SELECT q.tenant_id FROM job_queue q
                WHERE q.state IN ('available', 'retryable') AND q.tenant_id > w.tenant_id
                  AND q.tenant_id <= after_tenant
                ORDER BY q.tenant_id LIMIT 1),
               w.n + 1
        FROM from_start w
        WHERE w.tenant_id IS NOT NULL AND w.n < max_tenants
    ), waiting AS (
        SELECT tenant_id, n, false AS wrapped FROM after_cursor
        UNION ALL
        SELECT tenant_id, n, true FROM from_start
    ), tried AS MATERIALIZED (
        SELECT w.tenant_id, w.n, w.wrapped,
               pg_try_advisory_xact_lock(1701969921, hashtext(w.tenant_id)) AS locked
        FROM waiting w WHERE w.tenant_id IS NOT NULL
    )
    SELECT coalesce(array_agg(t.tenant_id ORDER BY t.n) FILTER (WHERE t.locked), '{}'),
           count(*),
           (array_agg(t.tenant_id ORDER BY t.n DESC))[1],
           coalesce(bool_or(t.wrapped), false)
    INTO locked_tenants, considered, last_tenant, wrapped
    FROM tried t;

    IF cardinality(locked_tenants) > 0 THEN
        SELECT coalesce(array_agg(pg_try_advisory_xact_lock(1701969922, hashtext(l.job_type)) ORDER BY l.i), '{}')
        INTO locked_types
        FROM unnest(limited_types) WITH ORDINALITY AS l (job_type, i);

        -- With a fresh snapshot, taken under those locks: for each locked
        -- tenant, its next due jobs (highest priority first) up to its free room (tenant_limit minus
        -- its running jobs), leaving out limited types without room; ranked
        -- by how many jobs their tenant would then run (fewest first, oldest
        -- first within a rank), so a free slot goes to the tenant using the
        -- fewest; at most max_jobs, and within each limited type's room.
        -- (The `ANY (ARRAY (…))` forms are computed once, before the scans:
        -- they keep each tenant's scan an ordered walk of job_queue_due that
        -- stops at its limit, and the update and the read of params
        -- primary-key lookups. As joins, a generic plan, which cannot know
        -- how few rows max_jobs allows, chose to hash-join and sort the whole
        -- queue.)
        RETURN QUERY
        WITH tenants AS MATERIALIZED (  -- counted once per tenant, not per candidate row
            SELECT t.tenant_id,
                   (SELECT count(*) FROM job_queue r WHERE r.tenant_id = t.tenant_id AND r.state = 'running') AS running
            FROM unnest(locked_tenants) AS t (tenant_id)
        ), type_room AS (
            SELECT l.job_type,
                   CASE WHEN l.locked
                        THEN l.concurrency - (SELECT count(*) FROM job_queue r
                                              WHERE r.job_type = l.job_type AND r.state = 'running')
                        ELSE 0 END AS room
            FROM unnest(limited_types, type_limits, locked_types) AS l (job_type, concurrency, locked)
        ), candidates AS (
            SELECT c.job_id, c.job_type, c.run_at, t.running + c.position AS rank
            FROM tenants t
            CROSS JOIN LATERAL (
                SELECT q.job_id, q.job_type, q.run_at, row_number() OVER (ORDER BY q.priority DESC, q.run_at, q.job_id) AS position
                FROM job_queue q
                WHERE q.tenant_id = t.tenant_id AND q.state IN ('available', 'retryable') AND q.run_at <= now()
                  AND q.job_type <> ALL (ARRAY (SELECT f.job_type FROM type_room f WHERE f.room <= 0))
                  AND (only_types IS NULL OR q.job_type = ANY (only_types))
                ORDER BY q.priority DESC, q.run_at, q.job_id
                LIMIT least(max_jobs, greatest(0, tenant_limit - t.running))
            ) c
        ), within_type_room AS (
            SELECT c.job_id, c.run_at, c.rank, f.room,
                   row_number() OVER (PARTITION BY c.job_type ORDER BY c.rank, c.run_at, c.job_id) AS nth_of_type
            FROM candidates c LEFT JOIN type_room f ON f.job_type = c.job_type
        ), picked AS (
            SELECT w.job_id FROM within_type_room w
            WHERE w.room IS NULL OR w.nth_of_type <= w.room
            ORDER BY w.rank, w.run_at, w.job_id
            LIMIT max_jobs
        ), claimed AS (
            UPDATE job_queue q
            SET state = 'running', attempt = q.attempt + 1, lease_id = gen_random_uuid(), lease_owner = claim_owner,
                claim_id = claim,
                lease_expires_at = now() + lease_ms * interval '1 millisecond', started_at = clock_timestamp()
            WHERE q.job_id = ANY (ARRAY (SELECT p.job_id FROM picked p)) AND q.state IN ('available', 'retryable')
            RETURNING q.job_id, q.attempt, q.lease_id, q.run_at
        )
        SELECT 'job', NULL::text, j.id, j.tenant_id, j.user_id, j.job_type, j.params, c.attempt, c.lease_id, c.run_at
        FROM jobs j JOIN claimed c ON c.job_id = j.id
        WHERE j.id = ANY (ARRAY (SELECT c2.job_id FROM claimed c2));
    END IF;

    RETURN QUERY SELECT 'cursor', CASE WHEN considered < max_tenants OR wrapped THEN '' ELSE last_tenant END,
                        NULL::uuid, NULL::text, NULL::text, NULL::text, NULL::jsonb, NULL::integer, NULL::uuid,
                        NULL::timestamptz;
END
$$;
