-- The webhook channel's preferences (issue 21): per tenant and category of
-- job, whether the tenant's endpoints hear of its jobs' ends. A tenant's
-- admins choose (`PUT /webhooks/preferences/{category}`); on until they
-- do, and a required category cannot be turned off, as for people's
-- channels. Only choices made are stored.
CREATE TABLE webhook_preferences (
    tenant_id  text NOT NULL,
    category   text NOT NULL,
    webhook    boolean NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, category)
);

-- `errand_queue_webhooks` (V7) with each job's category: a job end whose
-- category its tenant turned off for webhooks queues no delivery. NULL
-- categories (the four-argument form, which processes of the previous
-- version call during an upgrade) deliver every end, as before.
CREATE FUNCTION errand_queue_webhooks(tenants text[], jobs uuid[], runs integer[], states text[], categories text[])
RETURNS bigint
LANGUAGE sql VOLATILE
AS $$
    WITH queued AS (
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
    SELECT count(*) FROM queued
$$;

CREATE OR REPLACE FUNCTION errand_queue_webhooks(tenants text[], jobs uuid[], runs integer[], states text[])
RETURNS bigint
LANGUAGE sql VOLATILE
RETURN errand_queue_webhooks(tenants, jobs, runs, states, NULL::text[]);
