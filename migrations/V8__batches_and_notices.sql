-- Batches, and notifications that are not about one job (issue 21).
--
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

ALTER TABLE jobs ADD COLUMN batch_id uuid REFERENCES batches (id);
-- A batch's children (its failure report, its cancel), and the pruner's check
-- that none is left.
CREATE INDEX jobs_batch ON jobs (batch_id, id) WHERE batch_id IS NOT NULL;

-- Notifications of more than one job's end: a batch that finished
-- (`batch_completed`, to its owner, with the counts in `details`), and a
-- webhook endpoint disabled after failing (`webhook_disabled`, to the
-- tenant's admins, with its URL and why in `details`). Both are in the feed
-- and the unread count like `job_completed`; neither is emailed.
ALTER TABLE notifications
    DROP CONSTRAINT notifications_kind_check,
    ADD CONSTRAINT notifications_kind_check
        CHECK (kind IN ('job_completed', 'job_cancelled', 'batch_completed', 'webhook_disabled')),
    ALTER COLUMN job_id DROP NOT NULL,
    ALTER COLUMN job_type DROP NOT NULL,
    ALTER COLUMN job_status DROP NOT NULL,
    ADD COLUMN batch_id uuid REFERENCES batches (id),
    -- No foreign key: the notice outlives an endpoint its admin then removes.
    ADD COLUMN webhook_endpoint_id uuid,
    ADD COLUMN details jsonb,
    ADD CONSTRAINT notifications_subject CHECK (CASE kind
        WHEN 'batch_completed' THEN batch_id IS NOT NULL AND job_type IS NOT NULL AND details IS NOT NULL
        WHEN 'webhook_disabled' THEN webhook_endpoint_id IS NOT NULL AND details IS NOT NULL
        ELSE job_id IS NOT NULL AND job_type IS NOT NULL AND job_status IS NOT NULL END);

-- Exactly one notification per batch, whoever ends its last child and however often.
CREATE UNIQUE INDEX notifications_once_per_batch ON notifications (batch_id) WHERE kind = 'batch_completed';

-- Counts the children a statement ended (or, for an operator's retry, took
-- back out of an end state) on their batches, and notifies each batch's
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
        RETURNING b.id, b.tenant_id, b.user_id, b.job_type, b.total, b.completed, b.failed, b.cancelled, b.finished_at
    ), notified AS (
        INSERT INTO notifications (tenant_id, user_id, kind, batch_id, job_type, details)
        SELECT tenant_id, user_id, 'batch_completed', id, job_type,
               jsonb_build_object('total', total, 'completed', completed, 'failed', failed, 'cancelled', cancelled)
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
