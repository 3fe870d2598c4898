//! The operators' pauses (`job_pauses`): a job type everywhere, a tenant, or
//! a type in one tenant stops being claimed while its pause holds, in every
//! process at once, since every claim reads the rows (`errand_tenant_next`
//! in `migrations/V1__baseline.sql`). Pausing and resuming are audited in
//! their own transaction, as every operator action is. A type's breaker
//! (`job_breakers`) pauses it the same way, and its resume resets the count.

use chrono::{DateTime, Utc};
use deadpool_postgres::{Pool, Transaction};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::domain::{Operator, TenantId};
use crate::store::{StoreError, WORK_CHANNEL};

/// Pauses that no longer hold; deleted by every change of pauses.
const FORGET_ENDED: &str = "DELETE FROM job_pauses WHERE until <= now()";

/// Pauses scope (`$1` tenant, `$2` type; NULL: all) for `$3`, until `$4`,
/// by `$5`; a scope paused already takes the new reason and end. Answers
/// the pause, and whether it is new.
const PAUSE: &str = "
INSERT INTO job_pauses AS p (tenant_id, job_type, reason, until, paused_by)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (coalesce(tenant_id, ''), coalesce(job_type, ''))
DO UPDATE SET reason = EXCLUDED.reason, until = EXCLUDED.until, paused_by = EXCLUDED.paused_by, paused_at = now()
RETURNING id, tenant_id, job_type, reason, until, paused_by, paused_at, (xmax = 0) AS created";

/// Ends pause `$1`; answers it as it was.
const RESUME: &str = "
DELETE FROM job_pauses WHERE id = $1
RETURNING id, tenant_id, job_type, reason, until, paused_by, paused_at, false AS created";

const LIST: &str = "
SELECT id, tenant_id, job_type, reason, until, paused_by, paused_at, false AS created
FROM job_pauses_now
ORDER BY paused_at, id";

/// A type's breaker counts again from nought (its pause, the breaker's or an
/// operator's, was resumed).
const RESET_BREAKER: &str = "UPDATE job_breakers SET failures = 0 WHERE job_type = $1";

const AUDIT: &str = "
INSERT INTO operator_actions (operator, action, filter, affected) VALUES ($1, $2, $3, 1)";

/// What an operator pauses.
#[derive(Debug, Clone)]
pub struct NewPause {
    /// `None`: every tenant (then `job_type` names one).
    pub tenant: Option<TenantId>,
    /// `None`: every type (then `tenant` names one).
    pub job_type: Option<String>,
    /// Why, as operators and the audit trail read it.
    pub reason: String,
    /// When it ends by itself (`None`: when an operator resumes it).
    pub until: Option<DateTime<Utc>>,
}

/// A pause as it holds.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Pause {
    pub id: Uuid,
    /// `null`: every tenant.
    pub tenant: Option<String>,
    /// `null`: every job type.
    #[serde(rename = "type")]
    pub job_type: Option<String>,
    pub reason: String,
    /// `null`: until an operator resumes it.
    pub until: Option<DateTime<Utc>>,
    pub paused_by: String,
    pub paused_at: DateTime<Utc>,
}

/// What pausing a scope did.
#[derive(Debug)]
pub enum Paused {
    /// The scope was not paused: now it is.
    Created(Pause),
    /// The scope was paused already: its pause took the new reason and end.
    Updated(Pause),
}

fn pause_from_row(row: &Row) -> Result<Pause, StoreError> {
    Ok(Pause {
        id: row.try_get("id")?,
        tenant: row.try_get("tenant_id")?,
        job_type: row.try_get("job_type")?,
        reason: row.try_get("reason")?,
        until: row.try_get("until")?,
        paused_by: row.try_get("paused_by")?,
        paused_at: row.try_get("paused_at")?,
    })
}

/// The operators' door to pauses.
pub struct OperatorPauses<'a> {
    pub(in crate::store) pool: &'a Pool,
    pub(in crate::store) operator: &'a Operator,
}

impl OperatorPauses<'_> {
    /// The pauses that hold now, oldest first.
    pub async fn list(&self) -> Result<Vec<Pause>, StoreError> {
        let client = self.pool.get().await?;
        let rows = client.query(&client.prepare_cached(LIST).await?, &[]).await?;
        rows.iter().map(pause_from_row).collect()
    }

    /// Pauses `pause`'s scope, audited: no claim begun after its commit takes a
    /// waiting job of it.
    pub async fn pause(&self, pause: &NewPause) -> Result<Paused, StoreError> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        tx.execute(&tx.prepare_cached(FORGET_ENDED).await?, &[]).await?;
        let tenant = pause.tenant.as_ref().map(TenantId::as_str);
        let row = tx
            .query_one(
                &tx.prepare_cached(PAUSE).await?,
                &[&tenant, &pause.job_type, &pause.reason, &pause.until, &self.operator.name.as_str()],
            )
            .await?;
        let paused = pause_from_row(&row)?;
        self.audit(&tx, "pause", &paused).await?;
        tx.commit().await?;
        Ok(if row.try_get("created")? { Paused::Created(paused) } else { Paused::Updated(paused) })
    }

    /// Ends pause `id`, audited, and wakes the claims waiting for work: its
    /// scope's waiting jobs start at once. `None`: no such pause.
    pub async fn resume(&self, id: Uuid) -> Result<Option<Pause>, StoreError> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let Some(row) = tx.query_opt(&tx.prepare_cached(RESUME).await?, &[&id]).await? else {
            return Ok(None);
        };
        let resumed = pause_from_row(&row)?;
        if let (None, Some(job_type)) = (&resumed.tenant, &resumed.job_type) {
            tx.execute(&tx.prepare_cached(RESET_BREAKER).await?, &[job_type]).await?;
        }
        self.audit(&tx, "resume", &resumed).await?;
        tx.execute(&tx.prepare_cached(FORGET_ENDED).await?, &[]).await?;
        // Sent at commit, so a woken claim sees the pause gone.
        tx.batch_execute(&format!("NOTIFY {WORK_CHANNEL}")).await?;
        tx.commit().await?;
        Ok(Some(resumed))
    }

    async fn audit(&self, tx: &Transaction<'_>, action: &str, pause: &Pause) -> Result<(), StoreError> {
        let filter = serde_json::json!({
            "pause": pause.id,
            "tenant": pause.tenant,
            "type": pause.job_type,
            "reason": pause.reason,
            "until": pause.until,
        });
        tx.execute(&tx.prepare_cached(AUDIT).await?, &[&self.operator.name.as_str(), &action, &filter]).await?;
        Ok(())
    }
}
