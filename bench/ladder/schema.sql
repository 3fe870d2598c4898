-- The schemas of the ceiling ladder's rungs (bench/ladder.sh), one section a
-- guarantee: a rung's schema is the sections of the guarantees it has
-- (bench/ladder.sh lists them). Run by psql on an empty database, in one
-- transaction (-1), with the booleans
--
--   history        jobs kept as history: the job record `jobs` and the
--                  narrow queue `job_queue`, as errand splits them; off:
--                  one minimal `queue` table that holds the whole job
--   notifications  a notification row per ended job
--   counts         unfinished jobs counted by statement-level triggers on
--                  the queue (errand's `unfinished_counts`)
--   lease          a claim that commits on its own: queue rows leased to a
--                  worker (state, lease), the end fenced on the lease
--
-- Tables, indexes and trigger functions are errand's (migrations/V1__baseline.sql,
-- the counts as V3__counts_by_generation.sql has them) cut down to what the
-- rung's statements use; what was left out, and why, is said where it would be. Storage options (fillfactor, autovacuum) are
-- errand's too: they are tuning any queue gets, not a guarantee.

-- UUID v7, as errand's ids are: ids sort in creation order, and the claim
-- takes the oldest first.
CREATE FUNCTION errand_uuid_v7() RETURNS uuid
LANGUAGE sql VOLATILE AS $$
  SELECT encode(
    set_bit(set_bit(
      overlay(uuid_send(gen_random_uuid())
              PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
              FROM 1 FOR 6),
      52, 1), 53, 1),
    'hex')::uuid
$$;

\if :history

-- History: errand's `jobs`, column for column (the columns of later
-- features stay, empty, so that the row is as wide as errand's), with its
-- constraints, indexes and storage options. Left out: the foreign keys of
-- `batch_id` and `schedule_id` (no batches or schedules here: both are NULL).
-- An end that completes a job changes no indexed column, so with the room
-- fillfactor leaves it is a HOT update, as in errand.
CREATE TYPE job_state AS ENUM ('available', 'running', 'retryable', 'completed', 'failed', 'cancelled');

CREATE TABLE jobs (
    id                uuid PRIMARY KEY,
    tenant_id         text NOT NULL,
    user_id           text NOT NULL,
    user_email        text,
    batch_id          uuid,
    schedule_id       uuid,
    scheduled_for     timestamptz,
    idempotency_key   text NOT NULL,
    fingerprint       bytea NOT NULL,
    job_type          text NOT NULL,
    format            text CHECK (format IN ('csv', 'csv.gz', 'xlsx', 'ndjson')),
    params            jsonb NOT NULL,
    priority          smallint NOT NULL DEFAULT 0,
    state             job_state NOT NULL DEFAULT 'available',
    attempt           integer NOT NULL DEFAULT 0,
    max_attempts      integer NOT NULL CHECK (max_attempts >= 1),
    run               integer NOT NULL DEFAULT 1,
    run_at            timestamptz NOT NULL DEFAULT now(),
    created_at        timestamptz NOT NULL DEFAULT now(),
    started_at        timestamptz,
    finished_at       timestamptz,
    ended_by          uuid,
    ended_lease_id    uuid,
    resumed_from      bigint,
    result            jsonb,
    result_expires_at timestamptz,
    error_message     text,
    unsuccessful_state job_state
        GENERATED ALWAYS AS (CASE WHEN state IN ('failed', 'cancelled') THEN state END) STORED,
    CONSTRAINT jobs_idempotency_key_unique UNIQUE (tenant_id, user_id, idempotency_key),
    CONSTRAINT jobs_queued_or_ended CHECK (state IN ('available', 'completed', 'failed', 'cancelled')),
    CONSTRAINT jobs_finished_iff_terminal
        CHECK ((state IN ('completed', 'failed', 'cancelled')) = (finished_at IS NOT NULL)),
    CONSTRAINT jobs_failed_has_error CHECK (state <> 'failed' OR error_message IS NOT NULL)
) WITH (
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_analyze_scale_factor = 0.01,
    autovacuum_vacuum_cost_delay = 0,
    fillfactor = 60
);

CREATE INDEX jobs_owner_newest ON jobs (tenant_id, user_id, id DESC) INCLUDE (idempotency_key);
CREATE INDEX jobs_result_expiry ON jobs (result_expires_at) WHERE result_expires_at IS NOT NULL;
CREATE INDEX jobs_tenant_newest ON jobs (tenant_id, id DESC);
CREATE INDEX jobs_unsuccessful ON jobs (unsuccessful_state, id) WHERE unsuccessful_state IS NOT NULL;

