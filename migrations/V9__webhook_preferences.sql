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
-- category its tenant turned off for webhooks queues no delivery. A NULL
-- category (a required one, see `errand_webhook_category`; or every one in
-- the four-argument form, which processes of the previous version call
-- during an upgrade) is delivered, as before.
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

-- The category of a job type's ends as the webhook channel's choices see it
-- under `rules` (as `errand_channels` takes them): NULL for a required
-- category, which no tenant's choice turns off (a category made required
-- after a tenant turned it off is delivered again). The statements that end
-- jobs hand it to `errand_queue_webhooks`; the API reads the same rule.
CREATE FUNCTION errand_webhook_category(job_type text, rules jsonb) RETURNS text
LANGUAGE sql IMMUTABLE
RETURN CASE WHEN coalesce(rules->'required' ? errand_category(job_type, rules), false) THEN NULL
            ELSE errand_category(job_type, rules) END;

CREATE OR REPLACE FUNCTION errand_queue_webhooks(tenants text[], jobs uuid[], runs integer[], states text[])
RETURNS bigint
LANGUAGE sql VOLATILE
RETURN errand_queue_webhooks(tenants, jobs, runs, states, NULL::text[]);
