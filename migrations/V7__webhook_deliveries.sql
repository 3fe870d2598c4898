-- Webhook deliveries (issue 21): one row per endpoint and job end, written
-- in the statement that ends the job (as its notification and email are),
-- then sent by the WebhookSender and its answer recorded at once.
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
    job_id          uuid NOT NULL REFERENCES jobs (id),
    run             integer NOT NULL,
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
    -- One delivery per endpoint, job and run.
    CONSTRAINT webhook_delivery_once UNIQUE (endpoint_id, job_id, run)
);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state IN ('pending', 'sending');
CREATE INDEX webhook_deliveries_job ON webhook_deliveries (job_id);
-- An endpoint's delivery log, newest first.
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id DESC);

-- Queues a delivery of each job end in (`tenants`, `jobs`, `runs`,
-- `states`) to each enabled endpoint of its tenant that asked for that
-- event (`job.completed`, `job.failed`, `job.cancelled`). Called by every
-- statement that ends jobs, once for all the jobs it ended: the one place
-- where a job end becomes webhook deliveries.
CREATE FUNCTION errand_queue_webhooks(tenants text[], jobs uuid[], runs integer[], states text[])
RETURNS bigint
LANGUAGE sql VOLATILE
AS $$
    WITH queued AS (
        INSERT INTO webhook_deliveries (endpoint_id, tenant_id, job_id, run, event)
        SELECT e.id, j.tenant_id, j.job_id, j.run, 'job.' || j.state
        FROM unnest(tenants, jobs, runs, states) AS j (tenant_id, job_id, run, state)
        JOIN webhook_endpoints e
          ON e.tenant_id = j.tenant_id AND e.disabled_at IS NULL AND ('job.' || j.state) = ANY (e.events)
        ON CONFLICT DO NOTHING
        RETURNING 1
    )
    SELECT count(*) FROM queued
$$;
