//! One job's history, for the operators' job detail: each attempt (who
//! claimed it, when, under which lease, how it ended), the notifications,
//! emails and webhook deliveries its ends made, with their outbox states.
//! Read in one statement from rows that the statements ending attempts
//! write anyway (see `job_attempt_errors` in `migrations/V1__baseline.sql`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_postgres::types::Json;
use uuid::Uuid;

use crate::domain::{JobId, LogLine, TraceParent};
use crate::store::StoreError;
use crate::store::operator::OperatorJobs;

/// How an attempt ended, or that it is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptOutcome {
    Running,
    /// It failed (the job then retried, failed or was rescued: see the error).
    Failed,
    Completed,
    Cancelled,
}

/// One attempt of one run of a job.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Attempt {
    pub run: i32,
    pub attempt: i32,
    pub outcome: AttemptOutcome,
    /// When it was claimed (unknown for attempts recorded before errand kept it).
    pub started_at: Option<DateTime<Utc>>,
    pub ended_at: Option<DateTime<Utc>>,
    pub lease_id: Option<Uuid>,
    /// Who held the lease: an errand process's dispatcher, or an external worker.
    pub lease_owner: Option<Uuid>,
    /// Running only: until when the lease holds, as the last heartbeat extended it.
    pub lease_expires_at: Option<DateTime<Utc>>,
    pub error: Option<String>,
    /// Running only: as the handler last reported it.
    pub progress: Option<Value>,
    /// Where it resumed from: the progress its checkpoint had recorded
    /// (absent for an attempt that began at the start).
    #[serde(default)]
    pub resumed_from: Option<i64>,
    /// What its handler logged, oldest first (`job_attempt_logs`).
    #[serde(default)]
    pub logs: Vec<LogLine>,
    /// It logged more than an attempt keeps: the lines after the cap were dropped.
    #[serde(default)]
    pub log_truncated: bool,
}

/// An in-app notification a run's end made.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SentNotification {
    pub id: Uuid,
    pub run: i32,
    pub kind: String,
    pub job_status: String,
    pub created_at: DateTime<Utc>,
    pub read_at: Option<DateTime<Utc>>,
}

/// An email a run's end queued, and where the outbox has it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SentEmail {
    pub id: Uuid,
    pub run: i32,
    pub recipient: String,
    pub state: String,
    pub attempts: i32,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
}

/// A Web Push message a run's end queued for one device, and where the outbox has it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SentPush {
    /// The device (absent once it was unsubscribed).
    pub subscription_id: Option<Uuid>,
    /// The push service's host.
    pub service: Option<String>,
    pub run: i32,
    pub state: String,
    pub attempts: i32,
    /// The push service's status code at the last attempt (absent: no answer).
    pub response_status: Option<i32>,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
}

/// A webhook delivery a run's end queued, and where the outbox has it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SentWebhook {
    pub id: Uuid,
    pub endpoint_id: Uuid,
    pub run: i32,
    pub event: String,
    pub state: String,
    pub attempts: i32,
    pub last_status: Option<i32>,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub delivered_at: Option<DateTime<Utc>>,
}

/// What became of a job, attempt by attempt, oldest first.
#[derive(Debug, Clone, Serialize)]
pub struct JobTimeline {
    pub attempts: Vec<Attempt>,
    pub notifications: Vec<SentNotification>,
    pub emails: Vec<SentEmail>,
    pub pushes: Vec<SentPush>,
    pub webhooks: Vec<SentWebhook>,
    /// The trace of the request that recorded the job (shown as a link).
    #[serde(skip)]
    pub trace: Option<TraceParent>,
}

