-- Completion emails, written in the statement that ends the job (when the
-- job's creator had an email address) and delivered by the Mailer.
--
--   pending --claim--> sending --SMTP accepted--> sent
--   sending --transient failure--> pending (next_attempt_at = backoff)
--   sending --permanent failure or out of attempts--> failed
--   sending --lock expired (process died mid-send)--> claimable again
-- A claim sets next_attempt_at to when its lock expires, so one condition
-- (state pending or sending, next_attempt_at due) finds both kinds of work.
CREATE TYPE email_state AS ENUM ('pending', 'sending', 'sent', 'failed');

CREATE TABLE email_outbox (
    id              uuid PRIMARY KEY DEFAULT errand_uuid_v7(),
    -- At most one email per job.
    job_id          uuid NOT NULL UNIQUE REFERENCES jobs (id),
    tenant_id       text NOT NULL,
    user_id         text NOT NULL,
    recipient       text NOT NULL,
    job_type        text NOT NULL,
    job_status      text NOT NULL CHECK (job_status IN ('completed', 'failed')),
    error_message   text,
    state           email_state NOT NULL DEFAULT 'pending',
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error      text,
    -- The SMTP server's answer to the accepted message, recorded at once.
    smtp_response   text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    sent_at         timestamptz,
    CONSTRAINT email_sent_iff_sent_at CHECK ((state = 'sent') = (sent_at IS NOT NULL))
);

CREATE INDEX email_outbox_due ON email_outbox (next_attempt_at) WHERE state IN ('pending', 'sending');
