//! One caller's schedules (see `schedules` in `migrations/V1__baseline.sql`):
//! create one under an idempotency key, within the per-user cap; list, read,
//! change, pause, resume and delete them. Tenant and user are bound into
//! every statement from the [`Caller`]: another user's schedule is not found.
//! When a schedule fires is decided in `domain::schedule`; the caller hands
//! its next occurrence in, and `firing.rs` fires it; `managed.rs` is the
//! door of a tenant's admins and of operators.

pub mod firing;
pub mod managed;
pub mod owners;

use chrono::{DateTime, NaiveDateTime, Utc};
use serde_json::Value;
use tokio_postgres::Row;

use crate::domain::{
    Caller, ExportFormat, Fingerprint, IdempotencyKey, JobId, Missed, Occurrence, ScheduleId, TraceParent,
};
use crate::store::StoreError;

/// What becomes of a schedule's occurrence while its previous job is unfinished.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    postgres_types::ToSql,
    postgres_types::FromSql,
)]
#[serde(rename_all = "snake_case")]
#[postgres(name = "schedule_overlap", rename_all = "snake_case")]
pub enum Overlap {
    /// No job for it.
    Skip,
    /// A job for it, beside the running one.
    Queue,
    /// The previous job is cancelled, and a job made for it.
    CancelPrevious,
}

/// Who paused a schedule (`schedules.paused_by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PausedBy {
    Owner,
    /// A tenant admin or an operator.
    Administrator,
    /// errand: its owner has not signed in for `schedules.owner_inactive_after`.
    OwnerInactive,
}

impl PausedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Owner => "owner",
            Self::Administrator => "administrator",
            Self::OwnerInactive => "owner_inactive",
        }
    }

    /// The column's CHECK holds it to these; a value a newer errand wrote reads as the owner's.
    fn parse(text: &str) -> Self {
        match text {
            "administrator" => Self::Administrator,
            "owner_inactive" => Self::OwnerInactive,
            _ => Self::Owner,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, postgres_types::ToSql, postgres_types::FromSql)]
#[postgres(name = "schedule_missed", rename_all = "snake_case")]
enum MissedColumn {
    Skip,
    CatchUp,
}

/// A schedule as stored.
#[derive(Debug, Clone)]
pub struct Schedule {
    pub id: ScheduleId,
    pub job_type: String,
    /// As the owner wrote them, date expressions and all.
    pub params: Value,
    /// Its jobs' file format (an export's).
    pub format: Option<ExportFormat>,
    pub cron: String,
    pub timezone: String,
    pub ends_at: Option<DateTime<Utc>>,
    pub missed: Missed,
    pub overlap: Overlap,
    /// Who paused it; `None`: it is not paused.
    pub paused: Option<PausedBy>,
    /// When it fires next; `None`: never again.
    pub next: Option<Occurrence>,
    pub last_job: Option<JobId>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub(super) fingerprint: Vec<u8>,
    /// The trace of the request that made it: its occurrences link to it.
    pub(super) trace: Option<TraceParent>,
}

impl Schedule {
    /// Paused by its owner, or resumed. One paused already stays paused by
    /// whoever paused it.
    pub fn set_paused(&mut self, paused: bool) {
        self.paused = if paused { Some(self.paused.unwrap_or(PausedBy::Owner)) } else { None };
    }
}

/// A schedule to record for its caller, its expression already checked and
/// its first occurrence worked out.
#[derive(Debug, Clone)]
pub struct NewSchedule {
    pub key: IdempotencyKey,
    pub fingerprint: Fingerprint,
    pub job_type: String,
    pub params: Value,
    pub format: Option<ExportFormat>,
    pub cron: String,
    pub timezone: String,
    pub ends_at: Option<DateTime<Utc>>,
    pub missed: Missed,
    pub overlap: Overlap,
    pub first: Option<Occurrence>,
    /// The trace of the request (`http::support::request_id::trace_of`).
    pub trace: Option<TraceParent>,
}

/// What became of a creation.
#[derive(Debug)]
pub enum ScheduleCreation {
    Created(Schedule),
    /// The key was used before for the same request: here is that schedule.
    Replayed(Schedule),
    /// The key was used before for another request.
    KeyReused,
    /// The caller has `count` schedules, as many as they may (`limit`).
    OverQuota {
        limit: u32,
        count: u64,
    },
}

