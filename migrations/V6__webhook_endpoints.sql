-- Webhook endpoints (issue 21): a tenant's admins register URLs that hear
-- when the tenant's jobs end, signed as Standard Webhooks specifies. Each
-- endpoint's secret (`whsec_…`, shown once when it is made) signs its
-- deliveries, so it is kept; nothing else reads it.
CREATE TABLE webhook_endpoints (
    id              uuid PRIMARY KEY DEFAULT errand_uuid_v7(),
    tenant_id       text NOT NULL,
    url             text NOT NULL,
    events          text[] NOT NULL
        CONSTRAINT webhook_events_known
        CHECK (cardinality(events) > 0 AND events <@ ARRAY['job.completed', 'job.failed', 'job.cancelled']),
    secret          text NOT NULL,
    -- The admin who registered it.
    created_by      text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    -- Set when deliveries kept failing; a disabled endpoint gets nothing.
    disabled_at     timestamptz,
    disabled_reason text
);

CREATE INDEX webhook_endpoints_tenant ON webhook_endpoints (tenant_id, id);
