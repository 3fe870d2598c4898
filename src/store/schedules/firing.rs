//! Due schedules become jobs, exactly once per occurrence. One pass takes
//! due rows with `FOR UPDATE SKIP LOCKED` (processes share the work without
//! waiting on one another), works out in `domain::schedule` what each fires
//! and when it fires next, then records the jobs and moves each row on, all
//! in the pass's transaction: a process that dies mid-pass leaves the rows
//! as they were for the next one. Each job's idempotency key names its
//! schedule and occurrence, and the jobs' key is unique, so even a pass run
//! twice over one occurrence makes one job. Scheduled jobs count against
//! their owners' quotas as submitted ones do: an occurrence without room is
//! skipped (with `overlap = queue` their number would otherwise be unbounded).
//! A job of a type with an admission key carries it, and an occurrence whose
//! key an unfinished job holds (a click's, or an earlier occurrence's) is
//! skipped: that job does the work. The pass takes the keys' locks (in key
//! order, before any queue row or quota lock, the order a submission takes
//! them in), so a click and an occurrence cannot both record one.

use std::collections::HashMap;

use chrono::{DateTime, TimeDelta, Utc};
use deadpool_postgres::{Pool, Transaction};
use serde_json::Value;
use uuid::Uuid;

use crate::domain::{
    AdmissionKey, AdmissionTemplate, ExportFormat, Fingerprint, JobId, Occasion, Occurrence, Quotas, Recurrence,
    TraceParent, firing, resolve_dates,
};
use crate::store::StoreError;
use crate::store::queue::admission::RELEASE_KEY;
use crate::store::queue::cancel::{CancelledBy, cancel_locked};
use crate::store::queue::quota::{self, BatchCaps, Submitter};
use crate::store::schedules::{Overlap, Schedule, columns, next_columns, schedule_from_row};
use keys::{admission_key_of, keys_settled};

mod keys;

/// Due schedules, oldest due first, with their owner and whether the job of
/// their latest occurrence is unfinished: `$1` now, `$2` rows at most. A
/// schedule whose type or tenant an operator paused (`errand_pauses_holding`) is not
/// due: its jobs would only wait. Once resumed, what fell during the pause
/// is late, and goes by its `missed` policy as after errand was down. The
/// owner's email is the one their latest token gave (`people`), or, if
/// they have not signed in since errand began recording it, the schedule's.
const TAKE_DUE: &str = concat!(
    "SELECT ",
    columns!(),
    ", s.tenant_id, s.user_id, CASE WHEN p.user_id IS NULL THEN s.user_email ELSE p.email END AS user_email,
       coalesce((SELECT j.state = 'available' FROM jobs j WHERE j.id = last_job_id), false) AS last_unfinished
     FROM schedules s
     LEFT JOIN people p ON p.tenant_id = s.tenant_id AND p.user_id = s.user_id
     WHERE paused_at IS NULL AND next_run_at <= $1
       AND NOT EXISTS (SELECT 1 FROM errand_pauses_holding(s.tenant_id, s.job_type))
     ORDER BY next_run_at
     LIMIT $2
     FOR UPDATE OF s SKIP LOCKED"
);

/// Pauses up to `$3` due schedules whose owners have not signed in since
/// `$2` (`$1` now; one made before errand recorded sign-ins counts from its
/// creation) and tells each owner why, in the feed, in the statement that
/// pauses: a schedule is paused and its owner told once, whichever process
/// gets there. Answers how many owners were told.
const PAUSE_OWNERS_AWAY: &str = "
WITH away AS (
    SELECT s.id, coalesce(p.seen_at, s.created_at) AS seen_at FROM schedules s
    LEFT JOIN people p ON p.tenant_id = s.tenant_id AND p.user_id = s.user_id
    WHERE s.paused_at IS NULL AND s.next_run_at <= $1 AND coalesce(p.seen_at, s.created_at) < $2
    ORDER BY s.next_run_at
    LIMIT $3
    FOR UPDATE OF s SKIP LOCKED
), paused AS (
    UPDATE schedules s SET paused_at = now(), paused_by = 'owner_inactive', updated_at = now()
    FROM away WHERE s.id = away.id
    RETURNING s.id, s.tenant_id, s.user_id, s.job_type, away.seen_at, s.locale
), told AS (
    INSERT INTO notifications (tenant_id, user_id, kind, job_type, details, locale)
    SELECT tenant_id, user_id, 'schedule_paused', job_type,
           jsonb_build_object('schedule_id', id, 'reason', 'owner_inactive', 'seen_at', seen_at), locale
    FROM paused
    RETURNING tenant_id, user_id
)
SELECT count(pg_notify('errand_notifications', errand_owner_tag(tenant_id, user_id))) AS told FROM told";

