//! The operators' pauses (`job_pauses`): a job type everywhere, a tenant, or
//! a type in one tenant stops being claimed while its pause holds, in every
//! process at once, since every claim reads the rows (`errand_tenant_next`
//! in `migrations/V1__baseline.sql`). Pausing and resuming are audited in
//! their own transaction, as every operator action is. A resumed scope
//! ramps (`job_ramps_now`): its pause's row stays, with `resumed_at`, until
//! the ramp is over. A type's breaker (`job_breakers`) pauses it the same
//! way, and its resume resets the count.

use std::time::Duration;

use chrono::{DateTime, Utc};
use deadpool_postgres::{Pool, Transaction};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::domain::{Operator, TenantId};
use crate::store::{StoreError, WORK_CHANNEL};

/// Pauses whose scope has ramped fully; deleted by every change of pauses.
const FORGET_ENDED: &str = "
DELETE FROM job_pauses p USING job_pause_ends e
WHERE e.id = p.id AND NOT e.holding AND e.reached IS NULL";

/// Pauses scope (`$1` tenant, `$2` type; NULL: all) for `$3`, until `$4`,
/// by `$5`, its scope ramping for `$6` seconds once it ends (NULL: the
/// default); a scope paused already takes the new reason, end and ramp, and
/// one ramping is paused anew (a new id). Answers the pause's id, and whether the scope was
/// not paused before (the statement's snapshot does not see its own row).
const PAUSE: &str = "
INSERT INTO job_pauses AS p (tenant_id, job_type, reason, until, paused_by, ramp)
VALUES ($1, $2, $3, $4, $5, make_interval(secs => $6::float8))
ON CONFLICT (coalesce(tenant_id, ''), coalesce(job_type, ''))
DO UPDATE SET reason = EXCLUDED.reason, until = EXCLUDED.until, paused_by = EXCLUDED.paused_by,
              paused_at = now(), resumed_at = NULL, ramp = EXCLUDED.ramp,
              -- A scope that was ramping has a new pause.
              id = CASE WHEN EXISTS (SELECT 1 FROM job_pauses_now n WHERE n.id = p.id) THEN p.id ELSE EXCLUDED.id END
RETURNING p.id, NOT EXISTS (SELECT 1 FROM job_pauses_now n WHERE n.id = p.id) AS created";

/// Queues the `type.paused` webhook deliveries of a new pause (of a type).
const TELL_ENDPOINTS: &str = "SELECT errand_queue_pause_webhooks($1, $2, $3, $4, $5, $6)";

/// Locks pause `$1` for a resume.
const LOCK: &str = "SELECT 1 FROM job_pauses WHERE id = $1 FOR UPDATE";

/// A pause as operators see it, from `job_pause_ends` (which says whether
/// it holds; otherwise its scope ramps).
macro_rules! select_pauses {
    ($rest:literal) => {
        concat!(
            "SELECT e.id, e.tenant_id, e.job_type, e.reason, e.until, e.paused_by, e.paused_at, e.resumed_at,
                    extract(epoch FROM e.ramp_for)::float8 AS ramp_seconds, e.ended_at + e.ramp_for AS ramp_ends_at,
                    e.holding
             FROM job_pause_ends e ",
            $rest
        )
    };
}

/// Pause `$1`.
const GET: &str = select_pauses!("WHERE e.id = $1");

/// Ends pause `$1` now, its scope then ramping for `$2` seconds (NULL: the
/// pause's own ramp).
const RESUME: &str = "
UPDATE job_pauses SET resumed_at = now(), ramp = coalesce(make_interval(secs => $2::float8), ramp) WHERE id = $1";

/// Ends pause `$1`'s ramp: its scope runs as many jobs as room allows.
const END_RAMP: &str = "DELETE FROM job_pauses WHERE id = $1";

/// The pauses that hold and those whose scope ramps, oldest first.
const LIST: &str = select_pauses!("WHERE e.holding OR e.reached IS NOT NULL ORDER BY e.paused_at, e.id");

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
    /// How long its scope ramps once it ends (`None`: the default).
    pub ramp: Option<Duration>,
}

/// Where a pause stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PauseState {
    /// No claim takes a waiting job of its scope.
    Holding,
    /// Ended: its scope's concurrency rises from 1 to its limit until `ramp_ends_at`.
    Ramping,
}

