//! Digests: at each person's digest time (`notification_settings.digest_*`),
//! one email of what their held emails tell (`email_outbox` state `held`:
//! the ends of jobs in categories they read as a digest) that is still
//! unread and still downloadable. Fired by the Scheduler beside schedules,
//! the same way: one pass takes due people with `FOR UPDATE SKIP LOCKED`
//! (processes share the work without waiting on one another), works out in
//! `domain` when each digest comes next, then writes the digests and moves
//! everyone on in one transaction: a process that dies mid-pass leaves the
//! rows as they were. A digest is an outbox email keyed by (person,
//! occurrence), so even a pass run twice over one occurrence writes one;
//! the Mailer sends it as any email.

use chrono::{DateTime, NaiveTime, TimeDelta, Utc};
use deadpool_postgres::Pool;

use crate::domain::DigestEvery;
use crate::store::StoreError;

/// People whose digest is due as of `$1`, oldest first, `$2` at most.
const TAKE_DUE: &str = "
SELECT tenant_id, user_id, timezone, digest_every, digest_at, digest_next_at FROM notification_settings
WHERE digest_next_at <= $1
ORDER BY digest_next_at
LIMIT $2
FOR UPDATE SKIP LOCKED";

/// For each person `($1[i], $2[i])` whose digest `$3[i]` is due: one email
/// listing their held emails whose notification is unread (or who has no
/// feed entry for it: in-app off) and whose file, if the job left one, is
/// still there, to the address their latest token gave (else the job's);
/// each such held email `digested` into it, the rest `dropped`; and the
/// person's next digest at `$4[i]`. The digest waits out their quiet hours.
const WRITE: &str = "
WITH due AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[])
        AS d (tenant_id, user_id, digest_at, next_at)
), moved AS (
    UPDATE notification_settings s SET digest_next_at = d.next_at
    FROM due d WHERE s.tenant_id = d.tenant_id AND s.user_id = d.user_id
), held AS (
    SELECT o.id, o.tenant_id, o.user_id, o.recipient,
           coalesce(n.read_at IS NULL AND n.archived_at IS NULL, true)
           AND NOT coalesce((j.result->>'expired')::boolean, false)
           AND (j.result_expires_at IS NULL OR j.result_expires_at > now()) AS wanted
    FROM due d
    JOIN email_outbox o ON o.tenant_id = d.tenant_id AND o.user_id = d.user_id AND o.state = 'held'
    JOIN jobs j ON j.id = o.job_id
    LEFT JOIN notifications n ON n.job_id = o.job_id AND n.run = o.run AND n.kind = 'job_completed'
    FOR UPDATE OF o
), digests AS (
    INSERT INTO email_outbox (tenant_id, user_id, recipient, digest_at, next_attempt_at)
    SELECT d.tenant_id, d.user_id, coalesce(p.email, h.recipient), d.digest_at,
           errand_quiet_until(d.tenant_id, d.user_id, now())
    FROM due d
    CROSS JOIN LATERAL (SELECT recipient FROM held h
                        WHERE h.tenant_id = d.tenant_id AND h.user_id = d.user_id AND h.wanted
                        ORDER BY h.id DESC LIMIT 1) h
    LEFT JOIN people p ON p.tenant_id = d.tenant_id AND p.user_id = d.user_id
    ON CONFLICT (tenant_id, user_id, digest_at) WHERE digest_at IS NOT NULL DO NOTHING
    RETURNING id, tenant_id, user_id
), told AS (
    -- (`state = 'held'` again: an email released meanwhile, its person's
    -- digest turned off, goes on its own and is not listed.)
    UPDATE email_outbox o
    SET state = CASE WHEN h.wanted THEN 'digested' ELSE 'dropped' END::email_state,
        digest_id = CASE WHEN h.wanted THEN g.id END
    FROM held h LEFT JOIN digests g ON g.tenant_id = h.tenant_id AND g.user_id = h.user_id
    WHERE o.id = h.id AND o.state = 'held' AND (g.id IS NOT NULL OR NOT h.wanted)
)
SELECT count(*) AS digests FROM digests";

/// What one pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DigestsFired {
    /// People whose digest was due.
    pub people: usize,
    /// Digest emails written (a person with nothing to tell gets none).
    pub emails: usize,
}

/// The digests, from the Scheduler's side.
pub struct Digests<'a> {
    pub(in crate::store) pool: &'a Pool,
}

impl Digests<'_> {
    /// Writes the digests due as of `now`, up to `batch` people's.
    pub async fn fire_due(&self, now: DateTime<Utc>, batch: i64) -> Result<DigestsFired, StoreError> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let due = tx.query(&tx.prepare_cached(TAKE_DUE).await?, &[&now, &batch]).await?;
        if due.is_empty() {
            return Ok(DigestsFired::default());
        }
        let n = due.len();
        let (mut tenants, mut users) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut occurrences, mut next) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for row in &due {
            let (timezone, every): (&str, &str) = (row.try_get("timezone")?, row.try_get("digest_every")?);
            let every = match (every, row.try_get::<_, Option<NaiveTime>>("digest_at")?) {
                ("day", Some(at)) => DigestEvery::Day(at),
                _ => DigestEvery::Hour,
            };
            // A zone the API accepted is one chrono-tz knows; should its
            // database ever drop one, the person gets a digest an hour on.
            next.push(every.next_after(now, timezone).unwrap_or(now + TimeDelta::hours(1)));
            tenants.push(row.try_get::<_, String>("tenant_id")?);
            users.push(row.try_get::<_, String>("user_id")?);
            occurrences.push(row.try_get::<_, DateTime<Utc>>("digest_next_at")?);
        }
        let written = tx.query_one(&tx.prepare_cached(WRITE).await?, &[&tenants, &users, &occurrences, &next]).await?;
        let emails: i64 = written.try_get("digests")?;
        tx.commit().await?;
        Ok(DigestsFired { people: n, emails: usize::try_from(emails).unwrap_or_default() })
    }
}