/// The columns every read of a schedule returns (the scheduler's too).
macro_rules! columns {
    () => {
        "id, job_type, params, format, cron, timezone, ends_at, missed, catch_up_limit, overlap, paused_by,
         next_run_at, next_local, next_second_of_fold, last_job_id, created_at, updated_at, fingerprint, traceparent"
    };
}

pub(super) use columns;

/// Serialises one user's creations (the cap is counted, then the row
/// written), by a transaction-scoped lock on their (tenant, user).
const LOCK_OWNER: &str = "SELECT pg_advisory_xact_lock(hashtextextended($1 || chr(31) || $2, 7))";

const FIND_BY_KEY: &str =
    concat!("SELECT ", columns!(), " FROM schedules WHERE tenant_id = $1 AND user_id = $2 AND idempotency_key = $3");

const COUNT_OWN: &str = "SELECT count(*) FROM schedules WHERE tenant_id = $1 AND user_id = $2";

const INSERT: &str = concat!(
    "INSERT INTO schedules (tenant_id, user_id, user_email, idempotency_key, fingerprint, job_type, params, cron,
                            timezone, ends_at, missed, catch_up_limit, overlap, next_run_at, next_local,
                            next_second_of_fold, format, traceparent, locale)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
     RETURNING ",
    columns!()
);

const GET_OWN: &str =
    concat!("SELECT ", columns!(), " FROM schedules WHERE tenant_id = $1 AND user_id = $2 AND id = $3");

/// The caller's schedules older than `$3` (nil: from the newest), `$4` rows.
const LIST_OWN: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM schedules WHERE tenant_id = $1 AND user_id = $2 AND ($3::uuid IS NULL OR id < $3)
     ORDER BY id DESC LIMIT $4"
);

/// Writes a changed schedule back (see [`CallerSchedules::change`]).
const UPDATE_OWN: &str = concat!(
    "UPDATE schedules
     SET params = $4, cron = $5, timezone = $6, ends_at = $7, missed = $8, catch_up_limit = $9, overlap = $10,
         paused_at = CASE WHEN NOT $11 THEN NULL ELSE coalesce(paused_at, now()) END,
         paused_by = CASE WHEN NOT $11 THEN NULL ELSE coalesce(paused_by, 'owner') END,
         next_run_at = $12, next_local = $13, next_second_of_fold = $14, format = $15, updated_at = now()
     WHERE tenant_id = $1 AND user_id = $2 AND id = $3
     RETURNING ",
    columns!()
);

/// The caller's schedule, locked for a change.
const LOCK_OWN: &str =
    concat!("SELECT ", columns!(), " FROM schedules WHERE tenant_id = $1 AND user_id = $2 AND id = $3 FOR UPDATE");

const DELETE_OWN: &str = "DELETE FROM schedules WHERE tenant_id = $1 AND user_id = $2 AND id = $3";

/// One caller's schedules.
pub struct CallerSchedules<'a> {
    pub(super) pool: crate::store::TenantPool,
    pub(super) caller: &'a Caller,
    /// Seals the params of a type that keeps them sealed, and opens them.
    pub(super) sealer: &'a crate::store::Sealer,
}

