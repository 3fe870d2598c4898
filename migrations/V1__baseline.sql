-- errand's schema: the baseline.
--
-- The whole schema errand starts from, squashed from the development
-- migrations before the first release. Read top to bottom it is the
-- schema's documentation, one section per concept, each object defined
-- before anything that uses it:
--
--    1. Ids: the function table defaults use
--    2. Jobs: the record of every job
--    3. The queue: unfinished jobs, the view every read of a job goes
--       through, and the claim
--    4. Counts of unfinished jobs, and the quotas checked on them
--    5. Attempts that failed
--    6. Notifications, and people's preferences about them
--    7. Completion emails and Web Push
--    8. Webhooks: endpoints, deliveries, the tenants' preferences
--    9. Batches
--   10. Schedules
--   11. Operators' actions
--   12. Process totals
--   13. Discarded upload files
--   14. Row-level security: the caller doors' floor
--
-- Each table comes with its indexes and constraints, and each trigger with
-- its function. A column that refers to a table of a later section gets its
-- foreign key in that section (`jobs.batch_id`, `notifications.batch_id`,
-- `jobs.schedule_id`). Within a table, the columns that came late in
-- development come last, in the order they came.
--
-- Until the first tagged release, development migrations are squashed into
-- this file (databases made before are refused and re-created). From that
-- release on, migrations are append-only: one that has been released is
-- never edited or removed (refinery refuses a database whose applied
-- migrations differ from the files); change the schema with a new
-- V<n>__<what>.sql.


-- 1. Ids ---------------------------------------------------------------------

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


-- 2. Jobs --------------------------------------------------------------------

-- A job's state (the `state` of `jobs` and of `job_queue`; life cycles at
-- those tables). Jobs can be cancelled (by their owner or an operator).
CREATE TYPE job_state AS ENUM ('available', 'running', 'retryable', 'completed', 'failed', 'cancelled');

-- Jobs are the source of truth; actors only cache and dispatch.
--
-- `jobs` is the user-facing history: written when a job is recorded and once
-- more when it ends. Everything rewritten on every claim, heartbeat and
-- attempt end lives in `job_queue` (below), one narrow row per unfinished job,
-- deleted in the statement that ends the job. So finished jobs never sit in
-- the claim path, and a claim or heartbeat rewrites a narrow row with three
-- small indexes instead of the wide job row with eight.
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
    -- The backend service that asked for it for its owner (a service token
    -- with `Errand-On-Behalf-Of`, or an `act` claim): the audit of who
    -- acted. NULL: the owner themselves, a schedule or an operator's retry.
    acted_by          text,
    -- The owner's language when the job was asked for (`domain::Locale`: a
    -- shipped catalogue's tag, from their token, their browser or the
    -- default), copied onto its notifications: its feed entry, email and
    -- push say the same in it. English for rows written by hand.
    locale            text NOT NULL DEFAULT 'en',
    -- The batch the job is a child of (see `batches`, where its foreign key
    -- and index are).
    batch_id          uuid,
    -- A job made by a schedule: which, and for which occurrence (see
    -- `schedules`, where the foreign key and index are).
    schedule_id       uuid,
    scheduled_for     timestamptz,
    -- The W3C `traceparent` of the request that recorded the job (errand's
    -- request span when it exports traces, else the caller's header as it
    -- came), or that made its schedule; NULL without either. Its first
    -- attempt continues that trace, later ones link to it; a schedule's
    -- occurrence's and a run an operator retried only link to it (read as
    -- `errand_trace_linked`: `domain::JobTrace`, `telemetry::traces`).
    traceparent       text CHECK (length(traceparent) = 55),
    idempotency_key   text NOT NULL,
    -- sha256 of the job type and the canonical JSON of its params.
    fingerprint       bytea NOT NULL,
    job_type          text NOT NULL,
    -- An export's file format (`domain::ExportFormat`), asked for by the
    -- request among its type's formats (its first when not asked); NULL for
    -- a job of another kind. Part of what was asked for: in the fingerprint.
    format            text CHECK (format IN ('csv', 'csv.gz', 'xlsx', 'ndjson')),
    params            jsonb NOT NULL,
    -- Priorities: scheduled work never delays interactive work. A job's
    -- priority is its class, interactive 0, scheduled -10, bulk (a batch's
    -- children) -20, moved by its type's `priority` and (interactive jobs)
    -- the request's, each within -4..4, so the classes never cross. Within a
    -- tenant's fair share, a claim takes its highest priority first, then the
    -- oldest due; across tenants the fair share decides (see
    -- `errand_claim_due`). The job keeps its priority (an operator's retry
    -- queues it again with it); the queue row carries it for the claim's index.
    priority          smallint NOT NULL DEFAULT 0,
    state             job_state NOT NULL DEFAULT 'available',
    -- Attempts the job took, written when it ends (while it is unfinished,
    -- its queue row counts them).
    attempt           integer NOT NULL DEFAULT 0,
    max_attempts      integer NOT NULL CHECK (max_attempts >= 1),
    -- Which run of the job this is: 1, then one more for each operator's retry.
    run               integer NOT NULL DEFAULT 1,
    -- When the job was due when it was recorded (or retried by an operator);
    -- while it is unfinished, its queue row's run_at is the live one.
    run_at            timestamptz NOT NULL DEFAULT now(),
    created_at        timestamptz NOT NULL DEFAULT now(),
    started_at        timestamptz,
    finished_at       timestamptz,
    -- Which lease owner (an errand process's dispatcher, or an external worker)
    -- ran the attempt that ended the job; `ended_lease_id` is its lease.
    ended_by          uuid,
    -- The lease of the attempt that ended the job, when a worker ended it: an
    -- external worker's `/complete` or `/fail` may be retried after a network
    -- error, after errand recorded the first. The lease it names is kept where
    -- the attempt ended (`job_queue.last_lease_id` for an attempt that will run
    -- again, here for the job's end), so the retry is answered as the first
    -- was instead of as a lost lease.
    ended_lease_id    uuid,
    -- Where the attempt that ended the job resumed from: its checkpoint's
    -- progress (`job_queue.resumed_from`); NULL for one that began at the start.
    resumed_from      bigint,
    result            jsonb,
    -- When a job's result file is deleted (its retention ends). Kept beside the
    -- result document so the Pruner finds due files through an index.
    result_expires_at timestamptz,
    error_message     text,
    -- `state` when the job failed or was cancelled, else NULL: what
    -- `jobs_unsuccessful` indexes (below).
    unsuccessful_state job_state
        GENERATED ALWAYS AS (CASE WHEN state IN ('failed', 'cancelled') THEN state END) STORED,
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
    -- A job row is written twice: room left on each page for the end's new
    -- row version lets the end be a HOT update (see `jobs_unsuccessful`),
    -- which writes none of the table's indexes. The ended row is larger than
    -- the recorded one (its result, end stamps and lease).
    -- Why 60: measured, see docs/benchmarks-log.md#jobs-fillfactor-60
    fillfactor = 60
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
-- Failed and cancelled jobs, by id: the operators' overview counts them
-- (capped) and a bulk retry walks the failed ones. They are few among the
-- finished, so without an index each of those would read the whole history.
--
-- They are indexed by a column of their own, computed from `state`, not by
-- `state` itself: with `state` in an index, every job's end would also write
-- a new entry in each of the table's indexes. `unsuccessful_state` stays NULL
-- when a job completes, so (with the room fillfactor leaves on each page)
-- the end of a job that completes rewrites its row alone. The planner reads
-- the column's own statistics, so a filter on it is estimated as closely as
-- one on `state`.
CREATE INDEX jobs_unsuccessful ON jobs (unsuccessful_state, id) WHERE unsuccessful_state IS NOT NULL;


-- 3. The queue ---------------------------------------------------------------

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
    -- A newer request with the job's admission key that supersedes it
    -- (`superseded`) is told as an owner's cancel is, as `job_superseded`
    -- (`errand_cancel_kind`).
    cancel_requested_by text
        CONSTRAINT job_queue_cancel_requested_by CHECK (cancel_requested_by IN ('owner', 'operator', 'superseded')),
    -- Progress, as the handler last reported it (at most about once a second),
    -- fenced on the lease like every write of a running job: {done, total,
    -- message, updated_at}. It lives on the queue row and goes with it.
    progress            jsonb,
    -- How far the run has come, as its handler last recorded it (a Rust
    -- handler's `ctx.checkpoint`, an external worker's `POST
    -- /worker/v1/jobs/{id}/checkpoint`), fenced on the lease like progress:
    -- {value, done, at}. The run's next attempt is handed `value` and resumes
    -- there (an export: its upload's parts and the last row's key). It lives
    -- on the queue row and goes with it: an operator's retry starts over.
    checkpoint          jsonb,
    -- Where the running attempt resumed from: its checkpoint's `done` when it
    -- was claimed (NULL: from the start).
    resumed_from        bigint,
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
    -- Whose the job is: the quotas count unfinished jobs per user too (see
    -- `unfinished_counts`).
    user_id             text NOT NULL,
    -- The id of the claim that took the row, made by the claimer before it
    -- sent the claim. A claim is one statement that commits on its own; if
    -- the connection breaks after the server committed it but before its rows
    -- arrived, the claimer does not know which jobs (or emails) it now holds:
    -- they would stay leased to a process that never runs them until their
    -- lease (or lock) ran out, 30 to 90 seconds, and a job's next attempt
    -- would count a failure that never was. After a claim that broke with its
    -- connection, the claimer gives back exactly the rows that claim took, if
    -- it committed at all (store/queue/lost_claims.rs): no guess, and nothing
    -- another claim took is touched.
    claim_id            uuid,
    -- The job's priority (see `jobs.priority`), for the claim's index.
    priority            smallint NOT NULL DEFAULT 0,
    -- The job's place in its tenant's line, within its priority (see
    -- `errand_turn`): how many unfinished jobs its user had when it was
    -- queued, counted from where the line then stood. No default: every
    -- statement that queues a job says where it goes.
    turn                bigint NOT NULL,
    -- An operator's hold (`POST /admin/jobs/{id}/hold`): while set (to the
    -- operator's name), no claim takes the job (`errand_tenant_next`); it
    -- waits with its place in line kept until released. Only a waiting job
    -- is held, and a held one is never claimed, so a hold never meets a lease.
    held_by             text,
    -- Its admission key (a job type's `admission_key`: what makes two of
    -- its jobs one piece of work), for a job recorded with one: unique among
    -- the unfinished jobs of its tenant and type (`job_queue_admission`),
    -- which are this table's rows. Written with the job, under the key's
    -- lock (store/queue/admission.rs); set NULL when a later request takes
    -- the key from a job that goes on running (a debounce) or is being
    -- cancelled (a supersede).
    admission_key       text,
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
-- from a cursor), and each tenant's next jobs: highest priority first, then
-- in turn (see `errand_turn`), then in due order. The claim walks the
-- tenants that have runnable jobs and takes each one's next few, so its cost
-- follows the number of tenants, not the size of the backlog. A higher
-- priority's jobs that are not yet due (waiting out a retry's backoff) are
-- read past before a lower one's due jobs: as few as a tenant's retrying
-- jobs of that priority.
CREATE INDEX job_queue_due ON job_queue (tenant_id, priority DESC, turn, run_at, job_id)
    WHERE state IN ('available', 'retryable');
