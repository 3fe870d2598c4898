-- A limited type's slots go to its tenants in turn.
--
-- A type with a cluster-wide limit (`concurrency`, e.g. the shipped exports'
-- 1) ran its jobs in the claim's rank: fewest running jobs in their tenant
-- first, oldest first within a rank. When a slot freed, the tenant whose job
-- had just ended ran none of the type again, tied with every other waiting
-- tenant, and its older backlog won: one tenant's five queued exports (and
-- five more for each of its users) ran before another tenant's one click,
-- queued after them. Now a limited type's room goes first to the tenant
-- that would then run the fewest of the type, and among those to the one
-- given a slot of it longest ago (never: first), remembered per type and
-- tenant in `job_type_turns`. So tenants waiting for a limited type take
-- its slots in turn, whatever their backlogs.
--
-- Only the claim's ranking of limited types changed: its arguments and
-- result columns are as in the baseline, so processes of the previous
-- version call it unchanged during an upgrade. The claim beside submissions
-- (store/queue/batch_claim.rs) leaves limited types to this claim.

-- When each tenant was last given a slot of a limited type. Written by the
-- claim that gives the tenant slots of the type, which holds the type's
-- lock (key space 0x65720002): no contention, and few versions (a limited
-- type's jobs are the long ones). Not people's data: no row-level security.
CREATE TABLE job_type_turns (
    job_type  text NOT NULL,
    tenant_id text NOT NULL,
    served_at timestamptz NOT NULL,
    PRIMARY KEY (job_type, tenant_id)
);

CREATE OR REPLACE FUNCTION errand_claim_due(
    after_tenant text, max_tenants integer, tenant_limit bigint, user_limit bigint,
    limited_types text[], type_limits integer[], max_jobs bigint,
    claim_owner uuid, lease_ms double precision, only_types text[], claim uuid)
RETURNS TABLE (kind text, next_after_tenant text, id uuid, tenant_id text, user_id text, job_type text,
               params jsonb, attempt integer, lease_id uuid, due_at timestamptz, format text,
               scheduled_for timestamptz, checkpoint jsonb, traceparent text, trace_linked boolean)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_bitmapscan = off
AS $$
#variable_conflict use_column
DECLARE
    locked_tenants text[];
    lock_types text[];
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
        -- The limited types' locks, and those of the types ramping after a
        -- pause of every tenant (`job_ramps_now`), which are limited while
        -- they ramp: from 1 to their `concurrency`, or to tenant_limit for a
        -- type without one.
        SELECT coalesce(array_agg(t.job_type ORDER BY t.job_type), '{}') INTO lock_types
        FROM (SELECT l.job_type FROM unnest(limited_types) AS l (job_type)
              UNION SELECT r.job_type FROM job_ramps_now r WHERE r.tenant_id IS NULL) t;
        SELECT coalesce(array_agg(pg_try_advisory_xact_lock(1701969922, hashtext(l.job_type)) ORDER BY l.i), '{}')
        INTO locked_types
        FROM unnest(lock_types) WITH ORDINALITY AS l (job_type, i);

        -- With a fresh snapshot, taken under those locks: for each locked
        -- tenant, its next due jobs (`errand_tenant_next`: its line's order,
        -- up to its free room and each user's limit), leaving out limited
        -- types without room; ranked by how many jobs their tenant would
        -- then run (fewest first, oldest first within a rank), so a free
        -- slot goes to the tenant using the fewest; at most max_jobs, and
        -- within each limited type's room. A limited type's room goes to
        -- its tenants in turn (`job_type_turns`): first to the tenant that
        -- would then run the fewest of the type, and among those to the
        -- one served longest ago. Which types ramp, and how far, is
        -- read in this statement, with the pauses it reads: a type whose
        -- ramp this statement sees and whose lock was not taken above (its
        -- resume committed in between) has no room in this claim.
        -- (The `ANY (ARRAY (…))` forms are computed once, before the scans:
        -- they keep each tenant's scan an ordered walk of job_queue_due that
        -- stops at its limit, and the update and the read of params
        -- primary-key lookups. As joins, a generic plan, which cannot know
        -- how few rows max_jobs allows, chose to hash-join and sort the whole
        -- queue.)
        RETURN QUERY
        WITH ramped AS (
            SELECT r.job_type, r.reached FROM job_ramps_now r WHERE r.tenant_id IS NULL
        ), limits AS (
            SELECT t.job_type,
                   CASE WHEN r.reached IS NULL THEN l.concurrency
                        ELSE errand_ramp_cap(coalesce(l.concurrency, tenant_limit), r.reached) END AS concurrency
            FROM (SELECT u.job_type FROM unnest(limited_types) AS u (job_type)
                  UNION SELECT ramped.job_type FROM ramped) t
            LEFT JOIN unnest(limited_types, type_limits) AS l (job_type, concurrency) ON l.job_type = t.job_type
            LEFT JOIN ramped r ON r.job_type = t.job_type
        ), type_running AS (
            -- The limited types' running jobs, per tenant (at most their
            -- limits): the room of each type, and each tenant's turn for it.
            SELECT r.job_type, r.tenant_id, count(*) AS n FROM job_queue r
            WHERE r.job_type = ANY (lock_types) AND r.state = 'running'
            GROUP BY r.job_type, r.tenant_id
        ), type_room AS (
            -- (A type not among lock_types has no lock here: its room is 0.)
            SELECT m.job_type,
                   CASE WHEN k.locked
                        THEN m.concurrency - (SELECT coalesce(sum(r.n), 0) FROM type_running r
                                              WHERE r.job_type = m.job_type)
                        ELSE 0 END AS room
            FROM limits m
            LEFT JOIN unnest(lock_types, locked_types) AS k (job_type, locked) ON k.job_type = m.job_type
        ), excluded AS (  -- a column, not a sub-select: PostgreSQL inlines the function only so
            SELECT coalesce(array_agg(f.job_type) FILTER (WHERE f.room <= 0), '{}') AS types FROM type_room f
        ), candidates AS (
            SELECT t.tenant_id, c.job_id, c.job_type, c.run_at, c.rank
            FROM excluded e
            CROSS JOIN unnest(locked_tenants) AS t (tenant_id)
            CROSS JOIN LATERAL errand_tenant_next(t.tenant_id, tenant_limit, user_limit, max_jobs, e.types, only_types) c
        ), type_places AS (
            -- A limited type's candidates: how many of the type their tenant
            -- would then run, and when it was last given a slot of it.
            SELECT c.job_id, c.job_type, c.run_at, c.rank,
                   coalesce(r.n, 0)
                   + row_number() OVER (PARTITION BY c.job_type, c.tenant_id ORDER BY c.rank, c.run_at, c.job_id)
                       AS type_rank,
                   s.served_at
            FROM candidates c
            LEFT JOIN type_running r ON r.job_type = c.job_type AND r.tenant_id = c.tenant_id
            LEFT JOIN job_type_turns s ON s.job_type = c.job_type AND s.tenant_id = c.tenant_id
            WHERE c.job_type = ANY (lock_types)
        ), within_type_room AS (
            SELECT c.job_id, c.run_at, c.rank, f.room, 1::bigint AS nth_of_type
            FROM candidates c LEFT JOIN type_room f ON f.job_type = c.job_type
            WHERE c.job_type <> ALL (lock_types)
            UNION ALL
            SELECT p.job_id, p.run_at, p.rank, f.room,
                   row_number() OVER (PARTITION BY p.job_type
                                      ORDER BY p.type_rank, p.served_at NULLS FIRST, p.rank, p.run_at, p.job_id)
            FROM type_places p LEFT JOIN type_room f ON f.job_type = p.job_type
        ), picked AS (
            SELECT w.job_id FROM within_type_room w
            WHERE w.room IS NULL OR w.nth_of_type <= w.room
            ORDER BY w.rank, w.run_at, w.job_id
            LIMIT max_jobs
        ), claimed AS (
            UPDATE job_queue q
            SET state = 'running', attempt = q.attempt + 1, lease_id = gen_random_uuid(), lease_owner = claim_owner,
                claim_id = claim, resumed_from = (q.checkpoint ->> 'done')::bigint,
                lease_expires_at = now() + lease_ms * interval '1 millisecond', started_at = clock_timestamp()
            -- (Held and due: rechecked on the row's newest version, in case
            -- a hold or a debounce committed since this statement's snapshot.)
            WHERE q.job_id = ANY (ARRAY (SELECT p.job_id FROM picked p)) AND q.state IN ('available', 'retryable')
              AND q.held_by IS NULL AND q.run_at <= now()
            RETURNING q.job_id, q.tenant_id, q.job_type, q.attempt, q.lease_id, q.run_at,
                      q.checkpoint -> 'value' AS checkpoint
        ), served AS (
            -- The limited types' tenants served now (the type's lock, held
            -- by this claim, keeps other claims from writing these rows).
            INSERT INTO job_type_turns AS s (job_type, tenant_id, served_at)
            SELECT DISTINCT c.job_type, c.tenant_id, now() FROM claimed c
            WHERE c.job_type = ANY (lock_types)
            ORDER BY 1, 2
            ON CONFLICT (job_type, tenant_id) DO UPDATE SET served_at = EXCLUDED.served_at
        )
        SELECT 'job', NULL::text, j.id, j.tenant_id, j.user_id, j.job_type, j.params, c.attempt, c.lease_id, c.run_at,
               j.format, j.scheduled_for, c.checkpoint, j.traceparent,
               errand_trace_linked(j.run, j.scheduled_for)
        FROM jobs j JOIN claimed c ON c.job_id = j.id
        WHERE j.id = ANY (ARRAY (SELECT c2.job_id FROM claimed c2));
    END IF;

    RETURN QUERY SELECT 'cursor', CASE WHEN considered < max_tenants OR wrapped THEN '' ELSE last_tenant END,
                        NULL::uuid, NULL::text, NULL::text, NULL::text, NULL::jsonb, NULL::integer, NULL::uuid,
                        NULL::timestamptz, NULL::text, NULL::timestamptz, NULL::jsonb, NULL::text, NULL::boolean;
END
$$;