/// Records a job per element (unless its key names one already) and queues
/// it; tells the workers. Answers the jobs recorded, by schedule.
const RECORD_JOBS: &str = "
WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bytea[], $7::text[],
                         $8::jsonb[], $9::integer[], $10::uuid[], $11::timestamptz[], $12::smallint[], $13::text[],
                         $14::text[], $15::text[])
        WITH ORDINALITY AS i (id, tenant_id, user_id, user_email, idempotency_key, fingerprint, job_type, params,
                              max_attempts, schedule_id, scheduled_for, priority, format, admission_key, traceparent,
                              n)
), inserted AS (
    -- Linked to the trace of the request that made the schedule (being
    -- scheduled, never in it: `jobs.traceparent`).
    -- In the language of the request that made the schedule.
    INSERT INTO jobs (id, tenant_id, user_id, user_email, idempotency_key, fingerprint, job_type, params, max_attempts,
                      schedule_id, scheduled_for, priority, format, traceparent, locale)
    SELECT id, tenant_id, user_id, user_email, idempotency_key, fingerprint, job_type, params, max_attempts,
           schedule_id, scheduled_for, priority, format, traceparent,
           (SELECT s.locale FROM schedules s WHERE s.id = input.schedule_id)
    FROM input ORDER BY n
    ON CONFLICT (tenant_id, user_id, idempotency_key) DO NOTHING
    RETURNING id, tenant_id, user_id, job_type, run_at, schedule_id, priority
), queued AS (
    INSERT INTO job_queue (job_id, tenant_id, user_id, job_type, run_at, priority, turn, admission_key)
    SELECT x.id, x.tenant_id, x.user_id, x.job_type, x.run_at, x.priority,
           t.turn + row_number() OVER (PARTITION BY x.tenant_id, x.user_id ORDER BY x.id) - 1, i.admission_key
    FROM inserted x JOIN input i ON i.id = x.id CROSS JOIN LATERAL errand_turn(x.tenant_id, x.user_id) t
    RETURNING job_id
)
SELECT i.id, i.schedule_id, (SELECT count(pg_notify('errand_jobs', '')) FROM (SELECT 1 FROM queued LIMIT 1) q) AS told
FROM inserted i";

/// Moves each schedule on: its next occurrence, and its latest job.
const MOVE_ON: &str = "
UPDATE schedules s
SET next_run_at = m.next_run_at, next_local = m.next_local, next_second_of_fold = m.second,
    last_job_id = coalesce(m.last_job_id, s.last_job_id), updated_at = now()
FROM unnest($1::uuid[], $2::timestamptz[], $3::timestamp[], $4::bool[], $5::uuid[])
    AS m (id, next_run_at, next_local, second, last_job_id)
WHERE s.id = m.id";

/// The queue row of a schedule's previous job, locked, for `cancel_previous`.
const LOCK_PREVIOUS: &str = "SELECT state FROM job_queue WHERE job_id = $1 FOR UPDATE";

/// What a schedulable type's jobs are made with.
#[derive(Clone)]
pub struct ScheduledType {
    pub max_attempts: u32,
    /// A scheduled job's (see `domain::priority`).
    pub priority: i16,
    /// Checks a job's params, their dates resolved, against the type's
    /// schema: `Err` says why not.
    pub check_params: ParamsCheck,
    /// Its admission key (`domain::admission`), if it has one.
    pub admission: Option<AdmissionTemplate>,
}

/// A type's check of its jobs' params.
pub type ParamsCheck = std::sync::Arc<dyn Fn(&Value) -> Result<(), String> + Send + Sync>;