impl CallerSchedules<'_> {
    /// The schedule of `row`, its params opened.
    async fn schedule_of(&self, row: &Row) -> Result<Schedule, StoreError> {
        let mut schedule = schedule_from_row(row)?;
        self.sealer
            .open_for_view(self.caller.tenant.as_str(), &mut schedule.params, crate::domain::sealing::Purpose::Params)
            .await?;
        Ok(schedule)
    }

    /// `params` of a `job_type` schedule as its row keeps them.
    async fn kept(&self, job_type: &str, params: &Value) -> Result<Value, StoreError> {
        let sealed = self.sealer.seal(self.caller.tenant.as_str(), job_type, params).await?;
        Ok(sealed.unwrap_or_else(|| params.clone()))
    }

    /// Records `new` unless the caller's key names a schedule already, or
    /// they have `limit` schedules.
    pub async fn create(&self, new: &NewSchedule, limit: u32) -> Result<ScheduleCreation, StoreError> {
        let (tenant, user) = (self.caller.tenant.as_str(), self.caller.user.as_str());
        // (Sealed before the transaction: a request holds one connection at a time.)
        let kept = self.kept(&new.job_type, &new.params).await?;
        let tx = self.pool.get().await?;
        tx.execute(&tx.prepare_cached(LOCK_OWNER).await?, &[&tenant, &user]).await?;
        let found = tx.query_opt(&tx.prepare_cached(FIND_BY_KEY).await?, &[&tenant, &user, &new.key.as_str()]).await?;
        if let Some(row) = found {
            let schedule = self.schedule_of(&row).await?;
            return Ok(if schedule.fingerprint == new.fingerprint.0 {
                ScheduleCreation::Replayed(schedule)
            } else {
                ScheduleCreation::KeyReused
            });
        }
        let count: i64 = tx.query_one(&tx.prepare_cached(COUNT_OWN).await?, &[&tenant, &user]).await?.try_get(0)?;
        if count >= i64::from(limit) {
            return Ok(ScheduleCreation::OverQuota { limit, count: u64::try_from(count).unwrap_or(0) });
        }
        let (missed, catch_up_limit) = missed_columns(new.missed);
        let (next_at, next_local, second) = next_columns(new.first);
        let format = new.format.map(ExportFormat::as_str);
        let trace = new.trace.as_ref().map(TraceParent::as_str);
        let locale = self.caller.locale.as_str();
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 19] = [
            &tenant,
            &user,
            &self.caller.email.as_deref(),
            &new.key.as_str(),
            &new.fingerprint.0.as_slice(),
            &new.job_type,
            &kept,
            &new.cron,
            &new.timezone,
            &new.ends_at,
            &missed,
            &catch_up_limit,
            &new.overlap,
            &next_at,
            &next_local,
            &second,
            &format,
            &trace,
            &locale,
        ];
        let row = tx.query_one(&tx.prepare_cached(INSERT).await?, &params).await?;
        self.seen(&tx).await?;
        tx.commit().await?;
        Ok(ScheduleCreation::Created(self.schedule_of(&row).await?))
    }

    pub async fn get(&self, id: ScheduleId) -> Result<Option<Schedule>, StoreError> {
        let (tenant, user) = (self.caller.tenant.as_str(), self.caller.user.as_str());
        let client = self.pool.get().await?;
        let row = client.query_opt(&client.prepare_cached(GET_OWN).await?, &[&tenant, &user, &id.0]).await?;
        match row {
            Some(row) => Ok(Some(self.schedule_of(&row).await?)),
            None => Ok(None),
        }
    }

    /// A page of the caller's schedules, newest first, older than `before`,
    /// and the page's last when more follow.
    pub async fn list(
        &self,
        before: Option<ScheduleId>,
        limit: u32,
    ) -> Result<(Vec<Schedule>, Option<ScheduleId>), StoreError> {
        let (tenant, user) = (self.caller.tenant.as_str(), self.caller.user.as_str());
        let client = self.pool.get().await?;
        let (before, fetch) = (before.map(|id| id.0), i64::from(limit) + 1);
        let rows = client.query(&client.prepare_cached(LIST_OWN).await?, &[&tenant, &user, &before, &fetch]).await?;
        let mut schedules = Vec::with_capacity(rows.len());
        for row in &rows {
            schedules.push(self.schedule_of(row).await?);
        }
        Ok(crate::store::jobs::keyset_page(schedules, limit, |s| s.id))
    }

    /// Changes the caller's schedule: `change` gets it as stored (its row
    /// locked) and returns it as it should be, or `None` to leave it be.
    pub async fn change<E>(
        &self,
        id: ScheduleId,
        change: impl FnOnce(Schedule) -> Result<Schedule, E>,
    ) -> Result<Option<Result<Schedule, E>>, StoreError> {
        let (tenant, user) = (self.caller.tenant.as_str(), self.caller.user.as_str());
        let tx = self.pool.get().await?;
        let Some(row) = tx.query_opt(&tx.prepare_cached(LOCK_OWN).await?, &[&tenant, &user, &id.0]).await? else {
            return Ok(None);
        };
        let changed = match change(self.schedule_of(&row).await?) {
            Ok(changed) => changed,
            Err(refused) => return Ok(Some(Err(refused))),
        };
        let (missed, catch_up_limit) = missed_columns(changed.missed);
        let (next_at, next_local, second) = next_columns(changed.next);
        let format = changed.format.map(ExportFormat::as_str);
        let kept = self.kept(&changed.job_type, &changed.params).await?;
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 15] = [
            &tenant,
            &user,
            &id.0,
            &kept,
            &changed.cron,
            &changed.timezone,
            &changed.ends_at,
            &missed,
            &catch_up_limit,
            &changed.overlap,
            &changed.paused.is_some(),
            &next_at,
            &next_local,
            &second,
            &format,
        ];
        let row = tx.query_one(&tx.prepare_cached(UPDATE_OWN).await?, &params).await?;
        // Only a token resumes or changes an active schedule; an email's
        // pause link (no sign-in: whoever holds the mailbox) only pauses.
        if changed.paused.is_none() {
            self.seen(&tx).await?;
        }
        tx.commit().await?;
        Ok(Some(Ok(self.schedule_of(&row).await?)))
    }

    /// Records the caller as seen now (see `owners::SEEN_NOW`).
    async fn seen(&self, tx: &deadpool_postgres::Object) -> Result<(), StoreError> {
        let (tenant, user, email) = (self.caller.tenant.as_str(), self.caller.user.as_str(), &self.caller.email);
        tx.execute(&tx.prepare_cached(owners::SEEN_NOW).await?, &[&tenant, &user, email]).await?;
        Ok(())
    }

    /// Deletes the caller's schedule (its jobs stay); whether there was one.
    pub async fn delete(&self, id: ScheduleId) -> Result<bool, StoreError> {
        let (tenant, user) = (self.caller.tenant.as_str(), self.caller.user.as_str());
        let client = self.pool.get().await?;
        let deleted = client.execute(&client.prepare_cached(DELETE_OWN).await?, &[&tenant, &user, &id.0]).await? == 1;
        client.commit().await?;
        Ok(deleted)
    }
}

