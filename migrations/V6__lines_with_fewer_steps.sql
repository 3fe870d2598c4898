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
--    the line takes what they say as arguments (`errand_tenant_line`).
--    `errand_tenant_next` reads a tenant's pauses only while any pause
--    exists (in the claim's statement, so with the snapshot the lines are
--    read with); otherwise the line gets "nothing paused".
--
-- `errand_tenant_next` keeps its arguments and rows, so both claims (the
-- dispatcher's and the one beside submissions) and processes of the
-- previous versions call it as before.

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
-- pauses, then its line. The pauses are read only while any pause exists
-- (an `EXISTS` without a reference to the tenant: PostgreSQL runs it once a
-- statement, with the snapshot that reads the lines); most claims have
-- none to read, and their lines get "nothing paused".
CREATE OR REPLACE FUNCTION errand_tenant_next(
    tenant text, tenant_limit bigint, user_limit bigint, max_jobs bigint,
    excluded_types text[], only_types text[],
    head_priority smallint, head_turn bigint, head_run_at timestamptz, head_job uuid)
RETURNS TABLE (job_id uuid, job_type text, run_at timestamptz, priority smallint, rank bigint)
LANGUAGE sql STABLE
AS $$
    SELECT c.* FROM (
        SELECT * FROM errand_tenant_pauses(tenant, tenant_limit) WHERE EXISTS (SELECT 1 FROM job_pauses)
        UNION ALL
        SELECT false, '{}'::text[], NULL::bigint, '{}'::text[], '{}'::bigint[]
        WHERE NOT EXISTS (SELECT 1 FROM job_pauses)
    ) p
    CROSS JOIN LATERAL errand_tenant_line(tenant, tenant_limit, user_limit, max_jobs, excluded_types, only_types,
                                          head_priority, head_turn, head_run_at, head_job, p.all_types,
                                          p.paused_types, p.tenant_cap, p.ramp_types, p.ramp_rooms) c
$$;
