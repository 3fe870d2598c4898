-- errand's schema: the baseline.
--
-- The whole schema errand starts from, squashed from the development
-- migrations (V1..V13) before the first release. Read top to bottom it is the
-- schema's documentation: types, the function table defaults use, tables
-- (each with its indexes and constraints), the view every read of a job goes
-- through, functions, then triggers.
--
-- Migrations after this one are append-only: a migration that has been
-- merged is never edited or removed (refinery refuses a database whose
-- applied migrations differ from the files); change the schema with a new
-- V<n>__<what>.sql.

-- A job's state (the `state` of `jobs` and of `job_queue`; life cycles at
-- those tables). Jobs can be cancelled (by their owner or an operator).
CREATE TYPE job_state AS ENUM ('available', 'running', 'retryable', 'completed', 'failed', 'cancelled');

-- A completion email's state (life cycle at `email_outbox`).
CREATE TYPE email_state AS ENUM ('pending', 'sending', 'sent', 'failed');

-- UUID v7 (time-ordered) for rows created inside SQL, e.g. notifications
-- written by the rescuer for many jobs at once. Same layout as the uuid crate's v7.
-- (Defined before the tables: their `id` columns default to it.)
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

-- Jobs are the source of truth; actors only cache and dispatch.
--
-- `jobs` is the user-facing history: written when a job is recorded and once
-- more when it ends. Everything rewritten on every claim, heartbeat and
-- attempt end lives in `job_queue` (below), one narrow row per unfinished job,
-- deleted in the statement that ends the job. So finished jobs never sit in
-- the claim path, and a claim or heartbeat rewrites a narrow row with three
-- small indexes instead of the wide job row with five.
--
-- A job's live state is its queue row's when it has one, else `jobs.state`
-- (`available` until it ends, then `completed`, `failed` or `cancelled`);
-- the view `jobs_live` works it out.
--
-- A job may run more than once: an operator's retry puts a failed or
-- cancelled job back in the queue under the same id and key, as run 2, 3, …
-- Each run ends with its own notification (and email); those of earlier runs
-- stay: there is one notification per job and run, kept by the unique
-- constraints of `notifications` and `email_outbox`.
CREATE TABLE jobs (
    id                uuid PRIMARY KEY,
    tenant_id         text NOT NULL,
    user_id           text NOT NULL,
    -- Captured from the caller's token when the job is created; used for the completion email.
    user_email        text,
    idempotency_key   text NOT NULL,
    -- sha256 of the job type and the canonical JSON of its params.
    fingerprint       bytea NOT NULL,
    job_type          text NOT NULL,
    params            jsonb NOT NULL,
    state             job_state NOT NULL DEFAULT 'available',
    -- Attempts the job took, written when it ends (while it is unfinished,
    -- its queue row counts them).
    attempt           integer NOT NULL DEFAULT 0,
    max_attempts      integer NOT NULL CHECK (max_attempts >= 1),
    -- When the job was due when it was recorded (or retried by an operator);
    -- while it is unfinished, its queue row's run_at is the live one.
    run_at            timestamptz NOT NULL DEFAULT now(),
    result            jsonb,
    error_message     text,
    created_at        timestamptz NOT NULL DEFAULT now(),
    started_at        timestamptz,
    finished_at       timestamptz,
    -- When a job's result file is deleted (its retention ends). Kept beside the
    -- result document so the Pruner finds due files through an index.
    result_expires_at timestamptz,
    -- Which run of the job this is: 1, then one more for each operator's retry.
    run               integer NOT NULL DEFAULT 1,
    -- The lease of the attempt that ended the job, when a worker ended it: an
    -- external worker's `/complete` or `/fail` may be retried after a network
    -- error, after errand recorded the first. The lease it names is kept where
    -- the attempt ended (`job_queue.last_lease_id` for an attempt that will run
    -- again, here for the job's end), so the retry is answered as the first
    -- was instead of as a lost lease.
    ended_lease_id    uuid,
    CONSTRAINT jobs_idempotency_key_unique UNIQUE (tenant_id, user_id, idempotency_key),
    -- What runs and waits lives in `job_queue`: a job is recorded `available`
    -- and keeps that state until it ends.
    CONSTRAINT jobs_queued_or_ended CHECK (state IN ('available', 'completed', 'failed', 'cancelled')),
    CONSTRAINT jobs_finished_iff_terminal
        CHECK ((state IN ('completed', 'failed', 'cancelled')) = (finished_at IS NOT NULL)),
    CONSTRAINT jobs_failed_has_error CHECK (state <> 'failed' OR error_message IS NOT NULL)
) WITH (
    -- Every job is inserted, then updated within seconds or minutes (its end,
    -- and again for each operator's retry). Vacuum and analyze it far more
    -- eagerly than the defaults (20% / 10% of the table), so dead row versions
    -- do not pile up and the planner learns the table's shape soon after a
    -- burst (with no statistics it may pick the owner index over the
    -- idempotency index for replays).
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_analyze_scale_factor = 0.01,
    autovacuum_vacuum_cost_delay = 0,
    -- A job row is written twice: the second write (its end) finds room on the
    -- page for a HOT update more often.
    fillfactor = 85
);

-- A user's job list, newest first (ids are UUID v7, so id order is creation order).
-- It INCLUDEs the idempotency key only to be larger than the unique index on
-- (tenant_id, user_id, idempotency_key): before the table has statistics both
-- look equally cheap for a key lookup, and the planner then took this one and
-- filtered all of the user's jobs to find one key.
CREATE INDEX jobs_owner_newest ON jobs (tenant_id, user_id, id DESC) INCLUDE (idempotency_key);
-- The Pruner's due result files.
CREATE INDEX jobs_result_expiry ON jobs (result_expires_at) WHERE result_expires_at IS NOT NULL;
-- The operators' job list: newest first within a tenant (the all-tenants
-- list walks the primary key, also newest first).
CREATE INDEX jobs_tenant_newest ON jobs (tenant_id, id DESC);

-- The hot queue, apart from the job record (see `jobs`): one narrow row per
-- unfinished job.
--
-- Queue row life cycle (column `state`, `job_state` values):
--   available  --claim-->   running  --attempt ends, attempts left-->  retryable (run_at = backoff)
--   retryable  --claim-->   running  --lease expired (rescue)------->  available | (row deleted)
--   running    --completes or fails for good-->  (row deleted; jobs.state set)
--   running    --released at shutdown-->  available (the attempt given back)
-- Every move out of `running` is fenced on `lease_id`, so a worker whose lease
-- was taken away can never overwrite what another worker or the rescuer wrote.
--
-- Who may claim what: a claim takes a transaction-scoped advisory lock per
-- tenant (and per job type with a cluster-wide `concurrency`), skipping any
-- that another claim holds, then counts that tenant's running rows with a
-- fresh snapshot. Claims of one tenant are thereby serialised, so its limit
-- holds exactly across processes, while claims of other tenants run at once
-- (see `errand_claim_due`).
CREATE TABLE job_queue (
    job_id              uuid PRIMARY KEY REFERENCES jobs (id),
    tenant_id           text NOT NULL,
    job_type            text NOT NULL,
    state               job_state NOT NULL DEFAULT 'available',
    -- Attempts started so far (a claim increments it; a release gives it back).
    attempt             integer NOT NULL DEFAULT 0,
    -- When the job may next be claimed.
    run_at              timestamptz NOT NULL DEFAULT now(),
    -- The fencing token of the current claim: new for every claim.
    lease_id            uuid,
    -- Which errand process holds the lease.
    lease_owner         uuid,
    lease_expires_at    timestamptz,
    started_at          timestamptz,
    -- Why the last attempt failed, while the job waits to retry.
    last_error          text,
    -- Cancel: a job still waiting ends at once (its queue row deleted, the job
    -- `cancelled`). A running one is asked to stop: its queue row records who
    -- asked, and `NOTIFY errand_cancel, '<job id>'` tells the process holding its
    -- lease, which stops the handler and writes the fenced end `cancelled`. Until
    -- then, any end of that attempt that would run the job again (a retry, a
    -- rescue) ends it `cancelled` instead: a cancelled job never runs again. A
    -- completion that wins the race stands: exactly one terminal state.
    --
    -- Who asked decides the notification: an owner knows, so their streams get a
    -- `job_cancelled` event (a notification row of that kind, kept out of the
    -- feed and the unread count) and no email; an operator's cancel notifies the
    -- owner like any end (`job_completed` with job_status `cancelled`, and email).
    cancel_requested_by text
        CONSTRAINT job_queue_cancel_requested_by CHECK (cancel_requested_by IN ('owner', 'operator')),
    -- Progress, as the handler last reported it (at most about once a second),
    -- fenced on the lease like every write of a running job: {done, total,
    -- message, updated_at}. It lives on the queue row and goes with it.
    progress            jsonb,
    -- The lease of the last attempt a worker ended, when the job will run
    -- again: a retried `/complete` or `/fail` is answered as the first was
    -- (see `jobs.ended_lease_id`).
    last_lease_id       uuid,
    -- Job types may be run outside errand (`handler = "external"`): workers in
    -- any language claim them over HTTP (`POST /worker/v1/claim`, through
    -- `errand_claim_due` with the types they take). A file such a worker
    -- uploaded for the running attempt (`PUT /worker/v1/jobs/{id}/result`),
    -- fenced on its lease: it becomes the job's result when that attempt
    -- completes. A file let go of otherwise is recorded in `discarded_files`
    -- (the triggers `upload_replaced` and `upload_dequeued`).
    uploaded_result     jsonb,
    CONSTRAINT job_queue_unfinished CHECK (state IN ('available', 'running', 'retryable')),
    CONSTRAINT job_queue_lease_iff_running
        CHECK ((state = 'running') = (lease_id IS NOT NULL AND lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL))
) WITH (
    -- Heartbeats change only lease_expires_at: room on the page lets them be HOT updates.
    fillfactor = 70,
    -- Rows live for seconds: vacuum after a fixed number of dead rows, not a share of the table.
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 2000,
    autovacuum_vacuum_insert_scale_factor = 0,
    autovacuum_vacuum_insert_threshold = 5000,
    autovacuum_analyze_scale_factor = 0,
    autovacuum_analyze_threshold = 5000,
    autovacuum_vacuum_cost_delay = 0
);

-- No statistics on job_type: when every queued job has one type (a bulk
-- operation), the planner would conclude from them that a claim's filter
-- "not one of the types at their limit" removes every row, and scan and sort
-- the whole queue instead of walking a tenant's due jobs in index order.
ALTER TABLE job_queue ALTER COLUMN job_type SET STATISTICS 0;

-- Claims: tenants with due work in tenant order (a bounded loose index scan
-- from a cursor), and each tenant's next jobs in due order. The claim walks
-- the tenants that have runnable jobs and takes each one's next few, so its
-- cost follows the number of tenants, not the size of the backlog.
CREATE INDEX job_queue_due ON job_queue (tenant_id, run_at, job_id) WHERE state IN ('available', 'retryable');
-- Claims count running jobs per tenant and per job type; the rescuer reads
-- every running row (a few hundred per process at most).
CREATE INDEX job_queue_running_tenant ON job_queue (tenant_id) WHERE state = 'running';
CREATE INDEX job_queue_running_type ON job_queue (job_type) WHERE state = 'running';

-- Why each attempt that failed failed (the job keeps only the last error).
-- Written by the statement that ends the attempt; pruned with the job.
CREATE TABLE job_attempt_errors (
    job_id   uuid NOT NULL REFERENCES jobs (id),
    run      integer NOT NULL,
    attempt  integer NOT NULL,
    error    text NOT NULL,
    ended_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job_id, run, attempt)
);