/// What a pass needs to know of errand's configuration.
pub struct FiringTerms<'a> {
    /// How late an occurrence may fire and still count as on time.
    pub grace: TimeDelta,
    /// The schedulable types (one no longer configured so is not fired).
    pub types: &'a HashMap<String, ScheduledType>,
    /// Schedules taken per pass.
    pub batch: i64,
    /// A schedule whose owner has not signed in for this long pauses
    /// itself; `None`: never.
    pub owner_inactive_after: Option<TimeDelta>,
}

/// What a pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Fired {
    /// Schedules taken.
    pub schedules: usize,
    /// Jobs recorded.
    pub jobs: usize,
    /// Digest emails written (`notifications/digests.rs`, fired beside schedules).
    pub digests: usize,
}

/// A job an occurrence makes.
struct ScheduledJob {
    id: Uuid,
    schedule: usize,
    key: String,
    at: DateTime<Utc>,
    /// The schedule's params, their dates resolved for the occurrence.
    params: Value,
    /// Its admission key, for a type with one.
    admission_key: Option<AdmissionKey>,
}

/// The scheduler's door: every tenant's due schedules (what a process's
/// scheduler fires, for whoever owns them).
pub struct ScheduleFiring<'a> {
    pub(in crate::store) pool: &'a Pool,
    pub(in crate::store) quotas: &'a Quotas,
    pub(in crate::store) batch_caps: &'a BatchCaps,
    /// Opens the schedules' sealed params, and seals their jobs'. (Params
    /// that do not open are null: the occurrence is skipped, as one whose
    /// params do not resolve is.)
    pub(in crate::store) sealer: &'a crate::store::Sealer,
}