-- Claims count running jobs per tenant and user (a tenant's, and each of its
-- users', see `errand_tenant_next`) and per job type; the rescuer reads
-- every running row (a few hundred per process at most).
CREATE INDEX job_queue_running_tenant ON job_queue (tenant_id, user_id) WHERE state = 'running';
CREATE UNIQUE INDEX job_queue_admission ON job_queue (tenant_id, job_type, admission_key)
    WHERE admission_key IS NOT NULL;
CREATE INDEX job_queue_running_type ON job_queue (job_type) WHERE state = 'running';

-- Whether work for a job only links to its trace, never continues it: a
-- schedule's occurrence (its trace is the schedule's making) or a run an
-- operator retried (`jobs.traceparent`).
CREATE FUNCTION errand_trace_linked(run integer, scheduled_for timestamptz) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$ SELECT run > 1 OR scheduled_for IS NOT NULL $$;

-- A job as its owner sees it: the job record, with the live state of its
-- queue row while it has one (`job_queue` holds what changes while a job is
-- unfinished). Every read of a caller's jobs goes through this view, so how
-- a job's state is worked out is written once. PostgreSQL inlines it: plans
-- are those of the join written out. Jobs as their owners read them show
-- which schedule made them, and for when.
--
-- The operators' list filters by state over the whole history. A job that
-- has ended has no queue row, so its record's own state is its live one:
-- the view also shows that column (`recorded_state`), and a filter on ended
-- states names it too, which the planner can estimate from the statistics
-- of `jobs.state` (the live `state`, a coalesce over the join, it cannot
-- estimate, and a filter on it alone scanned the history). A filter on
-- failed or cancelled states names `unsuccessful_state` as well, which
-- `jobs_unsuccessful` serves.
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
       q.cancel_requested_by,
       j.state AS recorded_state,
       j.schedule_id,
       j.scheduled_for,
       j.unsuccessful_state,
       j.priority,
       j.format,
       -- The running or latest attempt's (see `job_queue.resumed_from`).
       CASE WHEN q.job_id IS NULL THEN j.resumed_from ELSE q.resumed_from END AS resumed_from,
       q.held_by,
       j.acted_by,
       j.traceparent,
       errand_trace_linked(j.run, j.scheduled_for) AS trace_linked
FROM jobs j LEFT JOIN job_queue q ON q.job_id = j.id;

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
-- from the first, up to the cursor), the most running jobs per tenant and
-- of one user in a tenant (see `errand_tenant_next`), the
-- job types limited across processes with their limits, the most jobs to
-- claim, the lease (owner, length in ms), the job types to claim
-- (`only_types`; NULL: any), and the claim's id (`claim`), written on each
-- row the claim takes (see `job_queue.claim_id`). errand's dispatcher claims
-- the types it has handlers for; an external worker (`handler = "external"`,
-- the worker API) the types its token allows.
--
-- Each tenant's candidates are ranked by priority before their due time
-- (see `jobs.priority`); across tenants, by how many jobs their tenant would
-- then run.
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
-- re-plan on every call. A plan made once is made with the statistics of
-- that moment: a process that claimed first on an empty queue (a fresh
-- database, a quiet night) kept plans costed for ten rows, and when a burst
-- then filled the queue before autovacuum analyzed it, each claim scanned
-- `jobs` once per claimed job (200 ms a claim; 450 jobs/s where 6,000 are
-- drained once analyzed). Every statement here finds its rows by key or walks
-- an index in order, so the function says so: no sequential or bitmap scan,
-- whatever the statistics.
--
-- Its result columns are never changed in place: during an upgrade,
-- processes of the previous version have the claim prepared, and a prepared
-- statement's result type must not change. A claim with other columns is a
-- function of its own.
CREATE FUNCTION errand_claim_due(
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
        -- within each limited type's room. Which types ramp, and how far, is
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
        ), type_room AS (
            SELECT m.job_type,
                   CASE WHEN k.locked
                        THEN m.concurrency - (SELECT count(*) FROM job_queue r
                                              WHERE r.job_type = m.job_type AND r.state = 'running')
                        ELSE 0 END AS room
            FROM limits m
            LEFT JOIN unnest(lock_types, locked_types) AS k (job_type, locked) ON k.job_type = m.job_type
        ), excluded AS (  -- a column, not a sub-select: PostgreSQL inlines the function only so
            SELECT coalesce(array_agg(f.job_type) FILTER (WHERE f.room <= 0), '{}') AS types FROM type_room f
        ), candidates AS (
            SELECT c.job_id, c.job_type, c.run_at, c.rank
            FROM excluded e
            CROSS JOIN unnest(locked_tenants) AS t (tenant_id)
            CROSS JOIN LATERAL errand_tenant_next(t.tenant_id, tenant_limit, user_limit, max_jobs, e.types, only_types) c
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
                claim_id = claim, resumed_from = (q.checkpoint ->> 'done')::bigint,
                lease_expires_at = now() + lease_ms * interval '1 millisecond', started_at = clock_timestamp()
            -- (Held and due: rechecked on the row's newest version, in case
            -- a hold or a debounce committed since this statement's snapshot.)
            WHERE q.job_id = ANY (ARRAY (SELECT p.job_id FROM picked p)) AND q.state IN ('available', 'retryable')
              AND q.held_by IS NULL AND q.run_at <= now()
            RETURNING q.job_id, q.attempt, q.lease_id, q.run_at, q.checkpoint -> 'value' AS checkpoint
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


-- 4. Counts of unfinished jobs, and quotas -----------------------------------

-- Quotas on unfinished work: how many jobs a user, a user's jobs of one
-- type, and a tenant may have waiting or running at once.
--
-- The counts are kept by the database itself, by triggers on the queue
-- (which holds unfinished jobs only): every path that queues a job or ends
-- one is counted, whoever runs it, and a check reads a few rows instead of
-- counting a backlog. A claim (an UPDATE) writes nothing more.
--
-- The trigger that counts a statement's queued jobs also checks them, on
-- the counts it has just written: an upsert locks its row and sees its
-- newest committed version, so the count after adding is exact whatever
-- other processes do, and no separate lock or read is needed. Per-user and
-- per-tenant totals get rows of their own for the same reason (a sum over
-- rows another transaction may be adding to would not be exact). So the
-- check costs no statement of its own.
-- Why: measured, see docs/benchmarks-log.md#the-quota-check-in-the-counting-trigger
--
-- Which caps hold is the recording statement's to say (its process's
-- configuration): it sets `errand.quota_caps` for its own transaction,
-- JSON {"user": n|null, "tenant": n|null, "types": {type: n}}; a tenant's
-- `tenant_quotas` row overrides the first two. Where it is not set (quotas
-- off, an operator's retry), jobs are counted and never checked, not even
-- against a tenant's override: an override written while quotas were on
-- must not refuse the jobs of a process with quotas off, whose submission
-- path does not expect a refusal. Over a cap, the trigger raises SQLSTATE
-- ER019 and the statement records nothing: the process then decides job by
-- job which to refuse, holding the quota lock of each of the batch's tenants
-- (advisory, key space 0x65720003, see store/queue/quota.rs), so that two
-- processes cannot both let a cap's next job in.

-- An operator's overrides of the configured caps, per tenant (NULL: the
-- configured cap). Read in the recording transaction itself, so a change
-- holds from the next submission on, in every process, without a restart.
CREATE TABLE tenant_quotas (
    tenant_id                 text PRIMARY KEY,
    max_unfinished_per_user   integer CHECK (max_unfinished_per_user >= 0),
    max_unfinished_per_tenant integer CHECK (max_unfinished_per_tenant >= 0),
    updated_at                timestamptz NOT NULL DEFAULT now(),
    updated_by                text NOT NULL
);

-- Operators' pauses (`/admin/pauses`): while a pause holds, no claim (a
-- process's dispatcher, an external worker's, the claim beside a
-- submission) takes a waiting job of its scope: a job type everywhere, a
-- tenant, or a job type in one tenant. Submissions go on and running jobs
-- finish. A row every claim reads (`errand_tenant_next`), so a pause holds
-- across processes and a failover from the moment it commits, with no
-- process in charge of it. It holds until an operator resumes it
-- (`resumed_at`) or until `until`, whichever comes first; then its scope
-- ramps for `ramp` (see `job_ramps_now`), and once the ramp is over the
-- row is deleted by the next change of pauses. One row per scope.
-- A tenant's own retentions, set by an operator, for all its job types
-- (job_type '') or for one. History: its finished jobs are kept for the
-- tenant × type's `retention`, else the tenant's, else their type's
-- configured `retention`, else `history.retention` (the pruner's
-- `PRUNE_HISTORY`). Result files: the shortest of the tenant × type's and
-- the tenant's `result_retention`, the type's and `storage.retention`
-- (read by the statement that ends a job, `FINISH_FENCED`; a change
-- shortens the files already kept). NULL: not set at this level.
CREATE TABLE tenant_retention (
    tenant_id        text NOT NULL,
    job_type         text NOT NULL DEFAULT '',  -- '': all of the tenant's types
    retention        interval CHECK (retention > interval '0'),
    result_retention interval CHECK (result_retention > interval '0'),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    updated_by       text NOT NULL,
    PRIMARY KEY (tenant_id, job_type),
    CHECK (retention IS NOT NULL OR result_retention IS NOT NULL)
);

CREATE TABLE job_pauses (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    tenant_id  text,  -- NULL: every tenant
    job_type   text,  -- NULL: every type
    reason     text NOT NULL CHECK (length(reason) BETWEEN 1 AND 500),
    until      timestamptz,
    paused_by  text NOT NULL,
    paused_at  timestamptz NOT NULL DEFAULT now(),
    resumed_at timestamptz,
    ramp       interval CHECK (ramp >= interval '0'),  -- NULL: the default (`job_pause_ends`)
    CHECK (tenant_id IS NOT NULL OR job_type IS NOT NULL)
);
CREATE UNIQUE INDEX job_pauses_scope ON job_pauses (coalesce(tenant_id, ''), coalesce(job_type, ''));