-- A user's notifications: written in the statement that ends a job's run
-- (`job_completed`), or cancels it at its owner's request (`job_cancelled`,
-- told to the owner's streams only; see `job_queue.cancel_requested_by`).
CREATE TABLE notifications (
    id            uuid PRIMARY KEY DEFAULT errand_uuid_v7(),
    tenant_id     text NOT NULL,
    user_id       text NOT NULL,
    kind          text NOT NULL CHECK (kind IN ('job_completed', 'job_cancelled')),
    job_id        uuid NOT NULL REFERENCES jobs (id),
    job_type      text NOT NULL,
    job_status    text NOT NULL CHECK (job_status IN ('completed', 'failed', 'cancelled')),
    error_message text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    read_at       timestamptz,
    run           integer NOT NULL DEFAULT 1,
    -- Exactly one notification of a kind per job and run, whoever finishes it and however often.
    CONSTRAINT notifications_once_per_run UNIQUE (job_id, run, kind)
);

CREATE INDEX notifications_owner_newest ON notifications (tenant_id, user_id, id DESC);

-- Completion emails, written in the statement that ends the job (when the
-- job's creator had an email address) and delivered by the Mailer.
--
--   pending --claim--> sending --SMTP accepted--> sent
--   sending --transient failure--> pending (next_attempt_at = backoff)
--   sending --permanent failure or out of attempts--> failed
--   sending --lock expired (process died mid-send)--> claimable again
-- A claim sets next_attempt_at to when its lock expires, so one condition
-- (state pending or sending, next_attempt_at due) finds both kinds of work.
CREATE TABLE email_outbox (
    id              uuid PRIMARY KEY DEFAULT errand_uuid_v7(),
    job_id          uuid NOT NULL REFERENCES jobs (id),
    tenant_id       text NOT NULL,
    user_id         text NOT NULL,
    recipient       text NOT NULL,
    job_type        text NOT NULL,
    job_status      text NOT NULL CHECK (job_status IN ('completed', 'failed', 'cancelled')),
    error_message   text,
    state           email_state NOT NULL DEFAULT 'pending',
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error      text,
    -- The SMTP server's answer to the accepted message, recorded at once.
    smtp_response   text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    sent_at         timestamptz,
    run             integer NOT NULL DEFAULT 1,
    CONSTRAINT email_sent_iff_sent_at CHECK ((state = 'sent') = (sent_at IS NOT NULL)),
    -- At most one email per job and run.
    CONSTRAINT email_outbox_once_per_run UNIQUE (job_id, run)
);

CREATE INDEX email_outbox_due ON email_outbox (next_attempt_at) WHERE state IN ('pending', 'sending');

-- Operators: retries of ended jobs (a new run, see `jobs`), attempts' errors
-- (`job_attempt_errors`), and an audit trail.
--
-- Every operator action, written in the transaction that does it: who (the
-- operator token's `sub`), what, on which job or which filter, how many jobs.
CREATE TABLE operator_actions (
    id       uuid PRIMARY KEY DEFAULT errand_uuid_v7(),
    at       timestamptz NOT NULL DEFAULT now(),
    operator text NOT NULL,
    action   text NOT NULL CHECK (action IN ('retry', 'cancel', 'bulk_retry')),
    job_id   uuid,
    filter   jsonb,
    affected integer NOT NULL,
    CHECK ((job_id IS NULL) <> (filter IS NULL))
);

-- Files that an attempt uploaded through the worker API but that never
-- became a job's result: the attempt ended otherwise (failed, retried,
-- cancelled, rescued after its lease ran out), was handed back at shutdown,
-- or uploaded another file in its place. The Pruner deletes each file from
-- storage, then its row.
-- A file a worker was to PUT through a presigned URL is deleted only once
-- that URL expired (`delete_after`): a late PUT cannot bring it back then.
CREATE TABLE discarded_files (
    storage_key text PRIMARY KEY,
    discarded_at timestamptz NOT NULL DEFAULT now(),
    delete_after timestamptz NOT NULL DEFAULT now()
);

-- A job as its owner sees it: the job record, with the live state of its
-- queue row while it has one (`job_queue` holds what changes while a job is
-- unfinished). Every read of a caller's jobs goes through this view, so how
-- a job's state is worked out is written once. PostgreSQL inlines it: plans
-- are those of the join written out.
CREATE VIEW jobs_live AS
SELECT j.id, j.tenant_id, j.user_id, j.idempotency_key, j.fingerprint, j.job_type, j.params,
       coalesce(q.state, j.state) AS state,
       coalesce(q.attempt, j.attempt) AS attempt,
       j.max_attempts,
       coalesce(q.run_at, j.run_at) AS run_at,
       j.result,
       coalesce(j.error_message, q.last_error) AS error_message,
       j.created_at, j.finished_at,
       q.progress,
       q.cancel_requested_by
FROM jobs j LEFT JOIN job_queue q ON q.job_id = j.id;

-- Who a notification is for, as announced between processes (the payloads of
-- NOTIFY errand_notifications and errand_progress): the first 8 bytes of
-- sha256(tenant, 0x1f, user) in hex, as `OwnerTag` (src/domain/ids.rs)
-- computes it. A payload holds a few hundred of them where it could hold only
-- a handful of 255-byte names, and names no tenant or user. `"user"` is
-- quoted: bare, `user` is SQL's CURRENT_USER. STABLE, as convert_to is, so
-- that PostgreSQL inlines it into the statements that call it (an IMMUTABLE
-- wrapper of a STABLE body is called, not inlined: twice the cost).
CREATE FUNCTION errand_owner_tag(tenant text, "user" text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
RETURN left(encode(sha256(convert_to(tenant || chr(31) || "user", 'UTF8')), 'hex'), 16);

-- A claim in one round trip.
--
-- A claim locks the tenants it will serve (and the job types with a
-- cluster-wide limit), then counts their running jobs and takes their next
-- due ones. The count must be read with a snapshot taken after the locks were
-- granted, or it could miss the jobs a claim that held a lock just before
-- committed (see `job_queue`). One statement cannot do both: its snapshot is
-- taken before it runs, and two statements in one transaction are two round
-- trips to the server. In a volatile PL/pgSQL function each statement
-- takes a fresh snapshot (under READ COMMITTED), so both run in one call, in
-- the call's own transaction: the advisory locks last until it commits.
--
-- Parameters: the tenant cursor (consider tenants after `after_tenant`, at
-- most `max_tenants` of them; a walk that reaches the last tenant goes on
-- from the first, up to the cursor), the most running jobs per tenant, the
-- job types limited across processes with their limits, the most jobs to
-- claim, the lease (owner, length in ms), and the job types to claim
-- (`only_types`; NULL: any). errand's dispatcher claims the types it has
-- handlers for; an external worker (`handler = "external"`, the worker API)
-- the types its token allows.
--
-- Rows returned: one per claimed job (`kind` = 'job'), then one with the
-- cursor for the next claim (`kind` = 'cursor', `next_after_tenant`: the last
-- tenant considered, or '' when the walk reached the last tenant: the next
-- claim starts from the first). A job's row says when it became due
-- (`due_at`: its queue row's run_at, untouched by the claim), so that errand
-- can measure how long a due job waited for a worker
-- (`errand_job_wait_seconds`).
--
-- Plans: generic, made once per connection. The statements take arrays whose
-- length the planner cannot see, so a custom plan has the same shape; but
-- PostgreSQL, finding custom plans cheaper for one tenant, would otherwise
-- re-plan on every call.
--
-- Its result columns are never changed in place: during an upgrade,
-- processes of the previous version have the claim prepared, and a prepared
-- statement's result type must not change. A claim with other columns is a
-- function of its own.
CREATE FUNCTION errand_claim_due(
    after_tenant text, max_tenants integer, tenant_limit bigint,
    limited_types text[], type_limits integer[], max_jobs bigint,
    claim_owner uuid, lease_ms double precision, only_types text[])
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
        -- tenant, its next due jobs up to its free room (tenant_limit minus
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
                SELECT q.job_id, q.job_type, q.run_at, row_number() OVER (ORDER BY q.run_at, q.job_id) AS position
                FROM job_queue q
                WHERE q.tenant_id = t.tenant_id AND q.state IN ('available', 'retryable') AND q.run_at <= now()
                  AND q.job_type <> ALL (ARRAY (SELECT f.job_type FROM type_room f WHERE f.room <= 0))
                  AND (only_types IS NULL OR q.job_type = ANY (only_types))
                ORDER BY q.run_at, q.job_id
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

-- Whatever statement lets go of an attempt's upload (`job_queue.uploaded_result`
-- replaced, cleared, or its row deleted when the job ends) records the file
-- in `discarded_files`, in its own transaction, unless the job's result is
-- that file (a completion, whose statement wrote `jobs.result` before this
-- runs: row-level AFTER triggers see all of the statement's changes).
CREATE FUNCTION errand_discard_upload() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO discarded_files (storage_key, delete_after)
    SELECT OLD.uploaded_result->>'storage_key',
           greatest(now(), (OLD.uploaded_result->>'url_expires_at')::timestamptz)
    WHERE NOT EXISTS (SELECT 1 FROM jobs j
                      WHERE j.id = OLD.job_id AND j.result->>'storage_key' = OLD.uploaded_result->>'storage_key')
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

-- An attempt's upload let go of (see errand_discard_upload). The WHEN clauses
-- keep rows without an upload, nearly all of them, from ever calling the
-- function.
CREATE TRIGGER upload_replaced AFTER UPDATE OF uploaded_result ON job_queue FOR EACH ROW
WHEN (OLD.uploaded_result->>'storage_key' IS NOT NULL
      AND OLD.uploaded_result->>'storage_key' IS DISTINCT FROM NEW.uploaded_result->>'storage_key')
EXECUTE FUNCTION errand_discard_upload();

CREATE TRIGGER upload_dequeued AFTER DELETE ON job_queue FOR EACH ROW
WHEN (OLD.uploaded_result->>'storage_key' IS NOT NULL)
EXECUTE FUNCTION errand_discard_upload();