/// A pause as operators see it.
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
    pub state: PauseState,
    /// When an operator resumed it (`null`: not resumed; it may have ended at `until`).
    pub resumed_at: Option<DateTime<Utc>>,
    /// How long its scope ramps once it ends.
    pub ramp_seconds: f64,
    /// When the ramp is over (`null`: the pause holds until resumed).
    pub ramp_ends_at: Option<DateTime<Utc>>,
}

/// What pausing a scope did.
#[derive(Debug)]
pub enum Paused {
    /// The scope was not paused (it may have been ramping): now it is.
    Created(Pause),
    /// The scope was paused already: its pause took the new reason, end and ramp.
    Updated(Pause),
}

fn pause_from_row(row: &Row) -> Result<Pause, StoreError> {
    let holding: bool = row.try_get("holding")?;
    Ok(Pause {
        id: row.try_get("id")?,
        tenant: row.try_get("tenant_id")?,
        job_type: row.try_get("job_type")?,
        reason: row.try_get("reason")?,
        until: row.try_get("until")?,
        paused_by: row.try_get("paused_by")?,
        paused_at: row.try_get("paused_at")?,
        state: if holding { PauseState::Holding } else { PauseState::Ramping },
        resumed_at: row.try_get("resumed_at")?,
        ramp_seconds: row.try_get("ramp_seconds")?,
        ramp_ends_at: row.try_get("ramp_ends_at")?,
    })
}

/// The operators' door to pauses.
pub struct OperatorPauses<'a> {
    pub(in crate::store) pool: &'a Pool,
    pub(in crate::store) operator: &'a Operator,
}

impl OperatorPauses<'_> {
    /// The pauses that hold and those whose scope ramps, oldest first.
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
        let ramp = pause.ramp.map(|ramp| ramp.as_secs_f64());
        let row = tx
            .query_one(
                &tx.prepare_cached(PAUSE).await?,
                &[&tenant, &pause.job_type, &pause.reason, &pause.until, &self.operator.name.as_str(), &ramp],
            )
            .await?;
        let (id, created): (Uuid, bool) = (row.try_get("id")?, row.try_get("created")?);
        let paused = pause_from_row(&tx.query_one(&tx.prepare_cached(GET).await?, &[&id]).await?)?;
        self.audit(&tx, "pause", &paused).await?;
        if created {
            let tell = tx.prepare_cached(TELL_ENDPOINTS).await?;
            let p = &paused;
            tx.execute(&tell, &[&p.id, &p.job_type, &p.tenant, &p.paused_at, &p.until, &p.paused_by]).await?;
        }
        tx.commit().await?;
        Ok(if created { Paused::Created(paused) } else { Paused::Updated(paused) })
    }

    /// Ends pause `id`, audited, and wakes the claims waiting for work: its
    /// scope's waiting jobs start, the scope ramping for `ramp` (`None`: the
    /// pause's own); answers the pause, ramping. A pause already ended has
    /// its ramp ended (its scope runs as room allows); answers it as it was.
    /// `None`: no such pause.
    pub async fn resume(&self, id: Uuid, ramp: Option<Duration>) -> Result<Option<Pause>, StoreError> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        tx.execute(&tx.prepare_cached(FORGET_ENDED).await?, &[]).await?;
        if tx.query_opt(&tx.prepare_cached(LOCK).await?, &[&id]).await?.is_none() {
            return Ok(None);
        }
        let before = pause_from_row(&tx.query_one(&tx.prepare_cached(GET).await?, &[&id]).await?)?;
        let resumed = match before.state {
            PauseState::Holding => {
                let ramp = ramp.map(|ramp| ramp.as_secs_f64());
                tx.execute(&tx.prepare_cached(RESUME).await?, &[&id, &ramp]).await?;
                if let (None, Some(job_type)) = (&before.tenant, &before.job_type) {
                    tx.execute(&tx.prepare_cached(RESET_BREAKER).await?, &[job_type]).await?;
                }
                pause_from_row(&tx.query_one(&tx.prepare_cached(GET).await?, &[&id]).await?)?
            }
            PauseState::Ramping => {
                tx.execute(&tx.prepare_cached(END_RAMP).await?, &[&id]).await?;
                before
            }
        };
        self.audit(&tx, "resume", &resumed).await?;
        // Sent at commit, so a woken claim sees the pause ended.
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
            "state": pause.state,
            "ramp_seconds": pause.ramp_seconds,
        });
        tx.execute(&tx.prepare_cached(AUDIT).await?, &[&self.operator.name.as_str(), &action, &filter]).await?;
        Ok(())
    }
}