fn missed_columns(missed: Missed) -> (MissedColumn, i32) {
    match missed {
        Missed::Skip => (MissedColumn::Skip, 1),
        Missed::CatchUp { limit } => (MissedColumn::CatchUp, i32::try_from(limit).unwrap_or(i32::MAX)),
    }
}

pub(super) fn next_columns(next: Option<Occurrence>) -> (Option<DateTime<Utc>>, Option<NaiveDateTime>, bool) {
    match next {
        Some(o) => (Some(o.at), Some(o.local), o.second_of_fold),
        None => (None, None, false),
    }
}

pub(super) fn schedule_from_row(row: &Row) -> Result<Schedule, StoreError> {
    let missed = match row.try_get::<_, MissedColumn>("missed")? {
        MissedColumn::Skip => Missed::Skip,
        MissedColumn::CatchUp => {
            Missed::CatchUp { limit: u32::try_from(row.try_get::<_, i32>("catch_up_limit")?).unwrap_or(1) }
        }
    };
    let next_at: Option<DateTime<Utc>> = row.try_get("next_run_at")?;
    let next_local: Option<NaiveDateTime> = row.try_get("next_local")?;
    let next = next_at.zip(next_local).map(|(at, local)| Occurrence {
        at,
        local,
        second_of_fold: row.try_get("next_second_of_fold").unwrap_or(false),
    });
    Ok(Schedule {
        id: ScheduleId(row.try_get("id")?),
        job_type: row.try_get("job_type")?,
        params: row.try_get("params")?,
        // The column's CHECK holds it to the formats errand writes.
        format: row.try_get::<_, Option<&str>>("format")?.and_then(|f| f.parse().ok()),
        cron: row.try_get("cron")?,
        timezone: row.try_get("timezone")?,
        ends_at: row.try_get("ends_at")?,
        missed,
        overlap: row.try_get("overlap")?,
        paused: row.try_get::<_, Option<&str>>("paused_by")?.map(PausedBy::parse),
        next,
        last_job: row.try_get::<_, Option<uuid::Uuid>>("last_job_id")?.map(JobId),
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        fingerprint: row.try_get("fingerprint")?,
        trace: row.try_get::<_, Option<&str>>("traceparent")?.and_then(TraceParent::parse),
    })
}