-- Where each pause stands: when it stops holding (`ended_at`, NULL: not yet
-- known), how long its scope then ramps (`ramp_for`), whether it holds now
-- (`holding`), and while its scope ramps, how far (`reached`, 0 to 1; NULL
-- otherwise). The one place that says each, and the one place the default
-- ramp (2 minutes) is written. Everything that asks reads this view or the
-- two below: the claim, a job's views, the schedules' firing, the
-- operators' list and the metrics. PostgreSQL inlines them.
--
-- A scope whose pause ended does not get everything at once (a source that
-- has just come back would be hit by every waiting job): its concurrency
-- rises from 1 to its limit over the ramp, as `errand_ramp_cap` says. Its
-- limit: for a tenant or a type in one tenant, the tenant's
-- (`tenant_limit`, in `errand_tenant_next`, under the tenant's claim lock);
-- for a type everywhere, the type's cluster-wide `concurrency`, or for a
-- type without one, `tenant_limit` (in `errand_claim_due`, under the type's
-- claim lock; the type is then unlimited again).
CREATE VIEW job_pause_ends AS
SELECT p.*, e.ended_at, e.ramp_for,
       e.ended_at IS NULL OR e.ended_at > now() AS holding,
       CASE WHEN e.ended_at <= now() AND now() < e.ended_at + e.ramp_for
            THEN extract(epoch FROM now() - e.ended_at) / nullif(extract(epoch FROM e.ramp_for), 0) END AS reached
FROM job_pauses p
CROSS JOIN LATERAL (SELECT coalesce(p.resumed_at, p.until) AS ended_at,
                           coalesce(p.ramp, interval '2 minutes') AS ramp_for) e;

-- The pauses that hold now.
CREATE VIEW job_pauses_now AS
SELECT e.id, e.tenant_id, e.job_type, e.reason, e.until, e.paused_by, e.paused_at, e.resumed_at, e.ramp
FROM job_pause_ends e WHERE e.holding;

-- The scopes ramping now, and how far.
CREATE VIEW job_ramps_now AS
SELECT e.id, e.tenant_id, e.job_type, e.reached FROM job_pause_ends e WHERE e.reached IS NOT NULL;

-- How many jobs a ramping scope of `scope_limit` may run when its ramp has
-- `reached` (0 to 1) of its length: 1 at first, `scope_limit` at the end.
CREATE FUNCTION errand_ramp_cap(scope_limit bigint, reached double precision) RETURNS bigint
LANGUAGE sql IMMUTABLE
AS $$ SELECT greatest(1, 1 + floor((scope_limit - 1) * reached))::bigint $$;

-- The pauses that hold now for a tenant's jobs of one type: the one rule
-- for everything that asks it of one job or schedule (the owner's and the
-- operators' views of a job, the schedules' firing), as `EXISTS (SELECT 1
-- FROM errand_pauses_holding(…))`. The claim asks it of a whole tenant at
-- once, in the same words (`errand_tenant_next`). Set-returning, so that
-- PostgreSQL inlines it into the statement (a scalar function holding a
-- subquery is called row by row).
CREATE FUNCTION errand_pauses_holding(of_tenant text, of_type text) RETURNS SETOF job_pauses
LANGUAGE sql STABLE
AS $$
    SELECT * FROM job_pauses_now p
    WHERE (p.tenant_id = of_tenant OR p.tenant_id IS NULL)
      AND (p.job_type = of_type OR p.job_type IS NULL)
$$;

-- The breaker (a job type's `breaker_after`): how many of the type's
-- attempts failed in a row, across tenants and processes, counted by the
-- statement that ends attempts. A completion starts the count again, and so
-- does an operator's resume of the type. At `breaker_after` that statement
-- pauses the type (a `job_pauses` row by `errand:breaker`, its reason the
-- last error), so that while what its jobs need is down they keep the
-- attempts they have left. Only types with a breaker have a row: their ends
-- update it, and wait for each other's commits on it (as on the counts).
CREATE TABLE job_breakers (
    job_type   text PRIMARY KEY,
    failures   bigint NOT NULL CHECK (failures >= 0),
    last_error text
) WITH (fillfactor = 50);

-- Unfinished (waiting or running) jobs per tenant, per user, and per user
-- and job type, in one table, so that a statement's counts of every kind
-- take one upsert (queued) or one lock and one update (ended).
-- Why one table: measured, see docs/benchmarks-log.md#one-table-of-counts-unfinished_counts
--
-- A row's kind is in its key: a tenant's total has user_id = job_type = '',
-- a user's total job_type = '', a user's jobs of one type neither. Ids are
-- never empty (domain/ids.rs), so '' stands for "all" and sorts first: in
-- key order a tenant's total comes before its users', and a user's before
-- their types'. Every statement here locks its rows in key order, so two
-- cannot deadlock.
CREATE TABLE unfinished_counts (
    tenant_id text NOT NULL,
    user_id   text NOT NULL,  -- '': the tenant's total
    job_type  text NOT NULL,  -- '': the user's (or tenant's) total
    jobs      bigint NOT NULL CHECK (jobs >= 0),
    -- A tenant's total row only: the highest turn of its jobs ended so far,
    -- where its line stands (see `errand_turn`); kept by the statement
    -- that uncounts ended jobs, which updates the row anyway.
    line_head bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, user_id, job_type),
    CHECK (user_id <> '' OR job_type = '')
) WITH (
    fillfactor = 50,  -- updated in place (HOT), often: eager autovacuum
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0
);

-- Fair share inside a tenant, the line (the claim's side is
-- `errand_tenant_next`). A tenant's line is ordered by priority, then by
-- turn: a job's turn is where its tenant's line stood when it was queued
-- (`line_head`: the highest turn of the tenant's jobs ended so far) plus
-- how many unfinished jobs its user then had (waiting or running, of any
-- priority: the quota counts above). So within a priority users take
-- turns: one person's 60 exports take turns t..t+59, and a colleague's
-- click, queued while they wait, turn t plus their own unfinished jobs: it
-- is next in line, not behind the 60; and a newcomer's burst starts where
-- the line stands, not ahead of a backlog already partly served. Several
-- jobs of one user queued by one statement take consecutive turns (the
-- statement adds each one's place among them). The claim reads the line in
-- index order, as it did when the line was by due time alone.
--
-- A turn is a place in line, not a guarantee: counts read without a lock
-- may be a job behind, the line's head moves when jobs end (not when they
-- are claimed: a click queued while the head's jobs run goes before the
-- rest of their line), and a job retrying keeps its turn (it lost its place
-- only to its backoff). The guarantees are the claim's.
--
-- Both values are read from the tenant's and the user's rows of
-- `unfinished_counts` (one index scan).
-- Why: measured, see docs/benchmarks-log.md#errand_turn-the-lines-head-from-the-counts
-- A set-returning function of one row, used as `CROSS JOIN
-- LATERAL errand_turn(…)`: PostgreSQL inlines it into the statement; called
-- as a scalar function it is not inlined, and costs three times as much.
CREATE FUNCTION errand_turn(tenant text, "user" text) RETURNS TABLE (turn bigint)
LANGUAGE sql STABLE
AS $$
    SELECT coalesce(max(u.line_head) FILTER (WHERE u.user_id = ''), 0)
         + coalesce(max(u.jobs) FILTER (WHERE u.user_id = "user"), 0)
    FROM unfinished_counts u
    WHERE u.tenant_id = tenant AND u.user_id = ANY (ARRAY['', "user"]) AND u.job_type = ''
$$;

-- A tenant's next due jobs for a claim: its line in order (see
-- `errand_turn`), at most `max_jobs`, within its room (`tenant_limit`, or
-- less while the tenant ramps after a pause, minus its running jobs),
-- leaving out types in `excluded_types`, the scopes an operator paused
-- (`job_pauses`: nothing of a paused tenant), held jobs
-- (`job_queue.held_by`) and, unless `only_types` is NULL, types not in it;
-- a type of the tenant ramping after a pause only within its room; and
-- none that would take its user past `user_limit` running jobs. Rows: each job with its `rank`, how many
-- jobs its tenant would run with it (the tenant's running jobs plus its
-- place in the line read). Inlined into both claims (`errand_claim_due`
-- and the claim beside submissions, store/queue/batch_claim.rs).
--
-- `user_limit` below `tenant_limit` keeps slots free for a colleague: while
-- one person's backlog of long exports runs, the line's next job is theirs,
-- and without a free slot a colleague's click would wait for one of theirs
-- to end (minutes). With a slot kept, it starts at the next claim. The
-- price: a tenant with one busy user runs `user_limit` jobs, not
-- `tenant_limit`. errand passes `workers.user_limit` (default: all of a
-- tenant's slots but one, at least one).
--
-- The running jobs are counted per user once, from the index of running
-- rows (at most `tenant_limit` of them). While a user is at their limit and
-- someone else in the tenant has unfinished jobs, the line is read 32 jobs
-- further than the room: a colleague's job is that near the head (its turn
-- is), and the walk must not read a whole backlog of jobs it may not take.
-- A colleague's job further back (only while a line's turns are out of
-- step, e.g. after a retry) starts at the next end.
-- Why only then: measured, see docs/benchmarks-log.md#errand_tenant_next-reading-32-further
CREATE FUNCTION errand_tenant_next(
    tenant text, tenant_limit bigint, user_limit bigint, max_jobs bigint,
    excluded_types text[], only_types text[])
