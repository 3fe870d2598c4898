//! The email outbox, from the Mailer's side: claim due emails, record each
//! SMTP answer at once. Rows are written only by the statements that end jobs.
//! Every record is fenced on (state `sending`, this attempt), so a sender whose
//! lock expired and whose email was re-claimed records nothing.

use std::time::Duration;

use chrono::{DateTime, Utc};

use deadpool_postgres::Pool;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::domain::{BatchCounts, BatchId, Branding, JobId, JobState, JobTrace, Locale, ScheduleId, TenantId, UserId};
use crate::store::StoreError;
use crate::store::notifications::branding::branding_from_row;
use crate::store::queue::lost_claims::LostClaim;

/// An email to send now, with what it tells of its job, its batch or the
/// jobs of a digest.
#[derive(Debug, Clone)]
pub struct OutboxEmail {
    pub id: Uuid,
    pub tenant: TenantId,
    pub user: UserId,
    pub recipient: String,
    /// This delivery attempt, 1-based.
    pub attempt: i32,
    pub about: EmailAbout,
    /// How the tenant presents itself (as its admins set it when the email was claimed).
    pub branding: Branding,
    /// The language it is written in: its job's or batch's (a digest's:
    /// its latest job's).
    pub locale: Locale,
    /// The recipient's time zone (`/me/notification-settings`; UTC until
    /// they set one), for the dates it gives.
    pub zone: chrono_tz::Tz,
}

/// What an email tells of.
#[derive(Debug, Clone)]
pub enum EmailAbout {
    Job(JobEmail),
    /// A batch whose last child ended: how its children ended.
    Batch {
        batch: BatchId,
        /// Its children's type.
        job_type: String,
        counts: BatchCounts,
    },
    /// A person's digest: the ends it lists, oldest first (none when what
    /// it listed was pruned before it went).
    Digest {
        items: Vec<DigestItem>,
    },
}

/// A job's end, as a digest lists it.
#[derive(Debug, Clone)]
pub struct DigestItem {
    pub job: JobId,
    pub job_type: String,
    pub job_status: JobState,
    pub error_message: Option<String>,
    /// The job's result (its file's record, for exports).
    pub result: Option<serde_json::Value>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// A job's end, as its email tells it.
#[derive(Debug, Clone)]
pub struct JobEmail {
    pub job: JobId,
    pub job_type: String,
    /// Which run of the job ended (2 and up after operators' retries).
    pub run: i32,
    pub job_status: JobState,
    pub error_message: Option<String>,
    pub params: serde_json::Value,
    /// The job's result (a file's size, rows and expiry, for exports).
    pub result: Option<serde_json::Value>,
    pub finished_at: Option<DateTime<Utc>>,
    /// The schedule that made the job, while it exists: its id, expression and zone.
    pub schedule: Option<(ScheduleId, String, String)>,
    /// The trace of the request that recorded the job, and the attempts the
    /// job took (`telemetry::traces::join_job_trace`).
    pub trace: Option<JobTrace>,
    pub job_attempts: i32,
}

/// Claims due emails (locked by their state and lock time, so a crash
/// mid-send makes them due again), with their job's params and result, or
/// their batch's counts. (The job or batch row outlives its email: both are
/// pruned together, the job or batch last.) The claim's id is $3 (see
/// `lost_claims.rs`).
const CLAIM_DUE: &str = "
WITH due AS (
    SELECT id FROM email_outbox
    WHERE state IN ('pending', 'sending') AND next_attempt_at <= now()
    ORDER BY next_attempt_at LIMIT $1
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE email_outbox o
    SET state = 'sending', attempts = o.attempts + 1, next_attempt_at = now() + $2 * interval '1 millisecond',
        claim_id = $3
    FROM due
    WHERE o.id = due.id
    RETURNING o.id, o.job_id, o.batch_id, o.digest_at, o.tenant_id, o.user_id, o.run, o.recipient, o.job_type,
              o.job_status, o.error_message, o.attempts
)
SELECT c.id, c.job_id, c.batch_id, c.digest_at, c.tenant_id, c.user_id, c.run, c.recipient, c.job_type, c.job_status,
       c.error_message, c.attempts, j.params, j.result, j.finished_at, s.id AS schedule_id, s.cron, s.timezone,
       j.traceparent, errand_trace_linked(j.run, j.scheduled_for) AS trace_linked, j.attempt AS job_attempts,
       b.total, b.completed, b.failed, b.cancelled,
       tb.name AS brand_name, tb.logo_url AS brand_logo_url, tb.primary_color AS brand_primary_color,
       tb.from_name AS brand_from_name, tb.footer AS brand_footer,
       coalesce(j.locale, b.locale) AS locale, ns.timezone AS zone
FROM claimed c LEFT JOIN jobs j ON j.id = c.job_id
LEFT JOIN batches b ON b.id = c.batch_id
LEFT JOIN tenant_branding tb ON tb.tenant_id = c.tenant_id
LEFT JOIN notification_settings ns ON ns.tenant_id = c.tenant_id AND ns.user_id = c.user_id
LEFT JOIN schedules s ON s.id = j.schedule_id";

/// What the digests `$1` list, oldest first in each. (A job's result file
/// record is in clear beside any sealed member: nothing here needs opening.)
const DIGEST_ITEMS: &str = "
SELECT o.digest_id, o.job_id, o.job_type, o.job_status, o.error_message, j.result, j.finished_at, j.locale
FROM email_outbox o JOIN jobs j ON j.id = o.job_id
WHERE o.digest_id = ANY($1)
ORDER BY o.digest_id, o.id";

/// Ends email $1's send number $2, if still this sender's: the server
/// accepted it, answering $3.
const RECORD_SENT: &str = "
UPDATE email_outbox
SET state = 'sent', sent_at = now(), smtp_response = $3, last_error = NULL, next_attempt_at = now()
WHERE id = $1 AND state = 'sending' AND attempts = $2";

/// As [`RECORD_SENT`], for a transient failure $3: due again in $4 ms.
const RECORD_RETRY: &str = "
UPDATE email_outbox
SET state = 'pending', last_error = $3, next_attempt_at = now() + $4::float8 * interval '1 millisecond'
WHERE id = $1 AND state = 'sending' AND attempts = $2";

/// As [`RECORD_SENT`], for a failure $3 that ends the email.
const RECORD_FAILED: &str = "
UPDATE email_outbox
SET state = 'failed', last_error = $3, next_attempt_at = now()
WHERE id = $1 AND state = 'sending' AND attempts = $2";

/// The outbox.
pub struct Outbox<'a> {
    pool: &'a Pool,
    /// What opens the sealed params and results of the jobs the emails tell of.
    sealer: &'a crate::store::Sealer,
}