-- The queue: one narrow row per unfinished job, deleted by the statement
-- that ends it, as errand's `job_queue` (its columns for the claim and the
-- counts: tenant, user, type, due time). Claimed oldest due first, across
-- tenants: no fairness here (errand's claim walks tenants and takes each
-- one's line within its limits; that is in the top rung only).
CREATE TABLE job_queue (
    job_id    uuid PRIMARY KEY REFERENCES jobs (id),
    tenant_id text NOT NULL,
    user_id   text NOT NULL,
    job_type  text NOT NULL,
    run_at    timestamptz NOT NULL DEFAULT now()
) WITH (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 2000,
    autovacuum_vacuum_insert_scale_factor = 0,
    autovacuum_vacuum_insert_threshold = 5000,
    autovacuum_analyze_scale_factor = 0,
    autovacuum_analyze_threshold = 5000,
    autovacuum_vacuum_cost_delay = 0
);

CREATE INDEX job_queue_due ON job_queue (run_at, job_id);

\else

-- The minimal queue: the job is its row, deleted when claimed; no history.
-- (The storage options are errand's job_queue's: rows that live for seconds.)
CREATE TABLE queue (
    id        uuid PRIMARY KEY,
    tenant_id text NOT NULL,
    user_id   text NOT NULL,
    job_type  text NOT NULL,
    params    jsonb NOT NULL,
    run_at    timestamptz NOT NULL DEFAULT now()
) WITH (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 2000,
    autovacuum_vacuum_insert_scale_factor = 0,
    autovacuum_vacuum_insert_threshold = 5000,
    autovacuum_analyze_scale_factor = 0,
    autovacuum_analyze_threshold = 5000,
    autovacuum_vacuum_cost_delay = 0
);

CREATE INDEX queue_due ON queue (run_at, id);

\endif

\if :notifications

-- errand's `notifications`, with the columns of a job's end (left out:
-- batch_id and webhook_endpoint_id with their constraints, and `details`:
-- a batch's and a disabled endpoint's notices, none here). Kept: the
-- foreign key to the job, one notification per job, run and kind (the end
-- inserts ON CONFLICT DO NOTHING on it), and the owner's feed index.
CREATE TABLE notifications (
    id            uuid PRIMARY KEY DEFAULT errand_uuid_v7(),
    tenant_id     text NOT NULL,
    user_id       text NOT NULL,
    kind          text NOT NULL
        CHECK (kind IN ('job_completed', 'job_cancelled', 'batch_completed', 'webhook_disabled')),
    job_id        uuid REFERENCES jobs (id),
    job_type      text,
    job_status    text CHECK (job_status IN ('completed', 'failed', 'cancelled')),
    error_message text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    read_at       timestamptz,
    run           integer NOT NULL DEFAULT 1,
    CONSTRAINT notifications_once_per_run UNIQUE (job_id, run, kind)
);

CREATE INDEX notifications_owner_newest ON notifications (tenant_id, user_id, id DESC);

-- Who a notification is for, as pg_notify payloads name owners (errand's).
CREATE FUNCTION errand_owner_tag(tenant text, "user" text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN left(encode(sha256(convert_to(tenant || chr(31) || "user", 'UTF8')), 'hex'), 16);

\endif

\if :counts

-- errand's `unfinished_counts` by generation and its statement-level
-- trigger on the queue, as migrations/V3__counts_by_generation.sql has them:
-- a key's count in its newest row (`errand_count_row`), moved to a new row
-- the first time a second writes it; writers serialised on an advisory lock
-- per tenant; one `UPDATE` of this second's rows, the keys it did not write
-- left to `errand_count_rest`. Left out: `line_head` (the tenant's line for
-- the claim's fairness, kept by the same update in errand) and the quota
-- check of the insert side (errand checks only when the recording statement
-- sets caps, which a backlog inserted by psql does not; the quotas'
-- override table goes with it).
CREATE TABLE unfinished_counts (
    tenant_id text NOT NULL,
    user_id   text NOT NULL,
    job_type  text NOT NULL,
    gen       bigint NOT NULL,
    jobs      bigint NOT NULL CHECK (jobs >= 0),
    PRIMARY KEY (tenant_id, user_id, job_type, gen),
    CHECK (user_id <> '' OR job_type = '')
) WITH (
    fillfactor = 50,
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0
);

CREATE FUNCTION errand_count_gen() RETURNS bigint LANGUAGE sql VOLATILE
AS $$ SELECT floor(extract(epoch FROM clock_timestamp()))::bigint $$;

CREATE FUNCTION errand_count_row(tenant text, "user" text, type text)
RETURNS TABLE (gen bigint, jobs bigint) LANGUAGE sql STABLE
AS $$
    SELECT u.gen, u.jobs FROM unfinished_counts u
    WHERE u.tenant_id = tenant AND u.user_id = "user" AND u.job_type = type
    ORDER BY u.gen DESC LIMIT 1
$$;

CREATE FUNCTION errand_count_rest(
    tenants text[], users text[], types text[], ns bigint[], now_gen bigint, fresh boolean)
RETURNS void LANGUAGE plpgsql
SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
AS $$
BEGIN
    WITH newest AS (
        SELECT d.*, c.gen, c.jobs AS was
        FROM unnest(tenants, users, types, ns) AS d (tenant_id, user_id, job_type, n)
        LEFT JOIN LATERAL errand_count_row(d.tenant_id, d.user_id, d.job_type) c ON true
    ), updated AS (
        UPDATE unfinished_counts u
        SET jobs = u.jobs + c.n
        FROM newest c
        WHERE u.tenant_id = c.tenant_id AND u.user_id = c.user_id AND u.job_type = c.job_type
          AND u.gen = c.gen AND c.gen >= now_gen
    ), moved AS (
        DELETE FROM unfinished_counts u
        USING newest c
        WHERE u.tenant_id = c.tenant_id AND u.user_id = c.user_id AND u.job_type = c.job_type
          AND u.gen = c.gen AND c.gen < now_gen
    )
    INSERT INTO unfinished_counts (tenant_id, user_id, job_type, gen, jobs)
    SELECT c.tenant_id, c.user_id, c.job_type, now_gen, coalesce(c.was, 0) + c.n
    FROM newest c
    WHERE c.gen < now_gen OR (c.gen IS NULL AND fresh);
END $$;

CREATE FUNCTION errand_count_changed() RETURNS trigger LANGUAGE plpgsql
SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
AS $$
DECLARE
    queuing boolean := TG_OP = 'INSERT';
    now_gen bigint := errand_count_gen();
    rest record;
BEGIN
    WITH g AS (
        SELECT tenant_id, coalesce(user_id, '') AS user_id, coalesce(job_type, '') AS job_type,
               CASE WHEN queuing THEN count(*) ELSE -count(*) END AS n
        FROM changed
        GROUP BY GROUPING SETS ((tenant_id), (tenant_id, user_id), (tenant_id, user_id, job_type))
    ), updated AS (
        UPDATE unfinished_counts u
        SET jobs = u.jobs + g.n
        FROM g
        WHERE u.tenant_id = g.tenant_id AND u.user_id = g.user_id AND u.job_type = g.job_type AND u.gen >= now_gen
          AND (SELECT count(pg_advisory_xact_lock(1701969924, hashtext(t.tenant_id)))
               FROM (SELECT DISTINCT q.tenant_id FROM changed q ORDER BY 1) t) >= 0
        RETURNING u.tenant_id, u.user_id, u.job_type
    )
    SELECT array_agg(g.tenant_id) AS tenants, array_agg(g.user_id) AS users, array_agg(g.job_type) AS types,
           array_agg(g.n) AS ns
    INTO rest
    FROM g
    WHERE NOT EXISTS (SELECT 1 FROM updated w
                      WHERE w.tenant_id = g.tenant_id AND w.user_id = g.user_id AND w.job_type = g.job_type);
    IF rest.tenants IS NOT NULL THEN
        PERFORM errand_count_rest(rest.tenants, rest.users, rest.types, rest.ns, now_gen, queuing);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER job_queue_counted AFTER INSERT ON job_queue
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION errand_count_changed();
CREATE TRIGGER job_queue_uncounted AFTER DELETE ON job_queue
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION errand_count_changed();

\endif

\if :lease

-- Leases: a claim marks its rows running under a new lease (errand's
-- job_queue columns for it, and its check that a running row has one);
-- only available rows are due, so the claim's index holds them alone, as
-- errand's job_queue_due does. (errand's job_queue also leaves room on its
-- pages for heartbeats, which the ladder does not send.)
ALTER TABLE job_queue
    ADD COLUMN state job_state NOT NULL DEFAULT 'available',
    ADD COLUMN attempt integer NOT NULL DEFAULT 0,
    ADD COLUMN lease_id uuid,
    ADD COLUMN lease_owner uuid,
    ADD COLUMN lease_expires_at timestamptz,
    ADD COLUMN started_at timestamptz,
    ADD CONSTRAINT job_queue_unfinished CHECK (state IN ('available', 'running', 'retryable')),
    ADD CONSTRAINT job_queue_lease_iff_running
        CHECK ((state = 'running') = (lease_id IS NOT NULL AND lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL));
DROP INDEX job_queue_due;
CREATE INDEX job_queue_due ON job_queue (run_at, job_id) WHERE state IN ('available', 'retryable');

\endif
