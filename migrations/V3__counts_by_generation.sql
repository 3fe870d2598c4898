-- The counts of unfinished jobs, a row per key and generation.
--
-- `unfinished_counts` kept one row per tenant, user and type, updated by
-- every statement that queued or ended a job of it. While any session of the
-- database holds a snapshot (a report, a transaction left open), no version
-- of such a row can be removed, and every read of the row (the turn of each
-- submission, the reach of a claim, each end's lock and update) follows its
-- whole chain: one version for every statement since the snapshot was taken.
-- Measured: 72 % of the statement time under a held snapshot, start latency
-- p99 from 37 ms to 42 s (docs/benchmarks-log.md, "Under a held snapshot,
-- statement by statement").
--
-- Now a key's count moves to a fresh row once a second (its generation, the
-- second it was written in): the statement that first writes a key in a new
-- second deletes the key's row and inserts the next one, carrying its count
-- and line head. Every read takes the key's newest generation first and
-- stops there (`errand_count_row`: `ORDER BY gen DESC LIMIT 1`, a backward
-- scan of the primary key), so it follows the versions of one second, never
-- the generations before, whatever a snapshot holds. Without a held snapshot
-- a key gets one insert and one delete a second more than before. (The
-- claim's reach reads the counts in `errand_tenant_next`, which
-- V4__lines_from_their_heads.sql replaces: its reads go through
-- `errand_count_row` there. Until then the baseline's reads still see the
-- one row of each key that any snapshot sees.)
--
-- At most one row of a key is visible to any snapshot (the move deletes and
-- inserts in one statement), so reads that take all of a key's rows (the
-- operators' views, the idle rows' pruning) are unchanged.
--
-- Who may write: the statements that count take their tenants' count locks
-- first (advisory, key space 0x65720004, in tenant order, until the
-- transaction ends), as they took the tenant's count row's lock before (in
-- key order a tenant's total row comes first), so the order of locks between
-- statements is as it was. A row deleted meanwhile by the pruning of idle
-- rows (jobs = 0, without the lock: a process of the previous version prunes
-- as before) is written again as a fresh row.

ALTER TABLE unfinished_counts ADD COLUMN gen bigint NOT NULL DEFAULT 0;
ALTER TABLE unfinished_counts DROP CONSTRAINT unfinished_counts_pkey;
ALTER TABLE unfinished_counts ADD PRIMARY KEY (tenant_id, user_id, job_type, gen);

-- The generation a count written now belongs to: the database's second.
CREATE FUNCTION errand_count_gen() RETURNS bigint LANGUAGE sql VOLATILE
AS $$ SELECT floor(extract(epoch FROM clock_timestamp()))::bigint $$;

-- A key's count: its newest generation's row, and no other (a backward scan
-- of the primary key that stops at the first row). Every read of a count
-- goes through this one rule. An SQL function of one SELECT, so that the
-- statement calling it inlines it (it must stay without SET clauses,
-- STABLE, and LANGUAGE sql), and the scan's keys are the caller's. Inlined,
-- it adds a subquery scan over the limit: about 3 µs a turn (of 20),
-- measured against the same reads written out (docs/benchmarks-log.md).
CREATE FUNCTION errand_count_row(tenant text, "user" text, type text)
RETURNS TABLE (gen bigint, jobs bigint, line_head bigint) LANGUAGE sql STABLE
AS $$
    SELECT u.gen, u.jobs, u.line_head FROM unfinished_counts u
    WHERE u.tenant_id = tenant AND u.user_id = "user" AND u.job_type = type
    ORDER BY u.gen DESC LIMIT 1
$$;

-- The turn (see the baseline): the line's head and the user's count, each
-- its key's newest generation.
CREATE OR REPLACE FUNCTION errand_turn(tenant text, "user" text) RETURNS TABLE (turn bigint)
LANGUAGE sql STABLE
AS $$
    SELECT coalesce((SELECT u.line_head FROM errand_count_row(tenant, '', '') u), 0)
         + coalesce((SELECT u.jobs FROM errand_count_row(tenant, "user", '') u), 0)
$$;

-- Whether a count is over its cap, as the quota check reports it (a row), or
-- not (none). Caps as the recording statement set them (see the baseline); a
-- type without a cap is never over. A set-returning SQL function of one
-- row, so that a statement's `CROSS JOIN LATERAL` inlines it.
CREATE FUNCTION errand_count_over(caps jsonb, tenant text, "user" text, type text, jobs bigint)
RETURNS TABLE (over text) LANGUAGE sql STABLE
AS $$
    SELECT CASE WHEN "user" = '' THEN format('tenant %s: %s unfinished jobs', tenant, jobs)
                WHEN type = '' THEN format('user %s of tenant %s: %s unfinished jobs', "user", tenant, jobs)
                ELSE format('user %s of tenant %s: %s unfinished %s jobs', "user", tenant, jobs, type)
           END
    WHERE jobs > CASE
        WHEN "user" = '' THEN coalesce((SELECT o.max_unfinished_per_tenant::bigint FROM tenant_quotas o
                                        WHERE o.tenant_id = tenant), (caps ->> 'tenant')::bigint)
        WHEN type = '' THEN coalesce((SELECT o.max_unfinished_per_user::bigint FROM tenant_quotas o
                                      WHERE o.tenant_id = tenant), (caps ->> 'user')::bigint)
        ELSE (caps -> 'types' ->> type)::bigint END
$$;

-- The counts of one statement's keys that its first statement did not
-- write in place (see `errand_count_changed`): their newest rows moved
-- to this second (`now_gen`), or updated in place where another backend
-- moved one meanwhile, or, for queued jobs (`fresh`), written where a key
-- has none. (An ended job's key always has one: only counts of 0 are
-- pruned.) Called under the tenants' count locks; returns the broadest of
-- the counts written over its cap, where `caps` are set.
CREATE FUNCTION errand_count_rest(
    tenants text[], users text[], types text[], ns bigint[], heads bigint[],
    now_gen bigint, fresh boolean, caps jsonb)
RETURNS text LANGUAGE plpgsql
SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
AS $$
DECLARE
    over text;
BEGIN
    -- A statement of its own: its snapshot is taken under the locks, so it
    -- sees every count written before them.
    WITH newest AS (
        SELECT d.*, c.gen, c.jobs AS was, c.line_head
        FROM unnest(tenants, users, types, ns, heads) AS d (tenant_id, user_id, job_type, n, head)
        LEFT JOIN LATERAL errand_count_row(d.tenant_id, d.user_id, d.job_type) c ON true
    ), updated AS (
        UPDATE unfinished_counts u
        SET jobs = u.jobs + c.n, line_head = greatest(u.line_head, c.head)
        FROM newest c
        WHERE u.tenant_id = c.tenant_id AND u.user_id = c.user_id AND u.job_type = c.job_type
          AND u.gen = c.gen AND c.gen >= now_gen
        RETURNING u.tenant_id, u.user_id, u.job_type, u.jobs
    ), moved AS (
        DELETE FROM unfinished_counts u
        USING newest c
        WHERE u.tenant_id = c.tenant_id AND u.user_id = c.user_id AND u.job_type = c.job_type
          AND u.gen = c.gen AND c.gen < now_gen
    ), inserted AS (
        INSERT INTO unfinished_counts AS u (tenant_id, user_id, job_type, gen, jobs, line_head)
        SELECT c.tenant_id, c.user_id, c.job_type, now_gen,
               coalesce(c.was, 0) + c.n, greatest(coalesce(c.line_head, 0), c.head)
        FROM newest c
        WHERE c.gen < now_gen OR (c.gen IS NULL AND fresh)
        RETURNING u.tenant_id, u.user_id, u.job_type, u.jobs
    ), counted AS (
        SELECT * FROM updated UNION ALL SELECT * FROM inserted
    )
    SELECT o.over INTO over
    FROM counted c CROSS JOIN LATERAL errand_count_over(caps, c.tenant_id, c.user_id, c.job_type, c.jobs) o
    WHERE caps IS NOT NULL ORDER BY c.user_id <> '', c.job_type <> '' LIMIT 1;
    RETURN over;
END $$;

-- One statement's queued (INSERT) or ended (DELETE) jobs, counted, and
-- queued ones checked against the caps the statement set (see the
-- baseline); an end moves its tenant's line head to the highest turn it
-- ended. One statement, almost always: the tenants' count locks (a
-- one-time filter, so taken before any row is read), then each key's row
-- of this second (a later one's too: another backend's clock) updated in
-- place. The UPDATE follows a row another statement updated meanwhile to
-- its newest version, so the counts it returns are exact; a key it did not
-- write (first written this second, or moved by another statement
-- meanwhile) goes to `errand_count_rest`. Both triggers name their
-- transition table `changed`, so that one function serves them.
CREATE FUNCTION errand_count_changed() RETURNS trigger LANGUAGE plpgsql
SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
AS $$
DECLARE
    queuing boolean := TG_OP = 'INSERT';
    caps jsonb := CASE WHEN TG_OP = 'INSERT' THEN nullif(current_setting('errand.quota_caps', true), '')::jsonb END;
    now_gen bigint := errand_count_gen();
    rest record;
    over text;