impl<'a> Outbox<'a> {
    pub(in crate::store) fn new(pool: &'a Pool, sealer: &'a crate::store::Sealer) -> Self {
        Self { pool, sealer }
    }

    /// Claims up to `limit` due emails for `lock`: if this process dies while
    /// sending, the email becomes due again when the lock runs out. If the
    /// connection breaks before the answer, what the claim took, if it
    /// committed, is given back (see `lost_claims.rs`).
    pub async fn claim_due(&self, limit: i64, lock: Duration) -> Result<Vec<OutboxEmail>, StoreError> {
        let client = self.pool.get().await?;
        let statement = client.prepare_cached(CLAIM_DUE).await?;
        let claim = Uuid::new_v4();
        let rows = client.query(&statement, &[&limit, &(lock.as_secs_f64() * 1000.0), &claim]).await;
        let rows = LostClaim::Emails { claim, lock }.settle(self.pool, rows)?;
        let mut emails = rows.iter().map(email_from_row).collect::<Result<Vec<_>, _>>()?;
        self.list_digests(&mut emails).await?;
        for email in &mut emails {
            use crate::domain::sealing::Purpose;
            let EmailAbout::Job(job) = &mut email.about else { continue };
            self.sealer.open_for_view(email.tenant.as_str(), &mut job.params, Purpose::Params).await?;
            if let Some(result) = &mut job.result {
                self.sealer.open_for_view(email.tenant.as_str(), result, Purpose::Result).await?;
            }
        }
        Ok(emails)
    }

    /// Fills in what each digest among `emails` lists.
    async fn list_digests(&self, emails: &mut [OutboxEmail]) -> Result<(), StoreError> {
        let digests: Vec<Uuid> =
            emails.iter().filter(|e| matches!(e.about, EmailAbout::Digest { .. })).map(|e| e.id).collect();
        if digests.is_empty() {
            return Ok(());
        }
        let client = self.pool.get().await?;
        let rows = client.query(&client.prepare_cached(DIGEST_ITEMS).await?, &[&digests]).await?;
        for row in &rows {
            let digest: Uuid = row.try_get("digest_id")?;
            let Some((items, locale)) = emails.iter_mut().find(|e| e.id == digest).and_then(|e| match &mut e.about {
                EmailAbout::Digest { items } => Some((items, &mut e.locale)),
                _ => None,
            }) else {
                continue;
            };
            let status: String = row.try_get("job_status")?;
            // Oldest first: the digest speaks the language of its latest job.
            *locale = locale_from(row.try_get("locale")?);
            items.push(DigestItem {
                job: JobId(row.try_get("job_id")?),
                job_type: row.try_get("job_type")?,
                job_status: status.parse::<JobState>()?,
                error_message: row.try_get("error_message")?,
                result: row.try_get("result")?,
                finished_at: row.try_get("finished_at")?,
            });
        }
        Ok(())
    }

