-- The WebhookSender's claim (issue 21), as a function so that it can be
-- planned the one way that stays cheap: an index scan of the due deliveries
-- in due order. Deliveries are written by bursts of job ends into a table
-- that may have been analyzed nearly empty; planned on such statistics, the
-- claim read every due delivery through bitmap scans and sorted them (54 ms
-- per claim at 20,000 due, against 0.7 ms by the index; measured), and it
-- stayed so until autovacuum analyzed the table, a minute or more later. A
-- queue's claim has one good plan, so the function asks for it (SET below)
-- rather than hoping the statistics keep up.
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
