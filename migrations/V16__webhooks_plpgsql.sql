-- The webhook deliveries of a batch of ends (`errand_queue_webhooks`, V9),
-- cheaper in the statement that ends every batch of attempts (issue 18):
-- as a SQL function its INSERT was planned again at each call, a tenth of
-- that statement's time even when no tenant had an endpoint; in PL/pgSQL a
-- connection plans it once. And a batch none of whose tenants has an
-- enabled endpoint, the common case, is answered by an index probe per
-- tenant before anything else.
CREATE OR REPLACE FUNCTION errand_queue_webhooks(tenants text[], jobs uuid[], runs integer[], states text[], categories text[])
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