/// The job `$1`'s attempts: failed ones from `job_attempt_errors`, the
/// running one from its queue row, the one that ended the job otherwise from
/// `jobs` (a failed end already left its row in the first).
const TIMELINE: &str = "
SELECT
    (SELECT coalesce(jsonb_agg(to_jsonb(a) ORDER BY a.run, a.attempt), '[]')
     FROM (SELECT run, attempt, 'failed' AS outcome, started_at, ended_at, lease_id, lease_owner,
                  NULL::timestamptz AS lease_expires_at, error, NULL::jsonb AS progress, resumed_from
           FROM job_attempt_errors WHERE job_id = $1
           UNION ALL
           SELECT j.run, q.attempt, 'running', q.started_at, NULL, q.lease_id, q.lease_owner,
                  q.lease_expires_at, NULL, q.progress, q.resumed_from
           FROM job_queue q JOIN jobs j ON j.id = q.job_id
           WHERE q.job_id = $1 AND q.state = 'running'
           UNION ALL
           SELECT j.run, j.attempt, j.state::text, j.started_at, j.finished_at, j.ended_lease_id, j.ended_by,
                  NULL, NULL, NULL, j.resumed_from
           FROM jobs j
           WHERE j.id = $1 AND j.state IN ('completed', 'cancelled') AND j.started_at IS NOT NULL
             AND NOT EXISTS (SELECT 1 FROM job_attempt_errors e
                             WHERE e.job_id = j.id AND e.run = j.run AND e.attempt = j.attempt)) a)
        AS attempts,
    (SELECT coalesce(jsonb_agg(to_jsonb(n) ORDER BY n.id), '[]')
     FROM (SELECT id, run, kind, job_status, created_at, read_at FROM notifications WHERE job_id = $1) n)
        AS notifications,
    (SELECT coalesce(jsonb_agg(to_jsonb(e) ORDER BY e.id), '[]')
     FROM (SELECT id, run, recipient, state::text AS state, attempts, last_error, created_at, sent_at
           FROM email_outbox WHERE job_id = $1) e)
        AS emails,
    (SELECT coalesce(jsonb_agg(to_jsonb(p) ORDER BY p.created_at), '[]')
     FROM (SELECT s.id AS subscription_id, substring(s.endpoint FROM '^[a-z]+://([^/:?#]+)') AS service, o.run,
                  o.state::text AS state, o.attempts, o.response_status, o.last_error, o.created_at, o.sent_at
           FROM push_outbox o LEFT JOIN push_subscriptions s ON s.id = o.subscription_id
           WHERE o.job_id = $1) p)
        AS pushes,
    (SELECT coalesce(jsonb_agg(to_jsonb(w) ORDER BY w.id), '[]')
     FROM (SELECT id, endpoint_id, run, event, state::text AS state, attempts, last_status, last_error,
                  created_at, delivered_at
           FROM webhook_deliveries WHERE job_id = $1) w)
        AS webhooks,
    (SELECT traceparent FROM jobs WHERE id = $1) AS traceparent";

/// Job `$1`'s log lines, oldest first, with their attempt; an attempt's
/// truncation line last (written by the statement that kept its last lines,
/// its id may be smaller than theirs).
const LOGS: &str = "
SELECT run, attempt, at, level, message, fields, truncated FROM job_attempt_logs WHERE job_id = $1
ORDER BY run, attempt, truncated, id";

impl OperatorJobs<'_> {
    /// Any tenant's job's timeline (empty lists for a job that does not exist).
    pub async fn timeline(&self, id: JobId) -> Result<JobTimeline, StoreError> {
        let client = self.pool.get().await?;
        let row = client.query_one(&client.prepare_cached(TIMELINE).await?, &[&id.0]).await?;
        let Json(mut attempts): Json<Vec<Attempt>> = row.try_get("attempts")?;
        let Json(notifications) = row.try_get("notifications")?;
        let Json(emails) = row.try_get("emails")?;
        let Json(pushes) = row.try_get("pushes")?;
        let Json(webhooks) = row.try_get("webhooks")?;
        for line in client.query(&client.prepare_cached(LOGS).await?, &[&id.0]).await? {
            let (run, attempt): (i32, i32) = (line.try_get("run")?, line.try_get("attempt")?);
            // (The lines of an attempt the timeline does not list, one
            // rescued say, are not shown.)
            let Some(of) = attempts.iter_mut().find(|a| (a.run, a.attempt) == (run, attempt)) else { continue };
            if line.try_get("truncated")? {
                of.log_truncated = true;
            }
            let level: String = line.try_get("level")?;
            of.logs.push(LogLine {
                at: line.try_get("at")?,
                level: serde_json::from_value(Value::from(level))
                    .map_err(|e| StoreError::Corrupt(format!("a log line's level: {e}")))?,
                message: line.try_get("message")?,
                fields: line.try_get("fields")?,
            });
        }
        let trace = row.try_get::<_, Option<&str>>("traceparent")?.and_then(TraceParent::parse);
        Ok(JobTimeline { attempts, notifications, emails, pushes, webhooks, trace })
    }
}