    /// The server accepted the email: it is sent, with the server's answer.
    pub async fn record_sent(&self, email: &OutboxEmail, response: &str) -> Result<bool, StoreError> {
        self.record(RECORD_SENT, &[&email.id, &email.attempt, &response]).await
    }

    /// A transient failure: try again after `delay`.
    pub async fn record_retry(&self, email: &OutboxEmail, error: &str, delay: Duration) -> Result<bool, StoreError> {
        let delay_ms = delay.as_secs_f64() * 1000.0;
        self.record(RECORD_RETRY, &[&email.id, &email.attempt, &error, &delay_ms]).await
    }

    /// A failure that will never succeed (address rejected), or the last attempt failed.
    pub async fn record_failed(&self, email: &OutboxEmail, error: &str) -> Result<bool, StoreError> {
        self.record(RECORD_FAILED, &[&email.id, &email.attempt, &error]).await
    }

    /// Runs one of the `RECORD_*` statements; `false` if the send was no
    /// longer this sender's (its lock ran out and another took it).
    async fn record(&self, statement: &str, params: &[&(dyn ToSql + Sync)]) -> Result<bool, StoreError> {
        let client = self.pool.get().await?;
        let statement = client.prepare_cached(statement).await?;
        Ok(client.execute(&statement, params).await? == 1)
    }
}

fn email_from_row(row: &Row) -> Result<OutboxEmail, StoreError> {
    let digest = row.try_get::<_, Option<DateTime<Utc>>>("digest_at")?.is_some();
    let about = match row.try_get::<_, Option<Uuid>>("batch_id")? {
        _ if digest => EmailAbout::Digest { items: Vec::new() },
        Some(batch) => {
            let count = |name: &str| -> Result<u32, StoreError> {
                let n: i32 = row.try_get(name)?;
                u32::try_from(n).map_err(|_| StoreError::Corrupt(format!("a batch's {name} count is {n}")))
            };
            let counts = BatchCounts {
                total: count("total")?,
                completed: count("completed")?,
                failed: count("failed")?,
                cancelled: count("cancelled")?,
            };
            EmailAbout::Batch { batch: BatchId(batch), job_type: row.try_get("job_type")?, counts }
        }
        None => EmailAbout::Job(job_email_from_row(row)?),
    };
    Ok(OutboxEmail {
        id: row.try_get("id")?,
        tenant: TenantId::parse(row.try_get::<_, String>("tenant_id")?)?,
        user: UserId::parse(row.try_get::<_, String>("user_id")?)?,
        recipient: row.try_get("recipient")?,
        attempt: row.try_get("attempts")?,
        about,
        branding: branding_from_row(row)?,
        locale: locale_from(row.try_get("locale")?),
        // Zones are checked when set; one a newer tz database dropped reads as UTC.
        zone: row.try_get::<_, Option<String>>("zone")?.and_then(|zone| zone.parse().ok()).unwrap_or(chrono_tz::UTC),
    })
}

/// A recorded locale (English for none, or for a catalogue no longer shipped).
fn locale_from(tag: Option<String>) -> Locale {
    tag.as_deref().and_then(Locale::parse).unwrap_or(Locale::ENGLISH)
}

fn job_email_from_row(row: &Row) -> Result<JobEmail, StoreError> {
    let status: String = row.try_get("job_status")?;
    let job: Option<Uuid> = row.try_get("job_id")?;
    Ok(JobEmail {
        job: JobId(job.ok_or_else(|| StoreError::Corrupt("an email of neither a job, a batch nor a digest".into()))?),
        job_type: row.try_get("job_type")?,
        run: row.try_get("run")?,
        job_status: status.parse::<JobState>()?,
        error_message: row.try_get("error_message")?,
        params: row.try_get::<_, Option<serde_json::Value>>("params")?.unwrap_or_default(),
        result: row.try_get("result")?,
        finished_at: row.try_get("finished_at")?,
        schedule: match row.try_get::<_, Option<Uuid>>("schedule_id")? {
            Some(id) => Some((ScheduleId(id), row.try_get("cron")?, row.try_get("timezone")?)),
            None => None,
        },
        trace: crate::store::jobs::job_trace_from_row(row)?,
        job_attempts: row.try_get("job_attempts")?,
    })
}