RETURNS TABLE (job_id uuid, job_type text, run_at timestamptz, priority smallint, rank bigint)
LANGUAGE sql STABLE
AS $$
    WITH pauses AS (
        -- The operators' pauses that hold for this tenant (`job_pauses`):
        -- the whole tenant, or some of its types; and its scopes ramping
        -- after one (`reached`): the whole tenant (its limit rises from 1),
        -- or some of its types (each one's jobs running here rise from 1 to
        -- the tenant's limit: `ramp_rooms`). One read of the pauses for both.
        SELECT coalesce(bool_or(p.job_type IS NULL) FILTER (WHERE p.holding), false) AS all_types,
               coalesce(array_agg(p.job_type) FILTER (WHERE p.holding AND p.job_type IS NOT NULL), '{}') AS types,
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
    ), running AS (
        SELECT r.user_id, count(*) AS n FROM job_queue r
        WHERE r.tenant_id = tenant AND r.state = 'running'
        GROUP BY r.user_id
    ), room AS (
        SELECT coalesce(sum(r.n), 0)::bigint AS running,  -- bigint: sum's numeric is slower
               least(max_jobs, greatest(0, tenant_limit - coalesce(sum(r.n), 0)::bigint)) AS room,
               coalesce(array_agg(r.user_id), '{}') AS users,
               coalesce(array_agg(r.n), '{}') AS counts,
               coalesce(array_agg(r.user_id) FILTER (WHERE r.n >= user_limit), '{}') AS at_limit
        FROM running r
    ), capped AS (  -- the room, within a tenant's ramp
        SELECT m.running, least(m.room, greatest(0, coalesce(p.tenant_cap, tenant_limit) - m.running)) AS room,
               m.users, m.counts, m.at_limit, p.types AS paused_types, p.all_types, p.ramp_types, p.ramp_rooms
        FROM room m CROSS JOIN pauses p
    ), reach AS (
        -- How far to read the line: its room, and 32 further while a user
        -- at their limit holds its head and someone else has unfinished
        -- jobs (by the quota counts: two key lookups; a tenant of one busy
        -- user reads no further than its room).
        SELECT m.*,
               CASE WHEN m.room = 0 OR m.all_types THEN 0
                    WHEN cardinality(m.at_limit) > 0
                         AND (SELECT u.jobs FROM unfinished_counts u
                              WHERE u.tenant_id = tenant AND u.user_id = '' AND u.job_type = '')
                             > (SELECT coalesce(sum(u.jobs), 0) FROM unfinished_counts u
                                WHERE u.tenant_id = tenant AND u.user_id = ANY (m.at_limit) AND u.job_type = '')
                    THEN m.room + 32
                    ELSE m.room END AS reach
        FROM capped m
    )
    SELECT c.job_id, c.job_type, c.run_at, c.priority, m.running + c.position
    FROM reach m
    CROSS JOIN LATERAL (
        WITH line AS (
            -- Its line as read: the due jobs of types neither paused nor
            -- excluded, not held, in order, as far as its reach.
            SELECT q.job_id, q.job_type, q.run_at, q.priority, q.turn, q.user_id
            FROM job_queue q
            WHERE q.tenant_id = tenant AND q.state IN ('available', 'retryable') AND q.run_at <= now()
              AND q.job_type <> ALL (excluded_types) AND q.job_type <> ALL (m.paused_types) AND q.held_by IS NULL
              AND (only_types IS NULL OR q.job_type = ANY (only_types))
            ORDER BY q.priority DESC, q.turn, q.run_at, q.job_id
            LIMIT m.reach
        )
        SELECT e.job_id, e.job_type, e.run_at, e.priority, e.user_id,
               row_number() OVER (ORDER BY e.priority DESC, e.turn, e.run_at, e.job_id) AS position
        FROM line e
        -- (The ramp's test is evaluated once: a tenant with no type ramping
        -- reads its line alone, without counting each type's jobs.)
        WHERE e.user_id <> ALL (m.at_limit) AND cardinality(m.ramp_types) = 0
        UNION ALL
        -- When some of its types ramp: each one's jobs within its room.
        SELECT e.job_id, e.job_type, e.run_at, e.priority, e.user_id,
               row_number() OVER (ORDER BY e.priority DESC, e.turn, e.run_at, e.job_id) AS position
        FROM (SELECT w.*,
                     row_number() OVER (PARTITION BY w.job_type ORDER BY w.priority DESC, w.turn, w.run_at, w.job_id)
                         AS nth_of_type
              FROM line w
              WHERE w.user_id <> ALL (m.at_limit) AND cardinality(m.ramp_types) > 0) e
        WHERE e.nth_of_type <= coalesce(m.ramp_rooms[array_position(m.ramp_types, e.job_type)], m.reach)
    ) c
    -- A user's jobs taken here are at most their place among those left
    -- (fewer where others' come first): never past the user's limit, and
    -- never past the tenant's room.
    WHERE c.position <= m.room
      AND coalesce(m.counts[array_position(m.users, c.user_id)], 0) + c.position <= user_limit
$$;

-- One statement's queued jobs, counted in key order (two statements adding
-- to the same rows lock them in one order, so they cannot deadlock), and
-- checked against the caps the statement set (see above).
CREATE FUNCTION errand_count_queued() RETURNS trigger LANGUAGE plpgsql AS $$
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
    -- Only beside caps that are set; a type without a cap is never over.
    WHERE caps IS NOT NULL AND c.jobs > CASE
        WHEN c.user_id = '' THEN coalesce(o.max_unfinished_per_tenant::bigint, (caps ->> 'tenant')::bigint)
        WHEN c.job_type = '' THEN coalesce(o.max_unfinished_per_user::bigint, (caps ->> 'user')::bigint)
        ELSE (caps -> 'types' ->> c.job_type)::bigint END
    -- The broadest count over its cap is the one reported: tenant, user, type.
    ORDER BY c.user_id <> '', c.job_type <> ''
    LIMIT 1;
    IF over IS NOT NULL THEN
        RAISE EXCEPTION 'over quota: %', over USING ERRCODE = 'ER019';
    END IF;
    RETURN NULL;
END $$;

-- One statement's ended jobs, uncounted: the rows are locked in key order
-- first, for the same reason.
--
-- Both statements find a few dozen rows by key among up to three per tenant
-- and user, so the plan is always index lookups, and the function says so
-- (SET).
-- Why: measured, see docs/benchmarks-log.md#errand_count_unqueued-index-lookups-only
CREATE FUNCTION errand_count_unqueued() RETURNS trigger LANGUAGE plpgsql
SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
AS $$
BEGIN
    PERFORM 1
    FROM unfinished_counts u
    JOIN (SELECT tenant_id, coalesce(user_id, '') AS user_id, coalesce(job_type, '') AS job_type
          FROM unqueued
          GROUP BY GROUPING SETS ((tenant_id), (tenant_id, user_id), (tenant_id, user_id, job_type))) g
      USING (tenant_id, user_id, job_type)
    ORDER BY u.tenant_id, u.user_id, u.job_type
    FOR UPDATE OF u;
    UPDATE unfinished_counts u
    SET jobs = u.jobs - g.n,
        line_head = CASE WHEN g.user_id = '' THEN greatest(u.line_head, g.head) ELSE u.line_head END
    FROM (SELECT tenant_id, coalesce(user_id, '') AS user_id, coalesce(job_type, '') AS job_type, count(*) AS n,
                 max(turn) AS head
          FROM unqueued
          GROUP BY GROUPING SETS ((tenant_id), (tenant_id, user_id), (tenant_id, user_id, job_type))) g
    WHERE u.tenant_id = g.tenant_id AND u.user_id = g.user_id AND u.job_type = g.job_type;
    RETURN NULL;
END $$;

CREATE TRIGGER job_queue_counted AFTER INSERT ON job_queue
    REFERENCING NEW TABLE AS queued FOR EACH STATEMENT EXECUTE FUNCTION errand_count_queued();
CREATE TRIGGER job_queue_uncounted AFTER DELETE ON job_queue
    REFERENCING OLD TABLE AS unqueued FOR EACH STATEMENT EXECUTE FUNCTION errand_count_unqueued();


-- 5. Attempts that failed ----------------------------------------------------

-- Why each attempt that failed failed (the job keeps only the last error).
-- Written by the statement that ends the attempt; pruned with the job.
--
-- The operators' job detail shows a timeline of attempts: who claimed each,
-- when, under which lease, and how it ended. The attempt that is running is
-- read from its queue row; one that failed from the row it left here; the
-- attempt that ended the job from `jobs` (`ended_by`, `ended_lease_id`).
-- Each of those rows is written by the statement that ends the attempt
-- anyway, so the timeline costs no extra write: only the columns
-- `started_at`, `lease_id` and `lease_owner`, filled from the queue row in
-- that same statement.
CREATE TABLE job_attempt_errors (
    job_id      uuid NOT NULL REFERENCES jobs (id),
    run         integer NOT NULL,
    attempt     integer NOT NULL,
    error       text NOT NULL,
    ended_at    timestamptz NOT NULL DEFAULT now(),
    started_at  timestamptz,
    lease_id    uuid,
    lease_owner uuid,
    -- Where the attempt resumed from (see `job_queue.resumed_from`).
    resumed_from bigint,
    PRIMARY KEY (job_id, run, attempt)
);

-- What an attempt's handler logged (`ctx.log` in Rust, `POST
-- /worker/v1/jobs/{id}/logs`, `job.log()` in Python), for the operators'
-- timeline: never in the job's row, which every claim and end rewrites.
-- Written in batches (a process's lines of all its attempts, about once a
-- second), fenced on the attempt's lease: the one running under it, or the
-- one that just ended under it (its last lines may come after its end); an
-- attempt whose lease was taken from it writes nothing. At most 1,000 lines
-- or 256 KiB per attempt: past either, one `truncated` line says so, and
-- the rest is dropped. Pruned with the job.
CREATE TABLE job_attempt_logs (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_id    uuid NOT NULL REFERENCES jobs (id),
    run       integer NOT NULL,
    attempt   integer NOT NULL,
    at        timestamptz NOT NULL,
    level     text NOT NULL CHECK (level IN ('debug', 'info', 'warn', 'error')),
    message   text NOT NULL,
    fields    jsonb,
    truncated boolean NOT NULL DEFAULT false
);
CREATE INDEX job_attempt_logs_attempt ON job_attempt_logs (job_id, run, attempt, id);
-- One truncation line per attempt.
CREATE UNIQUE INDEX job_attempt_logs_truncated ON job_attempt_logs (job_id, run, attempt) WHERE truncated;


-- 6. Notifications, and preferences ------------------------------------------

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

-- A user's notifications: written in the statement that ends a job's run
-- (`job_completed`), or cancels it at its owner's request (`job_cancelled`,
-- told to the owner's streams only; see `job_queue.cancel_requested_by`) or
-- for a newer request with its admission key (`job_superseded`, the same).
--
-- And notifications of more than one job's end: a batch that finished
-- (`batch_completed`, to its owner, with the counts in `details`), and a
-- webhook endpoint disabled after failing (`webhook_disabled`, to the
-- tenant's admins, with its URL and why in `details`). Both are in the feed
-- and the unread count like `job_completed`; neither is emailed. Which
-- columns a notification fills depends on its kind (`notifications_subject`).
-- The notification of a job cancelled at the request of `by` (see
-- `job_queue.cancel_requested_by`): a kind told to the owner's streams only
-- (`job_cancelled`, `job_superseded`), or `job_completed`; and the job's
-- error message. One rule for a waiting job's cancel and a running one's end.
CREATE FUNCTION errand_cancel_kind(by text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE by WHEN 'owner' THEN 'job_cancelled' WHEN 'superseded' THEN 'job_superseded' ELSE 'job_completed' END;

CREATE FUNCTION errand_cancel_error(by text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE by WHEN 'owner' THEN 'cancelled by its owner' WHEN 'superseded' THEN 'superseded by a newer request'
               ELSE 'cancelled by an operator' END;

CREATE TABLE notifications (
    id            uuid PRIMARY KEY DEFAULT errand_uuid_v7(),
    tenant_id     text NOT NULL,
    user_id       text NOT NULL,
    kind          text NOT NULL
        CHECK (kind IN ('job_completed', 'job_cancelled', 'job_superseded', 'batch_completed', 'webhook_disabled',
                        'schedule_paused')),
    job_id        uuid REFERENCES jobs (id),
    job_type      text,
    job_status    text CHECK (job_status IN ('completed', 'failed', 'cancelled')),
    error_message text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    read_at       timestamptz,
    -- Seen: the bell was opened while it was in the feed (its badge counts
    -- the unseen); read implies seen. Archived: out of the feed and its
    -- counts, listed apart (`GET /notifications?status=archived`).
    seen_at       timestamptz,
    archived_at   timestamptz,
    run           integer NOT NULL DEFAULT 1,
    -- The batch that finished (its foreign key is in `batches`' section).
    batch_id      uuid,
    -- No foreign key: the notice outlives an endpoint its admin then removes.
    webhook_endpoint_id uuid,
    details       jsonb,
    -- The language it is told in (its job's, batch's or schedule's; the
    -- default for an admin's notice), whenever it is read or sent.
    locale        text NOT NULL DEFAULT 'en',
    -- Exactly one notification of a kind per job and run, whoever finishes it and however often.
    CONSTRAINT notifications_once_per_run UNIQUE (job_id, run, kind),
    CONSTRAINT notifications_subject CHECK (CASE kind
        WHEN 'batch_completed' THEN batch_id IS NOT NULL AND job_type IS NOT NULL AND details IS NOT NULL
        WHEN 'webhook_disabled' THEN webhook_endpoint_id IS NOT NULL AND details IS NOT NULL
        WHEN 'schedule_paused' THEN job_type IS NOT NULL AND details IS NOT NULL
        ELSE job_id IS NOT NULL AND job_type IS NOT NULL AND job_status IS NOT NULL END)
);

CREATE INDEX notifications_owner_newest ON notifications (tenant_id, user_id, id DESC);

-- Notification preferences: each user chooses, per category of job (a job
-- type's `category`, its own name by default) and per channel, whether a
-- job's end reaches them in the app (the feed and live streams) and by
-- email. A category the configuration marks required cannot be turned off.
--
-- Only the choices a user made are stored; NULL is "the configured default".
-- The defaults, the required categories and which category each job type
-- belongs to are configuration, the same in every process: each statement
-- that ends a job hands them to `errand_channels` as JSON (see
-- `domain/preferences.rs`), which is where the rule lives, once.
CREATE TABLE notification_preferences (
    tenant_id  text NOT NULL,
    user_id    text NOT NULL,
    category   text NOT NULL,
    in_app     boolean,
    email      boolean,
    -- Web Push to the user's subscribed devices (`push_subscriptions`).
    push       boolean,
    -- The category's emails wait for the user's digest instead of going at
    -- once (`email_outbox` state `held`): only where they set a digest time
    -- (`notification_settings.digest_every`); never for a required category.
    digest     boolean,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, user_id, category)
);

-- A tenant's defaults for its users, per category (`PUT
-- /tenant/notification-defaults/{category}`, by its admins, audited): what
-- a user who has not chosen gets, before the configuration's defaults.
-- NULL: the configuration's. A required category is on whatever they say.
CREATE TABLE tenant_notification_defaults (
    tenant_id  text NOT NULL,
    category   text NOT NULL,
    in_app     boolean,
    email      boolean,
    push       boolean,
    digest     boolean,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, category)
);

-- A tenant's branding, set by its admins (`PUT /tenant/branding`, audited):
-- the sender name, name, logo, colour and footer of its users' emails. Plain
-- text, shown escaped, never as markup; the footer's only variable is
-- `{name}`. NULL: errand's own.
CREATE TABLE tenant_branding (
    tenant_id     text PRIMARY KEY,
    name          text CHECK (length(name) <= 100),
    logo_url      text CHECK (logo_url LIKE 'https://%' AND length(logo_url) <= 2048),
    primary_color text CHECK (primary_color ~ '^#[0-9a-f]{6}$'),
    from_name     text CHECK (length(from_name) <= 100),
    footer        text CHECK (length(footer) <= 500),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- Each person's quiet hours, in their time zone: from `quiet_start` to
-- `quiet_end` (local times; across midnight when the start is later) their
-- emails and Web Push wait. And their digest: every hour, or every day at
-- `digest_at` (local), one email of what their held emails tell that is
-- still unread and downloadable. Set through `PUT /me/notification-settings`.
-- Only people who set something have a row.
CREATE TABLE notification_settings (
    tenant_id   text NOT NULL,
    user_id     text NOT NULL,
    -- IANA, e.g. Europe/Paris (checked against PostgreSQL's own list when set).
    timezone    text NOT NULL,
    quiet_start time,
    quiet_end   time,
    digest_every text CHECK (digest_every IN ('hour', 'day')),
    digest_at   time,
    -- The digest's next occurrence (`domain::schedule::Recurrence`, as a
    -- schedule's): the Scheduler takes due rows with `FOR UPDATE SKIP
    -- LOCKED`, writes the digest and moves this on in one transaction
    -- (`store/notifications/digests.rs`).
    digest_next_at timestamptz,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, user_id),
    -- Both or neither, and not the same time (an empty or a whole day: neither is meant).
    CONSTRAINT quiet_hours_whole CHECK (CASE WHEN quiet_start IS NULL THEN quiet_end IS NULL
                                             ELSE quiet_end IS NOT NULL AND quiet_start <> quiet_end END),
    CONSTRAINT digest_whole CHECK ((digest_every IS NULL) = (digest_next_at IS NULL)
                                   AND (digest_every = 'day') = (digest_at IS NOT NULL))
);

-- What the Scheduler looks for: digests due.
CREATE INDEX notification_settings_digest_due ON notification_settings (digest_next_at)
    WHERE digest_next_at IS NOT NULL;

-- Whether the end of a job of category `category` reaches user `user` of
-- `tenant` in the app, by email and by Web Push (to the devices they
-- subscribed, if any), under `rules`:
-- {"in_app": bool, "email": bool, "push": bool, "required": [category, …]}
-- (the configured defaults, and the categories no one can turn off); whether
-- its email waits for their digest (chosen, and they set a digest time:
-- else it goes at once); and whether the category is required (its emails
-- and pushes ignore quiet hours and digests). Each channel: required, else
-- the user's choice, else their tenant's default, else the configuration's.
-- Read in the statement that ends the job, so a change counts from the next
-- end on, with no cache to wait out.
CREATE FUNCTION errand_channels(tenant text, "user" text, category text, rules jsonb)
RETURNS TABLE (in_app boolean, email boolean, push boolean, digest boolean, required boolean)
LANGUAGE sql STABLE
AS $$
    -- (`errand_channels.category` is the argument: a bare name would be p's column.)
    SELECT r.required OR coalesce(p.in_app, t.in_app, (rules->>'in_app')::boolean, true),
           r.required OR coalesce(p.email, t.email, (rules->>'email')::boolean, true),
           r.required OR coalesce(p.push, t.push, (rules->>'push')::boolean, true),
           -- (CASE: the settings are read only for someone who chose a digest.)
           CASE WHEN coalesce(p.digest, t.digest) AND NOT r.required
                THEN EXISTS (SELECT 1 FROM notification_settings s
                             WHERE s.tenant_id = tenant AND s.user_id = "user" AND s.digest_every IS NOT NULL)
                ELSE false END,
           r.required
    FROM (SELECT coalesce(rules->'required' ? errand_channels.category, false) AS required) r
    LEFT JOIN notification_preferences p
           ON p.tenant_id = tenant AND p.user_id = "user" AND p.category = errand_channels.category
    LEFT JOIN tenant_notification_defaults t
           ON t.tenant_id = tenant AND t.category = errand_channels.category
$$;

-- When an email or a push may go, if it were sent at `at`, to someone in
-- time zone `zone` whose quiet hours run from `quiet_start` to `quiet_end`
-- (local; across midnight when the start is later; NULL: none): `at`
-- itself, or the end of the quiet hours `at` falls in (the next local
-- `quiet_end`, on the person's wall clock across a change of clocks). An
-- expression of its arguments alone, so PostgreSQL inlines it into the
-- statements that end jobs (a function that read the settings itself ran
-- as a call of its own for every message: measured, bench/push.sh).
CREATE FUNCTION errand_quiet_end(at timestamptz, zone text, quiet_start time, quiet_end time) RETURNS timestamptz
LANGUAGE sql STABLE
RETURN CASE
    WHEN quiet_start < quiet_end AND (at AT TIME ZONE zone)::time >= quiet_start
                                 AND (at AT TIME ZONE zone)::time < quiet_end
        THEN ((at AT TIME ZONE zone)::date + quiet_end) AT TIME ZONE zone
    WHEN quiet_start > quiet_end AND (at AT TIME ZONE zone)::time >= quiet_start
        THEN ((at AT TIME ZONE zone)::date + 1 + quiet_end) AT TIME ZONE zone
    WHEN quiet_start > quiet_end AND (at AT TIME ZONE zone)::time < quiet_end
        THEN ((at AT TIME ZONE zone)::date + quiet_end) AT TIME ZONE zone
    ELSE at
END;

-- The same for user `user` of `tenant`, reading their settings (for a
-- digest, a release of what a digest held, and the tests).
CREATE FUNCTION errand_quiet_until(tenant text, "user" text, at timestamptz) RETURNS timestamptz
LANGUAGE sql STABLE
AS $$
    SELECT coalesce((SELECT errand_quiet_end(at, s.timezone, s.quiet_start, s.quiet_end)
                     FROM notification_settings s WHERE s.tenant_id = tenant AND s.user_id = "user"), at)
$$;

-- When an email or a push of a job's end (or a batch's) may go: now for a
-- required category, else once the person's quiet hours end (their
-- settings' zone and hours, joined by the statement: NULL when they set
-- none). The one rule every statement that writes the outboxes keeps.
CREATE FUNCTION errand_send_at(required boolean, zone text, quiet_start time, quiet_end time) RETURNS timestamptz
LANGUAGE sql STABLE
RETURN CASE WHEN required THEN now() ELSE errand_quiet_end(now(), zone, quiet_start, quiet_end) END;

-- A job type's category under `rules` ({"categories": {job type: category}}):
-- its own name when the rules do not say (a type no longer configured).
CREATE FUNCTION errand_category(job_type text, rules jsonb) RETURNS text
LANGUAGE sql IMMUTABLE
RETURN coalesce(rules->'categories'->>job_type, job_type);


-- 7. Completion emails and Web Push ------------------------------------------

-- A completion email's state (life cycle at `email_outbox`). `held`,
-- `digested` and `dropped` are a job's email whose category the person
-- reads in their digest.
CREATE TYPE email_state AS ENUM ('pending', 'sending', 'sent', 'failed', 'held', 'digested', 'dropped');

-- A job's email as the statement that ends the job writes it: held for
-- the person's digest when `digest` (see `errand_channels`), else due.
CREATE FUNCTION errand_email_state(digest boolean) RETURNS email_state
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN digest THEN 'held'::email_state ELSE 'pending'::email_state END;

-- Completion emails, written in the statement that ends the job (when the
-- job's creator had an email address) and delivered by the Mailer.
--
--   pending --claim--> sending --SMTP accepted--> sent
--   sending --transient failure--> pending (next_attempt_at = backoff)
--   sending --permanent failure or out of attempts--> failed
--   sending --lock expired (process died mid-send)--> claimable again
-- A claim sets next_attempt_at to when its lock expires, so one condition
-- (state pending or sending, next_attempt_at due) finds both kinds of work.
--
-- A job's email in a category its person reads as a digest is written
-- `held` instead, and never claimed. Their digest's occurrence writes one
-- email of its own (`digest_at`, once per person and occurrence) and moves
-- each held email to `digested` (its `digest_id`: listed there) or, when
-- its notification was read or its file is gone, to `dropped`.
CREATE TABLE email_outbox (
    id              uuid PRIMARY KEY DEFAULT errand_uuid_v7(),
    -- The job whose end it tells, the batch whose last child ended
    -- (`batch_id`, whose foreign key is in `batches`' section), or the
    -- digest occurrence (`digest_at`).
    job_id          uuid REFERENCES jobs (id),
    batch_id        uuid,
    digest_at       timestamptz,
    -- A held email's digest, once told there.
    digest_id       uuid REFERENCES email_outbox (id) ON DELETE SET NULL,
    tenant_id       text NOT NULL,
    user_id         text NOT NULL,
    recipient       text NOT NULL,
    -- (A digest's: NULL.)
    job_type        text,
    job_status      text CHECK (job_status IN ('completed', 'failed', 'cancelled')),
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
    -- The claim that took the email: one whose reply was lost is given back
    -- by its id (see `job_queue.claim_id`).
    claim_id        uuid,
    CONSTRAINT email_sent_iff_sent_at CHECK ((state = 'sent') = (sent_at IS NOT NULL)),
    -- At most one email per job and run (and per batch: see `batches`).
    CONSTRAINT email_outbox_once_per_run UNIQUE (job_id, run),
    CONSTRAINT email_outbox_subject CHECK (num_nonnulls(job_id, batch_id, digest_at) = 1
                                           AND (digest_at IS NOT NULL OR (job_type IS NOT NULL AND job_status IS NOT NULL)))
);

CREATE INDEX email_outbox_due ON email_outbox (next_attempt_at) WHERE state IN ('pending', 'sending');
-- A person's emails waiting for their digest.
CREATE INDEX email_outbox_held ON email_outbox (tenant_id, user_id) WHERE state = 'held';
-- One digest per person and occurrence; and what each digest lists.
CREATE UNIQUE INDEX email_outbox_digest_once ON email_outbox (tenant_id, user_id, digest_at)
    WHERE digest_at IS NOT NULL;
CREATE INDEX email_outbox_digest_items ON email_outbox (digest_id) WHERE digest_id IS NOT NULL;

-- Web Push (RFC 8030): the devices people subscribed (`POST
-- /me/push-subscriptions`), each a push service's endpoint and the keys its
-- messages are encrypted to (RFC 8291). At most `push.max_subscriptions_per_user`
-- per user (the insert counts them under a lock of the user's, see
-- `store/notifications/push.rs`). A push service's 404 or 410 for one
-- deletes it: the browser dropped it.
CREATE TABLE push_subscriptions (
    id         uuid PRIMARY KEY DEFAULT errand_uuid_v7(),
    tenant_id  text NOT NULL,
    user_id    text NOT NULL,
    endpoint   text NOT NULL,
    -- The browser's P-256 public key and its 16-byte auth secret, base64url
    -- as the browser's PushSubscription gives them.
    p256dh     text NOT NULL,
    auth       text NOT NULL,
    user_agent text,
    created_at timestamptz NOT NULL DEFAULT now(),
    -- A device subscribes again with the same endpoint: the same row.
    CONSTRAINT push_subscription_once UNIQUE (tenant_id, user_id, endpoint)
);

-- Web Push messages, one per job end and subscribed device, written in the
-- statement that ends the job (beside its email) and delivered by the
-- PushSender; the life cycle of `email_outbox`. When the device's
-- subscription is deleted, what is still pending for it is given up on (the
-- claim finds no device), and what was sent stays in the job's log.
--
-- Neither `subscription_id` nor `job_id` is a foreign key: each check cost
-- every message written a lookup and a row lock (of the device's row, the
-- same few for a whole drain; of the job's, just written by the same
-- statement), and neither guards anything here: a deleted device is a
-- state the sender reads anyway, and the rows go with their job
-- (`forget_jobs!`). Why: measured (bench/push.sh, a drain whose every end
-- writes a message, against none): 0.76 with both keys, 0.82 without the
-- device's, 0.88 without either (medians of 3 pairs, 2026-12-06).
CREATE TABLE push_outbox (
    job_id          uuid NOT NULL,
    run             integer NOT NULL,
    subscription_id uuid NOT NULL,
    tenant_id       text NOT NULL,
    user_id         text NOT NULL,
    -- The in-app notification of the same end (the push's `tag`, so that the
    -- open tab's toast and the push are one), when there is one.
    notification_id uuid,
    job_type        text NOT NULL,
    job_status      text NOT NULL CHECK (job_status IN ('completed', 'failed', 'cancelled')),
    state           email_state NOT NULL DEFAULT 'pending',
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error      text,
    -- The push service's status code for the last attempt.
    response_status integer,
    created_at      timestamptz NOT NULL DEFAULT now(),
    sent_at         timestamptz,
    claim_id        uuid,
    CONSTRAINT push_sent_iff_sent_at CHECK ((state = 'sent') = (sent_at IS NOT NULL)),
    -- One message per job end and device: the key (one index fewer to
    -- write with every end than an id of its own beside it).
    PRIMARY KEY (job_id, run, subscription_id)
);

CREATE INDEX push_outbox_due ON push_outbox (next_attempt_at) WHERE state IN ('pending', 'sending');


-- 8. Webhooks ----------------------------------------------------------------

-- Each tenant's data key, which seals its secrets kept at rest
-- (`domain/keys/sealing.rs`), kept only wrapped by a key-encryption key of
-- the configuration (`version`: which one). Deleting a tenant's row makes
-- what was sealed under it unreadable, in backups too (a tenant's erasure
-- does). `errand keys rotate` rewraps every row under the current key.
CREATE TABLE tenant_keys (
    tenant_id    text PRIMARY KEY,
    version      text NOT NULL,
    wrapped      bytea NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    rewrapped_at timestamptz
);

-- Webhook endpoints: a tenant's admins register URLs that hear when the
-- tenant's jobs end, signed as Standard Webhooks specifies. Each endpoint's
-- secret (`whsec_…`, shown once when it is made) signs its deliveries, so it
-- is kept, sealed under its tenant's data key (`sealed:…`; one written in
-- clear, by hand or before errand sealed them, is read as it is until
-- `errand keys rotate` seals it); nothing else reads it.
CREATE TABLE webhook_endpoints (
    id              uuid PRIMARY KEY DEFAULT errand_uuid_v7(),
    tenant_id       text NOT NULL,
    url             text NOT NULL,
    events          text[] NOT NULL
        CONSTRAINT webhook_events_known
        CHECK (cardinality(events) > 0
               AND events <@ ARRAY['job.completed', 'job.failed', 'job.cancelled', 'type.paused']),
    secret          text NOT NULL,
    -- The admin who registered it, and their language (their notice that
    -- it was disabled is in it).
    created_by      text NOT NULL,
    locale          text NOT NULL DEFAULT 'en',
    created_at      timestamptz NOT NULL DEFAULT now(),
    -- Set when deliveries kept failing; a disabled endpoint gets nothing.
    disabled_at     timestamptz,
    disabled_reason text
);

CREATE INDEX webhook_endpoints_tenant ON webhook_endpoints (tenant_id, id);

-- Webhook deliveries: one row per endpoint and job end, written in the
-- statement that ends the job (as its notification and email are), then sent
-- by the WebhookSender and its answer recorded at once. And one per endpoint
-- and pause of a job type (`type.paused`, `errand_queue_pause_webhooks`),
-- whose `details` are what the delivery says (the pause's row may be gone by
-- the time it is sent).
--
--   pending --claim--> sending --2xx--> delivered
--   sending --any other answer, or none--> pending (next_attempt_at = backoff)
--   sending --out of attempts--> failed
--   sending --lock expired (process died mid-send)--> claimable again
-- As for emails, a claim sets next_attempt_at to when its lock expires; a
-- claim whose answer was lost is given back by its id (`claim_id`).
CREATE TYPE webhook_delivery_state AS ENUM ('pending', 'sending', 'delivered', 'failed');

CREATE TABLE webhook_deliveries (
    -- Also the delivery's `webhook-id`: the same on every retry.
    id              uuid PRIMARY KEY DEFAULT errand_uuid_v7(),
    endpoint_id     uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    tenant_id       text NOT NULL,
    job_id          uuid REFERENCES jobs (id),
    run             integer,
    pause_id        uuid,
    details         jsonb,
    event           text NOT NULL,
    state           webhook_delivery_state NOT NULL DEFAULT 'pending',
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    claim_id        uuid,
    -- The last attempt: the endpoint's status (NULL: no answer), what went wrong, how long it took.
    last_status     integer,
    last_error      text,
    last_latency_ms integer,
    created_at      timestamptz NOT NULL DEFAULT now(),
    delivered_at    timestamptz,
    -- The last time an admin had it sent again: once per webhooks.redeliver_cooldown.
    redelivered_at  timestamptz,
    -- One delivery per endpoint, job and run, or per endpoint and pause.
    CONSTRAINT webhook_delivery_once UNIQUE (endpoint_id, job_id, run),
    CONSTRAINT webhook_delivery_of_a_job_or_a_pause
        CHECK ((job_id IS NOT NULL AND run IS NOT NULL AND pause_id IS NULL)
               OR (job_id IS NULL AND pause_id IS NOT NULL AND details IS NOT NULL))
);
CREATE UNIQUE INDEX webhook_delivery_once_per_pause ON webhook_deliveries (endpoint_id, pause_id)
    WHERE pause_id IS NOT NULL;
-- The pauses' deliveries, oldest first: pruned by age, having no job to go with.
CREATE INDEX webhook_deliveries_of_pauses ON webhook_deliveries (id) WHERE pause_id IS NOT NULL;

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state IN ('pending', 'sending');
CREATE INDEX webhook_deliveries_job ON webhook_deliveries (job_id);
-- An endpoint's delivery log, newest first.
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id DESC);

-- The webhook channel's preferences: per tenant and category of job, whether
-- the tenant's endpoints hear of its jobs' ends. A tenant's admins choose
-- (`PUT /webhooks/preferences/{category}`); on until they do, and a required
-- category cannot be turned off, as for people's channels. Only choices made
-- are stored.
CREATE TABLE webhook_preferences (
    tenant_id  text NOT NULL,
    category   text NOT NULL,
    webhook    boolean NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, category)
);

-- The category of a job type's ends as the webhook channel's choices see it
-- under `rules` (as `errand_channels` takes them): NULL for a required
-- category, which no tenant's choice turns off (a category made required
-- after a tenant turned it off is delivered again). The statements that end
-- jobs hand it to `errand_queue_webhooks`; the API reads the same rule.
CREATE FUNCTION errand_webhook_category(job_type text, rules jsonb) RETURNS text
LANGUAGE sql IMMUTABLE
RETURN CASE WHEN coalesce(rules->'required' ? errand_category(job_type, rules), false) THEN NULL
            ELSE errand_category(job_type, rules) END;

-- Queues a delivery of each job end in (`tenants`, `jobs`, `runs`,
-- `states`, `categories`) to each enabled endpoint of its tenant that asked
-- for that event (`job.completed`, `job.failed`, `job.cancelled`), unless
-- the tenant turned the job's category off for webhooks; a NULL category (a
-- required one, see `errand_webhook_category`) is delivered. Called by every
-- statement that ends jobs, once for all the jobs it ended: the one place
-- where a job end becomes webhook deliveries.
--
-- In PL/pgSQL, which a connection plans once: as a SQL function its INSERT
-- was planned again at each call, a tenth of the time of the statement that
-- ends every batch of attempts, even when no tenant had an endpoint. And a
-- batch none of whose tenants has an enabled endpoint, the common case, is
-- answered by an index probe per tenant before anything else.
CREATE FUNCTION errand_queue_webhooks(tenants text[], jobs uuid[], runs integer[], states text[], categories text[])
RETURNS bigint
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    queued bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM webhook_endpoints e
                   WHERE e.tenant_id = ANY (tenants) AND e.disabled_at IS NULL) THEN
        RETURN 0;
    END IF;
    WITH delivered AS (
        INSERT INTO webhook_deliveries (endpoint_id, tenant_id, job_id, run, event)
        SELECT e.id, j.tenant_id, j.job_id, j.run, 'job.' || j.state
        FROM unnest(tenants, jobs, runs, states, categories) AS j (tenant_id, job_id, run, state, category)
        JOIN webhook_endpoints e
          ON e.tenant_id = j.tenant_id AND e.disabled_at IS NULL AND ('job.' || j.state) = ANY (e.events)
        WHERE NOT EXISTS (SELECT 1 FROM webhook_preferences p
                          WHERE p.tenant_id = j.tenant_id AND p.category = j.category AND NOT p.webhook)
        ON CONFLICT DO NOTHING
        RETURNING 1
    )
    SELECT count(*) INTO queued FROM delivered;
    RETURN queued;
END
$$;

-- Queues a `type.paused` delivery of pause `pause` (of `job_type`, in
-- `tenant` or, NULL, every tenant; by `paused_by`) to each enabled endpoint
-- that asked for that event, of the paused tenant, or of every tenant for a
-- type paused everywhere. What it says is kept in the row: the type, the
-- tenant, when, until when, and whether an operator or the type's breaker
-- paused it; never the reason, which may quote another tenant's error.
-- Called by the operators' pause and by the statement that ends attempts
-- when a breaker trips; answers how many it queued.
CREATE FUNCTION errand_queue_pause_webhooks(
    pause uuid, job_type text, tenant text, paused_at timestamptz, until timestamptz, paused_by text)
RETURNS bigint
LANGUAGE sql VOLATILE
AS $$
    WITH delivered AS (
        INSERT INTO webhook_deliveries (endpoint_id, tenant_id, pause_id, details, event)
        SELECT e.id, e.tenant_id, pause,
               jsonb_build_object('job_type', job_type, 'tenant', tenant, 'paused_at', paused_at, 'until', until,
                                  'paused_by', CASE WHEN paused_by = 'errand:breaker' THEN 'breaker' ELSE 'operator' END),
               'type.paused'
        FROM webhook_endpoints e
        WHERE (e.tenant_id = tenant OR tenant IS NULL) AND e.disabled_at IS NULL AND 'type.paused' = ANY (e.events)
          AND job_type IS NOT NULL
        ON CONFLICT DO NOTHING
        RETURNING 1
    )
    SELECT count(*) FROM delivered
$$;

-- The WebhookSender's claim, as a function so that it can be planned the one
-- way that stays cheap: an index scan of the due deliveries in due order.
-- A queue's claim has one good plan, so the function asks for it (SET below)
-- rather than hoping the statistics keep up.
-- Why: measured, see docs/benchmarks-log.md#errand_claim_webhook_deliveries-the-index-scan
--
-- Claims up to `want` due deliveries of enabled endpoints for `lock_ms`, under
-- the claim id `claim` (see `lost_claims.rs`), at most `cap` in flight per
-- endpoint counting the sender's own (`busy`, `busy_n`): oldest due first,
-- among the first 4 x `want` due of the endpoints with room, so an endpoint
-- that never answers fills its own slots only, however many of its
-- deliveries are due.
CREATE FUNCTION errand_claim_webhook_deliveries(
    want bigint, lock_ms float8, claim uuid, cap integer, busy uuid[], busy_n integer[]
) RETURNS TABLE (delivery_id uuid, endpoint_id uuid, job_id uuid, event text, attempts integer)
-- PL/pgSQL keeps its statement's plan for the session: planning the claim
-- cost 2 ms a call, more than running it.
LANGUAGE plpgsql VOLATILE
-- A claim takes at most a sender's free slots: planners of the statements
-- that call it join its rows to jobs by index, not by reading all the jobs.
ROWS 64
SET enable_seqscan = off
SET enable_bitmapscan = off
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH held AS (
        SELECT * FROM unnest(busy, busy_n) AS h (endpoint_id, n)
    ), candidates AS (
        SELECT d.id, d.endpoint_id, d.next_attempt_at
        FROM webhook_deliveries d
        JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.disabled_at IS NULL
        WHERE d.state IN ('pending', 'sending') AND d.next_attempt_at <= now()
          AND NOT EXISTS (SELECT 1 FROM held h WHERE h.endpoint_id = d.endpoint_id AND h.n >= cap)
        ORDER BY d.next_attempt_at
        LIMIT want * 4
    ), within_cap AS (
        SELECT c.id
        FROM (SELECT c.*, row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.next_attempt_at) AS nth
              FROM candidates c) c
        LEFT JOIN held h ON h.endpoint_id = c.endpoint_id
        WHERE c.nth <= cap - coalesce(h.n, 0)
    ), due AS (
        SELECT d.id FROM webhook_deliveries d
        WHERE d.id IN (SELECT w.id FROM within_cap w) AND d.state IN ('pending', 'sending')
          AND d.next_attempt_at <= now()
        ORDER BY d.next_attempt_at LIMIT want
        FOR UPDATE SKIP LOCKED
    )
    UPDATE webhook_deliveries d
    SET state = 'sending', attempts = d.attempts + 1, next_attempt_at = now() + lock_ms * interval '1 millisecond',
        claim_id = claim
    FROM due
    WHERE d.id = due.id
    RETURNING d.id, d.endpoint_id, d.job_id, d.event, d.attempts;
END
$$;


-- 9. Batches -----------------------------------------------------------------

-- A batch is a bulk action: one request, many ordinary jobs (its children,
-- `jobs.batch_id`), one notification when the last child ends. The children
-- are claimed, limited, retried and ended like any job; their ends are
-- counted here by a trigger on `jobs`, so every statement that ends a job,
-- of any errand version, counts it (none has to remember to).
CREATE TABLE batches (
    id              uuid PRIMARY KEY DEFAULT errand_uuid_v7(),
    tenant_id       text NOT NULL,
    user_id         text NOT NULL,
    user_email      text,
    -- The owner's language, for its children (as `jobs.locale`).
    locale          text NOT NULL DEFAULT 'en',
    -- The service that asked for it, for its children (as `jobs.acted_by`).
    acted_by        text,
    -- As for jobs: one batch per (tenant, user, key); the fingerprint is of
    -- the job type and the items, so a key reused for other items is refused.
    idempotency_key text NOT NULL,
    fingerprint     bytea NOT NULL,
    job_type        text NOT NULL,
    total           integer NOT NULL CHECK (total > 0),
    -- Children in each end state now (an operator's retry of a child takes it
    -- back out of its count until it ends again).
    completed       integer NOT NULL DEFAULT 0 CHECK (completed >= 0),
    failed          integer NOT NULL DEFAULT 0 CHECK (failed >= 0),
    cancelled       integer NOT NULL DEFAULT 0 CHECK (cancelled >= 0),
    created_at      timestamptz NOT NULL DEFAULT now(),
    -- When the last child ended; NULL again while a retried child runs.
    finished_at     timestamptz,
    -- The email its end sends, as the configuration had it when the batch
    -- was made (the trigger below cannot read the configuration): the
    -- children's category, the email channel's default (NULL: email was
    -- off, or the owner had no address: no email), and whether the
    -- category is required. The owner's own choice is read when it ends.
    category        text NOT NULL DEFAULT '',
    email_default   boolean,
    email_required  boolean NOT NULL DEFAULT false,
    CONSTRAINT batches_idempotency_key_unique UNIQUE (tenant_id, user_id, idempotency_key),
    CONSTRAINT batches_counts_within_total CHECK (completed + failed + cancelled <= total),
    CONSTRAINT batches_finished_iff_counted
        CHECK ((completed + failed + cancelled = total) = (finished_at IS NOT NULL))
) WITH (
    -- Every child's end rewrites its batch's row: leave room for HOT updates.
    fillfactor = 50
);

CREATE INDEX batches_owner_newest ON batches (tenant_id, user_id, id DESC);
-- An owner's batches still running: what their live streams report progress of.
CREATE INDEX batches_owner_open ON batches (tenant_id, user_id) WHERE finished_at IS NULL;

ALTER TABLE jobs ADD CONSTRAINT jobs_batch_id_fkey FOREIGN KEY (batch_id) REFERENCES batches (id);
-- A batch's children (its failure report, its cancel), and the pruner's check
-- that none is left.
CREATE INDEX jobs_batch ON jobs (batch_id, id) WHERE batch_id IS NOT NULL;

ALTER TABLE notifications ADD CONSTRAINT notifications_batch_id_fkey FOREIGN KEY (batch_id) REFERENCES batches (id);
ALTER TABLE email_outbox ADD CONSTRAINT email_outbox_batch_id_fkey FOREIGN KEY (batch_id) REFERENCES batches (id);
-- Exactly one email per batch, whoever ends its last child and however often.
CREATE UNIQUE INDEX email_outbox_once_per_batch ON email_outbox (batch_id) WHERE batch_id IS NOT NULL;
-- Exactly one notification per batch, whoever ends its last child and however often.
CREATE UNIQUE INDEX notifications_once_per_batch ON notifications (batch_id) WHERE kind = 'batch_completed';

-- Counts the children a statement ended (or, for an operator's retry, took
-- back out of an end state) on their batches, and tells each batch's
-- owner when its last child ends. The batches' rows are locked in id order,
-- so two statements ending children of the same batches cannot deadlock on
-- them; under READ COMMITTED the update adds to the newest committed counts,
-- so exactly one statement sees a batch's count reach its total.
CREATE FUNCTION errand_count_batch_ends() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    announced bigint;
BEGIN
    -- Most statements end no batch's child: a scan of the new rows, and out
    -- (measured: without it, the counting query cost a drain about 5 %).
    IF NOT EXISTS (SELECT 1 FROM updated_jobs WHERE batch_id IS NOT NULL) THEN
        RETURN NULL;
    END IF;
    WITH moved AS (
        SELECT n.batch_id,
               count(*) FILTER (WHERE n.state = 'completed') - count(*) FILTER (WHERE o.state = 'completed') AS completed,
               count(*) FILTER (WHERE n.state = 'failed') - count(*) FILTER (WHERE o.state = 'failed') AS failed,
               count(*) FILTER (WHERE n.state = 'cancelled') - count(*) FILTER (WHERE o.state = 'cancelled') AS cancelled
        FROM updated_jobs n JOIN prior_jobs o ON o.id = n.id
        WHERE n.batch_id IS NOT NULL AND n.state IS DISTINCT FROM o.state
        GROUP BY n.batch_id
    ), locked AS (
        SELECT b.id FROM batches b WHERE b.id IN (SELECT batch_id FROM moved) ORDER BY b.id FOR NO KEY UPDATE
    ), counted AS (
        UPDATE batches b
        SET completed = b.completed + m.completed, failed = b.failed + m.failed, cancelled = b.cancelled + m.cancelled,
            finished_at = CASE WHEN b.completed + m.completed + b.failed + m.failed + b.cancelled + m.cancelled = b.total
                               THEN coalesce(b.finished_at, now()) END
        FROM moved m, locked l
        WHERE b.id = m.batch_id AND l.id = b.id
        RETURNING b.id, b.tenant_id, b.user_id, b.user_email, b.job_type, b.total, b.completed, b.failed, b.cancelled,
                  b.finished_at, b.category, b.email_default, b.email_required, b.locale
    ), emailed AS (
        -- Its email, as far as the owner's choice for the category allows
        -- (read now, as a job's end reads it), after their quiet hours.
        INSERT INTO email_outbox (batch_id, tenant_id, user_id, recipient, job_type, job_status, next_attempt_at)
        SELECT c.id, c.tenant_id, c.user_id, c.user_email, c.job_type,
               CASE WHEN c.completed = c.total THEN 'completed' ELSE 'failed' END,
               errand_send_at(c.email_required, ns.timezone, ns.quiet_start, ns.quiet_end)
        FROM counted c
        LEFT JOIN notification_settings ns ON ns.tenant_id = c.tenant_id AND ns.user_id = c.user_id
        LEFT JOIN notification_preferences p
               ON p.tenant_id = c.tenant_id AND p.user_id = c.user_id AND p.category = c.category
        LEFT JOIN tenant_notification_defaults t ON t.tenant_id = c.tenant_id AND t.category = c.category
        WHERE c.finished_at IS NOT NULL AND c.email_default IS NOT NULL AND c.user_email IS NOT NULL
          AND (c.email_required OR coalesce(p.email, t.email, c.email_default))
        ON CONFLICT (batch_id) WHERE batch_id IS NOT NULL DO NOTHING
    ), notified AS (
        INSERT INTO notifications (tenant_id, user_id, kind, batch_id, job_type, details, locale)
        SELECT tenant_id, user_id, 'batch_completed', id, job_type,
               jsonb_build_object('total', total, 'completed', completed, 'failed', failed, 'cancelled', cancelled),
               locale
        FROM counted WHERE finished_at IS NOT NULL
        ON CONFLICT (batch_id) WHERE kind = 'batch_completed' DO NOTHING
        RETURNING tenant_id, user_id
    )
    -- Owners' streams hear of each batch's new counts (`batch_progress`
    -- events), and of its notification.
    SELECT (SELECT count(pg_notify('errand_progress', tag))
            FROM (SELECT DISTINCT errand_owner_tag(tenant_id, user_id) AS tag FROM counted) owners)
         + (SELECT count(pg_notify('errand_notifications', errand_owner_tag(tenant_id, user_id))) FROM notified)
    INTO announced;
    RETURN NULL;
END
$$;

CREATE TRIGGER jobs_count_batch_ends AFTER UPDATE ON jobs
    REFERENCING OLD TABLE AS prior_jobs NEW TABLE AS updated_jobs
    FOR EACH STATEMENT EXECUTE FUNCTION errand_count_batch_ends();


-- 10. Schedules --------------------------------------------------------------

-- Schedules: a user's own recurring jobs, "every Monday at 08:00,
-- Europe/Paris". A schedule row holds its next occurrence; a process whose
-- scheduler finds it due takes the row (FOR UPDATE SKIP LOCKED: processes
-- share the work and never block on one another), records the occurrence's
-- job and moves the row to the occurrence after, in one transaction. The
-- job's idempotency key derives from (schedule, occurrence instant), and the
-- jobs' key is unique: two processes, a restart or a failover cannot make
-- two jobs for one occurrence. No process holds a schedule in memory: there
-- is no leader to elect, and nothing to rebuild after one dies.
CREATE TYPE schedule_missed AS ENUM ('skip', 'catch_up');
CREATE TYPE schedule_overlap AS ENUM ('skip', 'queue', 'cancel_previous');

CREATE TABLE schedules (
    id              uuid PRIMARY KEY DEFAULT errand_uuid_v7(),
    tenant_id       text NOT NULL,
    user_id         text NOT NULL,
    -- From the creator's token, for the jobs' emails (as `jobs.user_email`).
    user_email      text,
    -- The creator's language, for its jobs (as `jobs.locale`).
    locale          text NOT NULL DEFAULT 'en',
    -- As for jobs: one schedule per (tenant, user, key); the fingerprint is of
    -- the request, so a key reused for another schedule is refused.
    idempotency_key text NOT NULL,
    fingerprint     bytea NOT NULL,
    job_type        text NOT NULL,
    -- The jobs' params as the owner wrote them: `{"$date": …}` expressions
    -- are kept, and each job gets them resolved for its occurrence
    -- (`domain::date_expression`).
    params          jsonb NOT NULL,
    -- An export's file format for its jobs (as `jobs.format`); NULL for a
    -- type that writes no file.
    format          text CHECK (format IN ('csv', 'csv.gz', 'xlsx', 'ndjson')),
    -- The `traceparent` of the request that made it: its occurrences' jobs
    -- link to it (`jobs.traceparent`).
    traceparent     text CHECK (length(traceparent) = 55),
    -- Five cron fields or a shorthand, read on `timezone`'s wall clock
    -- (`src/domain/schedule.rs` says how gaps and repeated hours fire).
    cron            text NOT NULL,
    timezone        text NOT NULL,
    ends_at         timestamptz,
    -- Occurrences missed (errand down, the schedule paused): skipped, or the
    -- latest `catch_up_limit` of them run.
    missed          schedule_missed NOT NULL DEFAULT 'skip',
    catch_up_limit  integer NOT NULL DEFAULT 1 CHECK (catch_up_limit BETWEEN 1 AND 100),
    -- When an occurrence comes while the job of the one before is unfinished.
    overlap         schedule_overlap NOT NULL DEFAULT 'skip',
    paused_at       timestamptz,
    -- Who paused it: its owner, a tenant admin or an operator
    -- ('administrator'), or errand because its owner has not signed in for
    -- `schedules.owner_inactive_after` ('owner_inactive').
    paused_by       text CHECK (paused_by IN ('owner', 'administrator', 'owner_inactive')),
    -- The next occurrence: when it fires, the wall-clock time it matched,
    -- and whether it is the second of a repeated wall time. NULL: no more
    -- (past `ends_at`, or an expression with no future match).
    next_run_at     timestamptz,
    next_local      timestamp,
    next_second_of_fold boolean NOT NULL DEFAULT false,
    -- The job of the latest occurrence that made one (for `overlap`); the
    -- history's pruning may delete it, and an ended job has no overlap.
    last_job_id     uuid REFERENCES jobs (id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT schedules_idempotency_key_unique UNIQUE (tenant_id, user_id, idempotency_key),
    CONSTRAINT schedules_next_whole CHECK ((next_run_at IS NULL) = (next_local IS NULL)),
    CONSTRAINT schedules_paused_by_whom CHECK ((paused_at IS NULL) = (paused_by IS NULL))
);

-- What schedulers look for: due, not paused.
CREATE INDEX schedules_due ON schedules (next_run_at) WHERE paused_at IS NULL AND next_run_at IS NOT NULL;
-- A user's schedules, newest first; and how many they have (the quota).
CREATE INDEX schedules_owner_newest ON schedules (tenant_id, user_id, id DESC);

-- Pruning a job looks here for schedules naming it.
CREATE INDEX schedules_last_job ON schedules (last_job_id) WHERE last_job_id IS NOT NULL;

-- A job made by a schedule (`jobs.schedule_id`, `jobs.scheduled_for`).
-- Deleting the schedule keeps its jobs (their schedule_id emptied, through
-- this index).
ALTER TABLE jobs ADD CONSTRAINT jobs_schedule_id_fkey
    FOREIGN KEY (schedule_id) REFERENCES schedules (id) ON DELETE SET NULL;
CREATE INDEX jobs_schedule ON jobs (schedule_id) WHERE schedule_id IS NOT NULL;

-- When each person last signed in, and the email address their latest
-- token gave (NULL: none). A schedule's jobs are mailed to it, not to the
-- address of the token that made the schedule, and a schedule whose owner
-- has not signed in for `schedules.owner_inactive_after` pauses itself:
-- someone who left the company is not mailed reports for ever.
-- Written by each process at most once an hour per person, many people a
-- statement (`actors/upkeep/sightings.rs`): a sighting lost with a process
-- only makes the next one later. A row is pruned once it is older than
-- `owner_inactive_after` and its person owns no schedule, and erased with
-- its person.
CREATE TABLE people (
    tenant_id text NOT NULL,
    user_id   text NOT NULL,
    email     text,
    seen_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, user_id)
);


-- 11. Operators' actions -----------------------------------------------------

-- Operators: retries of ended jobs (a new run, see `jobs`), attempts' errors
-- (`job_attempt_errors`), and an audit trail.
--
-- Every operator action, written in the transaction that does it: who (the
-- operator token's `sub`), what, on which job or which filter, how many jobs.
-- An operator may cancel every unfinished job a filter matches (in steps,
-- each audited as `bulk_cancel`), as they may retry every failed one.
-- Setting a tenant's quotas (`tenant_quotas`) is audited as any operator
-- action; its filter column holds the tenant and the new caps.
CREATE TABLE operator_actions (
    id       uuid PRIMARY KEY DEFAULT errand_uuid_v7(),
    at       timestamptz NOT NULL DEFAULT now(),
    operator text NOT NULL,
    action   text NOT NULL CHECK (action IN ('retry', 'cancel', 'bulk_retry', 'bulk_cancel', 'set_quotas', 'pause', 'resume', 'hold',
                                       'release', 'erase', 'schedule_pause', 'schedule_delete', 'set_retention',
                                       'notification_defaults', 'set_branding')),
    job_id   uuid,
    filter   jsonb,
    affected integer NOT NULL,
    CHECK ((job_id IS NULL) <> (filter IS NULL))
);

-- The job detail lists the operator actions taken on the job.
CREATE INDEX operator_actions_job ON operator_actions (job_id, id) WHERE job_id IS NOT NULL;


-- 12. Process totals ---------------------------------------------------------

-- Claims and attempt ends per second, cluster-wide, for the operators'
-- overview. Each errand process counts its own in memory and writes its
-- running totals here every few seconds: one small upsert per process, not
-- a write per job. The overview sums the rows; a page samples the sums and
-- shows their rates. A process that stopped leaves its last totals (its
-- rate is then zero) until a day has passed.
CREATE TABLE process_totals (
    -- The process's `application_name` (`errand/<uuid>`).
    process        text PRIMARY KEY,
    claimed        bigint NOT NULL,
    attempts_ended bigint NOT NULL,
    updated_at     timestamptz NOT NULL DEFAULT now()
);


-- 13. Discarded upload files -------------------------------------------------

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

-- ---------------------------------------------------------------------------
-- Stream tickets (`store/tickets.rs`)
-- ---------------------------------------------------------------------------
--
-- A ticket issued by `POST /notifications/stream-tickets` and not yet used.
-- Opening a stream with it deletes its row, so a ticket opens one stream,
-- once, in whichever process; expired rows are swept by the next issue of the
-- same user and by the Pruner. The signed ticket is the credential; the row
-- only says it is still unused (the id is no secret).
CREATE TABLE stream_tickets (
    id         uuid PRIMARY KEY,
    tenant_id  text NOT NULL,
    user_id    text NOT NULL,
    expires_at timestamptz NOT NULL
);

CREATE INDEX stream_tickets_owner ON stream_tickets (tenant_id, user_id);


-- 14. Row-level security: the caller doors' floor ----------------------------

-- The store's caller doors (`Store::jobs_for(caller)` and the other
-- `<rows>_for(caller)` and `<rows>_for_tenant(tenant)` doors) run each
-- statement in a transaction that takes the role `errand_caller` and sets
-- `errand.tenant` (`store/pool/tenant_scope.rs`). Under that role the
-- tables that hold people's data show and take only that tenant's rows,
-- whatever a statement's WHERE says: one that forgot its tenant returns
-- the caller's tenant's rows, and with no tenant set, nothing. Every other
-- role (the process's own sides: claims, ends, the pruner, operators) is
-- as before; the tables' owner and superusers are never held by policies.
--
-- The role is the cluster's, made once (by whichever database migrates
-- first); the login role errand runs as must be able to take it: the
-- migrating role is granted it here.
--
-- errand may also run as a role that owns no table (`database.url`),
-- migrating as the owner (`database.migration_url`): that login role is
-- made a member of `errand_runtime`, which may read and write every table
-- (no DDL) and take `errand_caller` (docs/privacy.md).
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'errand_caller') THEN
        CREATE ROLE errand_caller NOLOGIN NOINHERIT NOBYPASSRLS;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL;  -- another database's migration made it meanwhile
END
$$;

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'errand_runtime') THEN
        CREATE ROLE errand_runtime NOLOGIN NOBYPASSRLS;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL;
END
$$;

DO $$
BEGIN
    IF NOT pg_has_role('errand_runtime', 'errand_caller', 'MEMBER') THEN
        GRANT errand_caller TO errand_runtime;
    END IF;
END
$$;

DO $$
BEGIN
    IF NOT pg_has_role(current_user, 'errand_caller', 'MEMBER') THEN
        EXECUTE format('GRANT errand_caller TO %I', current_user);
    END IF;
END
$$;

-- A view reads its tables as whoever reads the view, so the policies hold
-- through it (by default it would read them as its owner).
ALTER VIEW jobs_live SET (security_invoker = true);

GRANT USAGE ON SCHEMA public TO errand_caller, errand_runtime;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO errand_caller, errand_runtime;
ALTER DEFAULT PRIVILEGES IN SCHEMA public
    GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO errand_caller, errand_runtime;

-- Each table of people's data: the caller role sees its tenant's rows; any
-- other role, as before (`current_user` is the same for every row: a
-- one-time check, not a per-row cost).
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['jobs', 'job_queue', 'unfinished_counts', 'notifications', 'notification_preferences',
                             'notification_settings', 'tenant_notification_defaults', 'tenant_branding',
                             'email_outbox', 'push_subscriptions', 'push_outbox', 'webhook_endpoints', 'webhook_deliveries', 'webhook_preferences',
                             'batches', 'schedules', 'people', 'stream_tickets', 'tenant_keys']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY callers_tenant ON %I TO errand_caller
                            USING (tenant_id = current_setting(''errand.tenant'', true))
                            WITH CHECK (tenant_id = current_setting(''errand.tenant'', true))', t);
        EXECUTE format('CREATE POLICY outside_caller_scope ON %I
                            USING (current_user <> ''errand_caller'') WITH CHECK (current_user <> ''errand_caller'')', t);
    END LOOP;
    -- A job's attempt errors and logs: those of jobs the caller role sees.
    FOREACH t IN ARRAY ARRAY['job_attempt_errors', 'job_attempt_logs']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY callers_tenant ON %I TO errand_caller
                            USING (EXISTS (SELECT 1 FROM jobs j WHERE j.id = job_id))
                            WITH CHECK (EXISTS (SELECT 1 FROM jobs j WHERE j.id = job_id))', t);
        EXECUTE format('CREATE POLICY outside_caller_scope ON %I
                            USING (current_user <> ''errand_caller'') WITH CHECK (current_user <> ''errand_caller'')', t);
    END LOOP;
END
$$;