impl ScheduleFiring<'_> {
    /// One pass at `now` (passed in, so that tests can move the clock).
    pub async fn fire_due(&self, now: DateTime<Utc>, terms: &FiringTerms<'_>) -> Result<Fired, StoreError> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        pause_owners_away(&tx, now, terms).await?;
        let rows = tx.query(&tx.prepare_cached(TAKE_DUE).await?, &[&now, &terms.batch]).await?;
        let mut jobs: Vec<ScheduledJob> = Vec::new();
        let mut owners = Vec::with_capacity(rows.len());
        let mut schedules = Vec::with_capacity(rows.len());
        let mut nexts: Vec<Option<Occurrence>> = Vec::with_capacity(rows.len());
        let mut cancels: Vec<JobId> = Vec::new();
        for row in &rows {
            let mut schedule = schedule_from_row(row)?;
            let owner: (String, String, Option<String>) =
                (row.try_get("tenant_id")?, row.try_get("user_id")?, row.try_get("user_email")?);
            self.sealer.open_for_view(&owner.0, &mut schedule.params, crate::domain::sealing::Purpose::Params).await?;
            let unfinished_before: bool = row.try_get("last_unfinished")?;
            let recurrence = Recurrence::parse(&schedule.cron, &schedule.timezone);
            let (fire, next) = match (&recurrence, schedule.next) {
                (Ok(recurrence), Some(due)) if terms.types.contains_key(&schedule.job_type) => {
                    let plan = firing(recurrence, due, now, terms.grace, schedule.missed, schedule.ends_at);
                    (plan.fire, plan.next)
                }
                // An expression or zone no longer understood (a newer tz
                // database), or a type no longer configured: it stops.
                _ => (Vec::new(), None),
            };
            let index = schedules.len();
            // Of several occurrences due at once, each would cancel the one
            // before: only the latest is made.
            let fire = match schedule.overlap {
                Overlap::CancelPrevious => fire.into_iter().last().into_iter().collect(),
                Overlap::Skip | Overlap::Queue => fire,
            };
            let mut unfinished = unfinished_before;
            for occurrence in fire {
                if unfinished {
                    match (schedule.overlap, schedule.last_job) {
                        (Overlap::Skip, _) => continue,
                        // Cancelled once the keys are locked (see the module doc).
                        (Overlap::CancelPrevious, Some(previous)) => cancels.push(previous),
                        (Overlap::Queue | Overlap::CancelPrevious, _) => {}
                    }
                }
                // Only an occurrence of a recurrence that parsed is fired.
                let Ok(recurrence) = &recurrence else { continue };
                let Some(params) = occurrence_params(&schedule, &occurrence, recurrence, terms) else { continue };
                let Some(admission_key) = admission_key_of(&schedule, &owner, &params, terms) else { continue };
                jobs.push(ScheduledJob {
                    id: Uuid::now_v7(),
                    schedule: index,
                    key: format!("schedule:{}:{}", schedule.id, occurrence.at.to_rfc3339()),
                    at: occurrence.at,
                    params,
                    admission_key,
                });
                unfinished = true;
            }
            owners.push(owner);
            nexts.push(next);
            schedules.push(schedule);
        }
        let jobs = keys_settled(&tx, jobs, cancels, &schedules, &owners).await?;
        let jobs = self.within_quotas(&tx, jobs, &schedules, &owners).await?;
        let recorded = record_jobs(&tx, &jobs, &schedules, &owners, terms, self.sealer).await?;
        let mut last_jobs: Vec<Option<Uuid>> = vec![None; schedules.len()];
        for job in jobs.iter().filter(|j| recorded.contains(&j.id)) {
            last_jobs[job.schedule] = Some(job.id);
        }
        let ids: Vec<Uuid> = schedules.iter().map(|s| s.id.0).collect();
        let (mut at, mut local, mut second) = (Vec::new(), Vec::new(), Vec::new());
        for next in &nexts {
            let (a, l, s) = next_columns(*next);
            at.push(a);
            local.push(l);
            second.push(s);
        }
        tx.execute(&tx.prepare_cached(MOVE_ON).await?, &[&ids, &at, &local, &second, &last_jobs]).await?;
        tx.commit().await?;
        Ok(Fired { schedules: schedules.len(), jobs: recorded.len(), digests: 0 })
    }

    /// The jobs their owners' quotas have room for, decided as a batch of
    /// submissions near a cap is (in order, under the tenants' quota locks,
    /// held until the pass commits). An occurrence without room is skipped,
    /// as `overlap = skip` skips one, and said in the log and a metric.
    async fn within_quotas(
        &self,
        tx: &Transaction<'_>,
        jobs: Vec<ScheduledJob>,
        schedules: &[Schedule],
        owners: &[(String, String, Option<String>)],
    ) -> Result<Vec<ScheduledJob>, StoreError> {
        if jobs.is_empty() || !self.quotas.enforced() {
            return Ok(jobs);
        }
        let submitters: Vec<Submitter<'_>> = jobs
            .iter()
            .map(|job| {
                let (tenant, user, _) = &owners[job.schedule];
                Submitter { tenant, user, key: &job.key, job_type: &schedules[job.schedule].job_type }
            })
            .collect();
        let refused = quota::admit_in(tx, &submitters, self.quotas).await?.refused;
        drop(submitters);
        // The counting trigger checks the caps too: a submission that took
        // the room meanwhile fails the pass, which the next pass makes again.
        tx.execute("SELECT set_config('errand.quota_caps', $1, true)", &[&self.batch_caps.as_text()]).await?;
        let admitted = jobs.into_iter().zip(refused).filter_map(|(job, refused)| match refused {
            None => Some(job),
            Some(exceeded) => {
                let schedule = schedules[job.schedule].id;
                tracing::info!(%schedule, ?exceeded, "a scheduled occurrence was skipped: its owner is over a quota");
                crate::telemetry::metrics().schedule_occurrences_skipped.add("quota", 1);
                None
            }
        });
        Ok(admitted.collect())
    }
}

/// Pauses the schedules due at `now` whose owners have been away longer
/// than `terms` allow (see [`PAUSE_OWNERS_AWAY`]), before the pass takes
/// what is due.
async fn pause_owners_away(
    tx: &Transaction<'_>,
    now: DateTime<Utc>,
    terms: &FiringTerms<'_>,
) -> Result<(), StoreError> {
    if let Some(seen_since) = terms.owner_inactive_after.and_then(|away| now.checked_sub_signed(away)) {
        tx.execute(&tx.prepare_cached(PAUSE_OWNERS_AWAY).await?, &[&now, &seen_since, &terms.batch]).await?;
    }
    Ok(())
}