BEGIN
    WITH g AS (
        SELECT tenant_id, coalesce(user_id, '') AS user_id, coalesce(job_type, '') AS job_type,
               CASE WHEN queuing THEN count(*) ELSE -count(*) END AS n,
               CASE WHEN user_id IS NULL AND NOT queuing THEN max(turn) ELSE 0 END AS head
        FROM changed
        GROUP BY GROUPING SETS ((tenant_id), (tenant_id, user_id), (tenant_id, user_id, job_type))
    ), updated AS (
        UPDATE unfinished_counts u
        SET jobs = u.jobs + g.n, line_head = greatest(u.line_head, g.head)
        FROM g
        WHERE u.tenant_id = g.tenant_id AND u.user_id = g.user_id AND u.job_type = g.job_type AND u.gen >= now_gen
          AND (SELECT count(pg_advisory_xact_lock(1701969924, hashtext(t.tenant_id)))
               FROM (SELECT DISTINCT q.tenant_id FROM changed q ORDER BY 1) t) >= 0
        RETURNING u.tenant_id, u.user_id, u.job_type, u.jobs
    )
    SELECT (SELECT o.over FROM updated c
            CROSS JOIN LATERAL errand_count_over(caps, c.tenant_id, c.user_id, c.job_type, c.jobs) o
            WHERE caps IS NOT NULL ORDER BY c.user_id <> '', c.job_type <> '' LIMIT 1) AS over,
           array_agg(g.tenant_id) AS tenants, array_agg(g.user_id) AS users, array_agg(g.job_type) AS types,
           array_agg(g.n) AS ns, array_agg(g.head) AS heads
    INTO rest
    FROM g
    WHERE NOT EXISTS (SELECT 1 FROM updated w
                      WHERE w.tenant_id = g.tenant_id AND w.user_id = g.user_id AND w.job_type = g.job_type);
    over := rest.over;
    IF rest.tenants IS NOT NULL THEN
        over := coalesce(over, errand_count_rest(rest.tenants, rest.users, rest.types, rest.ns, rest.heads,
                                                 now_gen, queuing, caps));
    END IF;
    IF over IS NOT NULL THEN
        RAISE EXCEPTION 'over quota: %', over USING ERRCODE = 'ER019';
    END IF;
    RETURN NULL;
END $$;

DROP TRIGGER job_queue_counted ON job_queue;
DROP TRIGGER job_queue_uncounted ON job_queue;
DROP FUNCTION errand_count_queued();
DROP FUNCTION errand_count_unqueued();
CREATE TRIGGER job_queue_counted AFTER INSERT ON job_queue
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION errand_count_changed();
CREATE TRIGGER job_queue_uncounted AFTER DELETE ON job_queue
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION errand_count_changed();
