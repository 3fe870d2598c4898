-- Each tenant's line with fewer steps; its pauses read once.
--
-- A claim reads the line of each tenant it considers (`errand_tenant_next`,
-- V4): PostgreSQL runs that part of the claim's plan once a tenant, so its
-- every step counts 32 or more times a claim. Priced with pgbench against
-- the build of 2026-12-05 (docs/benchmarks-log.md, "Each tenant's line with
-- fewer steps"), V4's line cost twice that build's: most of it the steps
-- for the operators' pauses and for the types ramping after one, which a
-- claim pays for every tenant though few claims meet a pause at all.
--
-- Two changes, both in what a line does, not in whom it serves:
--
-- 1. A type ramping in one tenant (after a pause of that type there
--    ended) was read as part of the line and its jobs past the type's room
--    dropped after the line's length was taken: a branch of the plan with
--    its own sorts, run for every tenant, and while a ramping type's
--    backlog filled the line's length, the tenant's other types waited
--    behind it for the whole ramp. Now the jobs of a ramping type that may
--    start are found first (its first ones in the line, as many as its room)
--    and the line leaves out the rest of that type, so the jobs behind them
--    are read as if the type's later jobs were not there. The ramp's cap is
--    the same; other types no longer wait behind it.
-- 2. The pauses are a function of their own (`errand_tenant_pauses`) and
--    the line takes what they say as arguments (`errand_tenant_line`). The
--    dispatcher's claim reads each tenant's pauses only when any pause
--    exists (in the claim's own statement, so with the snapshot the lines
--    are read with); otherwise the line gets "nothing paused".
--
-- `errand_tenant_next` (both forms) keeps its arguments and rows for
-- processes of the previous versions and the claim beside submissions: it
-- is now the pauses and the line together.

-- What the operators' pauses say for one tenant's line (see `job_pauses`):
-- whether all its types are held (`all_types`), which types are
-- (`paused_types`), its limit while the whole tenant ramps (`tenant_cap`,
-- NULL: no ramp), and the types ramping in it with each one's room
-- (`ramp_types`, `ramp_rooms`: how many more of it may start here). One
-- row; an SQL function of one SELECT, so that its callers inline it.
CREATE FUNCTION errand_tenant_pauses(tenant text, tenant_limit bigint)
RETURNS TABLE (all_types boolean, paused_types text[], tenant_cap bigint, ramp_types text[], ramp_rooms bigint[])
LANGUAGE sql STABLE
AS $$
        -- The operators' pauses that hold for this tenant (`job_pauses`):
        -- the whole tenant, or some of its types; and its scopes ramping
        -- after one (`reached`): the whole tenant (its limit rises from 1),
        -- or some of its types (each one's jobs running here rise from 1 to
        -- the tenant's limit: `ramp_rooms`). One read of the pauses for both.
        SELECT coalesce(bool_or(p.job_type IS NULL) FILTER (WHERE p.holding), false) AS all_types,
               coalesce(array_agg(p.job_type) FILTER (WHERE p.holding AND p.job_type IS NOT NULL), '{}') AS paused_types,
               min(errand_ramp_cap(tenant_limit, p.reached))
                   FILTER (WHERE p.reached IS NOT NULL AND p.tenant_id = tenant AND p.job_type IS NULL) AS tenant_cap,
               coalesce(array_agg(p.job_type)
                            FILTER (WHERE p.reached IS NOT NULL AND p.tenant_id = tenant AND p.job_type IS NOT NULL),
                        '{}') AS ramp_types,
               coalesce(array_agg(greatest(0, errand_ramp_cap(tenant_limit, p.reached)
                                              - (SELECT count(*) FROM job_queue q
                                                 WHERE q.tenant_id = tenant AND q.state = 'running'
                                                   AND q.job_type = p.job_type)))
                            FILTER (WHERE p.reached IS NOT NULL AND p.tenant_id = tenant AND p.job_type IS NOT NULL),
                        '{}') AS ramp_rooms
        FROM job_pause_ends p
        WHERE p.tenant_id = tenant OR p.tenant_id IS NULL
$$;

-- A tenant's next due jobs for a claim, given what its pauses say (see
-- `errand_tenant_pauses`): its line read from the head the caller found (see
-- V4), within its room and each user's limit (see the baseline). A type
-- ramping here is read only as far as its room: its first jobs in the line
-- (`ramp_starts`), and of the rest of the line, the other types'.
CREATE FUNCTION errand_tenant_line(
    tenant text, tenant_limit bigint, user_limit bigint, max_jobs bigint,
    excluded_types text[], only_types text[],
    head_priority smallint, head_turn bigint, head_run_at timestamptz, head_job uuid,
    all_types boolean, paused_types text[], tenant_cap bigint, ramp_types text[], ramp_rooms bigint[])
RETURNS TABLE (job_id uuid, job_type text, run_at timestamptz, priority smallint, rank bigint)
LANGUAGE sql STABLE
AS $$
    WITH running AS (
        SELECT r.user_id, count(*) AS n FROM job_queue r
        WHERE r.tenant_id = tenant AND r.state = 'running'
        GROUP BY r.user_id
    ), room AS (
        -- Its room: within its limit, and within its ramp's cap while the
        -- whole tenant ramps.
        SELECT coalesce(sum(r.n), 0)::bigint AS running,  -- bigint: sum's numeric is slower
               least(max_jobs, greatest(0, coalesce(tenant_cap, tenant_limit) - coalesce(sum(r.n), 0)::bigint)) AS room,
               coalesce(array_agg(r.user_id), '{}') AS users,
               coalesce(array_agg(r.n), '{}') AS counts,
               coalesce(array_agg(r.user_id) FILTER (WHERE r.n >= user_limit), '{}') AS at_limit
        FROM running r
    ), reach AS (
        -- How far to read the line: its room, and 32 further while a user
        -- at their limit holds its head and someone else has unfinished
        -- jobs (by the quota counts: two key lookups; a tenant of one busy
        -- user reads no further than its room).
        SELECT m.*,
               CASE WHEN m.room = 0 OR all_types THEN 0
                    WHEN cardinality(m.at_limit) > 0
                         AND (SELECT u.jobs FROM errand_count_row(tenant, '', '') u)
                             > (SELECT coalesce(sum((SELECT u.jobs FROM errand_count_row(tenant, a.user_id, '') u)), 0)
                                FROM unnest(m.at_limit) AS a (user_id))
                    THEN m.room + 32
                    ELSE m.room END AS reach,
               -- The jobs of its ramping types that may start: each type's
               -- first in the line, as many as its room (nothing read while
               -- no type ramps here: a CASE runs its branch only when taken).
               CASE WHEN cardinality(ramp_types) = 0 THEN '{}'::uuid[]
               ELSE coalesce((SELECT array_agg(s.job_id)
                         FROM unnest(ramp_types, ramp_rooms) AS r (job_type, room)
                         CROSS JOIN LATERAL (
                             SELECT q.job_id FROM job_queue q
                             WHERE q.tenant_id = tenant AND q.state IN ('available', 'retryable')
                               AND q.run_at <= now() AND q.job_type = r.job_type AND q.held_by IS NULL
                               AND q.job_type <> ALL (excluded_types)
                               AND (only_types IS NULL OR q.job_type = ANY (only_types))
                               AND q.user_id <> ALL (m.at_limit)
                             ORDER BY q.priority DESC, q.turn, q.run_at, q.job_id
                             LIMIT r.room) s), '{}') END AS ramp_starts
        FROM room m
    )
    SELECT c.job_id, c.job_type, c.run_at, c.priority, m.running + c.position
    FROM reach m
    CROSS JOIN LATERAL (
        SELECT e.job_id, e.job_type, e.run_at, e.priority, e.user_id,
               row_number() OVER (ORDER BY e.priority DESC, e.turn, e.run_at, e.job_id) AS position
        FROM (
            -- Its line as read: the due jobs of types neither paused nor
            -- excluded, not held, in order, as far as its reach; from its
            -- head where the caller found it (the rest of the head's
            -- priority from the head's key on, then the lower priorities),
            -- else from the start of its range (a head priority of NULL: the
            -- first part reads nothing, the second everything). The limit
            -- takes the parts' rows in the order of the parts, each an
            -- ordered walk of job_queue_due, and starts the second only if
            -- the first ends short of the reach. (A merge of the two by the
            -- line's order cost each tenant a sort and a second index walk:
            -- see V4.)
            SELECT * FROM (
                (SELECT q.job_id, q.job_type, q.run_at, q.priority, q.turn, q.user_id
                 FROM job_queue q
                 WHERE q.tenant_id = tenant AND q.state IN ('available', 'retryable') AND q.run_at <= now()
                   AND q.priority = head_priority AND (q.turn, q.run_at, q.job_id) >= (head_turn, head_run_at, head_job)
                   AND q.job_type <> ALL (excluded_types) AND q.job_type <> ALL (paused_types) AND q.held_by IS NULL
                   AND (q.job_type <> ALL (ramp_types) OR q.job_id = ANY (m.ramp_starts))
                   AND (only_types IS NULL OR q.job_type = ANY (only_types))
                 ORDER BY q.priority DESC, q.turn, q.run_at, q.job_id)
                UNION ALL
                (SELECT q.job_id, q.job_type, q.run_at, q.priority, q.turn, q.user_id
                 FROM job_queue q
                 WHERE q.tenant_id = tenant AND q.state IN ('available', 'retryable') AND q.run_at <= now()
                   AND q.priority < coalesce(head_priority::integer, 32768)
                   AND q.job_type <> ALL (excluded_types) AND q.job_type <> ALL (paused_types) AND q.held_by IS NULL
                   AND (q.job_type <> ALL (ramp_types) OR q.job_id = ANY (m.ramp_starts))
                   AND (only_types IS NULL OR q.job_type = ANY (only_types))
                 ORDER BY q.priority DESC, q.turn, q.run_at, q.job_id)
            ) w
            LIMIT m.reach
        ) e
        WHERE e.user_id <> ALL (m.at_limit)
    ) c
    -- A user's jobs taken here are at most their place among those left
    -- (fewer where others' come first): never past the user's limit, and
    -- never past the tenant's room.
    WHERE c.position <= m.room
      AND coalesce(m.counts[array_position(m.users, c.user_id)], 0) + c.position <= user_limit
$$;

-- A tenant's next due jobs for a claim (see the baseline and V4): its
-- pauses, then its line.
CREATE OR REPLACE FUNCTION errand_tenant_next(
    tenant text, tenant_limit bigint, user_limit bigint, max_jobs bigint,
    excluded_types text[], only_types text[],
    head_priority smallint, head_turn bigint, head_run_at timestamptz, head_job uuid)
RETURNS TABLE (job_id uuid, job_type text, run_at timestamptz, priority smallint, rank bigint)
LANGUAGE sql STABLE
AS $$
    SELECT c.* FROM errand_tenant_pauses(tenant, tenant_limit) p
    CROSS JOIN LATERAL errand_tenant_line(tenant, tenant_limit, user_limit, max_jobs, excluded_types, only_types,
                                          head_priority, head_turn, head_run_at, head_job, p.all_types,
                                          p.paused_types, p.tenant_cap, p.ramp_types, p.ramp_rooms) c
$$;

-- The dispatcher's claim (see the baseline, V2 and V4): each tenant's
-- pauses read only while some pause exists.
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
    head_priorities smallint[];
    head_turns bigint[];
    head_run_ats timestamptz[];
    head_jobs uuid[];
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
    -- types. Each probe lands on its tenant's first live entry, past the
    -- entries of jobs claimed or ended while some snapshot still sees them
    -- (which no vacuum can remove meanwhile): its key is the tenant's head,
    -- where the line is read from below instead of walking them again.
    WITH RECURSIVE after_cursor (tenant_id, priority, turn, run_at, job_id, n) AS (
        (SELECT q.tenant_id, q.priority, q.turn, q.run_at, q.job_id, 1 FROM job_queue q
         WHERE q.state IN ('available', 'retryable') AND q.tenant_id > after_tenant
         ORDER BY q.tenant_id, q.priority DESC, q.turn, q.run_at, q.job_id LIMIT 1)
        UNION ALL
        SELECT h.tenant_id, h.priority, h.turn, h.run_at, h.job_id, w.n + 1
        FROM after_cursor w
        CROSS JOIN LATERAL (
            SELECT q.tenant_id, q.priority, q.turn, q.run_at, q.job_id FROM job_queue q
            WHERE q.state IN ('available', 'retryable') AND q.tenant_id > w.tenant_id
            ORDER BY q.tenant_id, q.priority DESC, q.turn, q.run_at, q.job_id LIMIT 1) h
        WHERE w.n < max_tenants
    ), seen_after AS (
        SELECT count(*)::integer AS n FROM after_cursor
    ), from_start (tenant_id, priority, turn, run_at, job_id, n) AS (
        (SELECT q.tenant_id, q.priority, q.turn, q.run_at, q.job_id, s.n + 1 FROM job_queue q, seen_after s
         WHERE after_tenant <> '' AND s.n < max_tenants
           AND q.state IN ('available', 'retryable') AND q.tenant_id <= after_tenant
         ORDER BY q.tenant_id, q.priority DESC, q.turn, q.run_at, q.job_id LIMIT 1)
        UNION ALL
        SELECT h.tenant_id, h.priority, h.turn, h.run_at, h.job_id, w.n + 1
        FROM from_start w
        CROSS JOIN LATERAL (
            SELECT q.tenant_id, q.priority, q.turn, q.run_at, q.job_id FROM job_queue q
            WHERE q.state IN ('available', 'retryable') AND q.tenant_id > w.tenant_id
              AND q.tenant_id <= after_tenant
            ORDER BY q.tenant_id, q.priority DESC, q.turn, q.run_at, q.job_id LIMIT 1) h
        WHERE w.n < max_tenants
    ), waiting AS (
        SELECT *, false AS wrapped FROM after_cursor
        UNION ALL
        SELECT *, true FROM from_start
    ), tried AS MATERIALIZED (
        SELECT w.*, pg_try_advisory_xact_lock(1701969921, hashtext(w.tenant_id)) AS locked
        FROM waiting w
    )
    SELECT coalesce(array_agg(t.tenant_id ORDER BY t.n) FILTER (WHERE t.locked), '{}'),
           coalesce(array_agg(t.priority ORDER BY t.n) FILTER (WHERE t.locked), '{}'),
           coalesce(array_agg(t.turn ORDER BY t.n) FILTER (WHERE t.locked), '{}'),
           coalesce(array_agg(t.run_at ORDER BY t.n) FILTER (WHERE t.locked), '{}'),
           coalesce(array_agg(t.job_id ORDER BY t.n) FILTER (WHERE t.locked), '{}'),
           count(*),
           (array_agg(t.tenant_id ORDER BY t.n DESC))[1],
           coalesce(bool_or(t.wrapped), false)
    INTO locked_tenants, head_priorities, head_turns, head_run_ats, head_jobs, considered, last_tenant, wrapped
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
        -- tenant, its next due jobs (`errand_tenant_line`: its line's order,
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
            -- Each tenant's pauses are read only while some pause exists
            -- (`any_pause`, read in this statement, so with the snapshot
            -- that reads the lines): most claims have none to read.
            SELECT t.tenant_id, c.job_id, c.job_type, c.run_at, c.rank
            FROM excluded e
            CROSS JOIN (SELECT EXISTS (SELECT 1 FROM job_pauses) AS paused) a
            CROSS JOIN unnest(locked_tenants, head_priorities, head_turns, head_run_ats, head_jobs)
                AS t (tenant_id, priority, turn, run_at, job_id)
            CROSS JOIN LATERAL (
                SELECT * FROM errand_tenant_pauses(t.tenant_id, tenant_limit) WHERE a.paused
                UNION ALL
                SELECT false, '{}'::text[], NULL::bigint, '{}'::text[], '{}'::bigint[] WHERE NOT a.paused) p
            CROSS JOIN LATERAL errand_tenant_line(t.tenant_id, tenant_limit, user_limit, max_jobs, e.types, only_types,
                                                  t.priority, t.turn, t.run_at, t.job_id, p.all_types, p.paused_types,
                                                  p.tenant_cap, p.ramp_types, p.ramp_rooms) c
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