/// The params of `schedule`'s job for `occurrence`, its dates resolved; or
/// `None` (logged, counted) when they fail its type's schema. They were
/// checked when the schedule was written, with the dates of its next
/// occurrence; each job's dates are its own, so checked again (a schema may
/// bound them).
fn occurrence_params(
    schedule: &Schedule,
    occurrence: &Occurrence,
    recurrence: &Recurrence,
    terms: &FiringTerms<'_>,
) -> Option<serde_json::Value> {
    let occasion = Occasion { local: occurrence.local, zone: recurrence.zone() };
    let check = terms.types.get(&schedule.job_type).map(|t| &t.check_params);
    let resolved = resolve_dates(&schedule.params, occasion).map_err(|e| e.to_string());
    match resolved.and_then(|p| check.map_or(Ok(()), |check| check(&p)).map(|()| p)) {
        Ok(params) => Some(params),
        Err(error) => {
            tracing::warn!(schedule = %schedule.id, %error, "a scheduled occurrence was skipped: its params");
            crate::telemetry::metrics().schedule_occurrences_skipped.add("params", 1);
            None
        }
    }
}

/// Records the jobs in one statement; answers the ids it recorded.
async fn record_jobs(
    tx: &Transaction<'_>,
    jobs: &[ScheduledJob],
    schedules: &[Schedule],
    owners: &[(String, String, Option<String>)],
    terms: &FiringTerms<'_>,
    sealer: &crate::store::Sealer,
) -> Result<Vec<Uuid>, StoreError> {
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    let mut sealed = Vec::with_capacity(jobs.len());
    for job in jobs {
        let job_type = &schedules[job.schedule].job_type;
        sealed.push(sealer.seal(&owners[job.schedule].0, job_type, &job.params).await?);
    }
    let n = jobs.len();
    let (mut ids, mut tenants, mut users, mut emails) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut keys, mut fingerprints, mut types, mut params) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut attempts, mut schedule_ids, mut times) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let mut priorities: Vec<i16> = Vec::with_capacity(n);
    let mut formats: Vec<Option<&str>> = Vec::with_capacity(n);
    let mut traces: Vec<Option<&str>> = Vec::with_capacity(n);
    let admission_keys: Vec<Option<&str>> =
        jobs.iter().map(|job| job.admission_key.as_ref().map(AdmissionKey::as_str)).collect();
    for (job, sealed) in jobs.iter().zip(&sealed) {
        let (schedule, (tenant, user, email)) = (&schedules[job.schedule], &owners[job.schedule]);
        ids.push(job.id);
        tenants.push(tenant.as_str());
        users.push(user.as_str());
        emails.push(email.as_deref());
        keys.push(job.key.as_str());
        fingerprints.push(Fingerprint::of_job(&schedule.job_type, schedule.format, &job.params).0.to_vec());
        types.push(schedule.job_type.as_str());
        params.push(sealed.as_ref().unwrap_or(&job.params));
        formats.push(schedule.format.map(ExportFormat::as_str));
        traces.push(schedule.trace.as_ref().map(TraceParent::as_str));
        let made_with = terms.types.get(&schedule.job_type);
        attempts.push(made_with.map_or(1, |t| i32::try_from(t.max_attempts).unwrap_or(i32::MAX)));
        priorities.push(made_with.map_or(0, |t| t.priority));
        schedule_ids.push(schedule.id.0);
        times.push(job.at);
    }
    let statement = tx.prepare_cached(RECORD_JOBS).await?;
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 15] = [
        &ids,
        &tenants,
        &users,
        &emails,
        &keys,
        &fingerprints,
        &types,
        &params,
        &attempts,
        &schedule_ids,
        &times,
        &priorities,
        &formats,
        &admission_keys,
        &traces,
    ];
    let rows = tx.query(&statement, &params).await?;
    rows.iter().map(|row| row.try_get("id").map_err(StoreError::from)).collect()
}

/// Cancels a schedule's previous job, as its owner's cancel would (the
/// owner's streams hear of it; no email). One still running gives up its
/// admission key: the occurrence replacing it takes the key.
async fn cancel_previous(tx: &Transaction<'_>, job: JobId) -> Result<(), StoreError> {
    cancel_locked(tx, LOCK_PREVIOUS, &[&job.0], job, CancelledBy::Owner, None).await?;
    tx.execute(&tx.prepare_cached(RELEASE_KEY).await?, &[&job.0]).await?;
    Ok(())
}
