//! A pass's admission keys (see the module doc of `firing`): each job's
//! key, the keys' locks, and which jobs an unfinished job's key leaves out.

use deadpool_postgres::Transaction;
use serde_json::Value;

use super::{FiringTerms, ScheduledJob, cancel_previous};
use crate::domain::{AdmissionKey, JobId};
use crate::store::StoreError;
use crate::store::queue::admission::LOCK_KEY;
use crate::store::schedules::Schedule;

/// Of the (tenant, type, admission key) triples given, those an unfinished
/// job holds.
const HELD_KEYS: &str = "
SELECT q.tenant_id, q.job_type, q.admission_key
FROM unnest($1::text[], $2::text[], $3::text[]) AS k (tenant_id, job_type, admission_key)
JOIN job_queue q ON q.tenant_id = k.tenant_id AND q.job_type = k.job_type AND q.admission_key = k.admission_key";

/// The admission key of `schedule`'s job with `params`, for a type with
/// one (`Some(None)`: its type has none); `None` (logged, counted) when the
/// params lack a field the key names: the occurrence is skipped.
pub(super) fn admission_key_of(
    schedule: &Schedule,
    owner: &(String, String, Option<String>),
    params: &Value,
    terms: &FiringTerms<'_>,
) -> Option<Option<AdmissionKey>> {
    let Some(template) = terms.types.get(&schedule.job_type).and_then(|t| t.admission.as_ref()) else {
        return Some(None);
    };
    match template.key(&owner.0, &owner.1, &schedule.job_type, params) {
        Ok(key) => Some(Some(key)),
        Err(missing) => {
            tracing::warn!(schedule = %schedule.id, %missing, "a scheduled occurrence was skipped: its params");
            crate::telemetry::metrics().schedule_occurrences_skipped.add("params", 1);
            None
        }
    }
}

/// With the jobs' admission keys locked (see the module doc), the schedules'
/// previous jobs to cancel cancelled: the jobs whose key no unfinished job
/// holds.
pub(super) async fn keys_settled(
    tx: &Transaction<'_>,
    jobs: Vec<ScheduledJob>,
    cancels: Vec<JobId>,
    schedules: &[Schedule],
    owners: &[(String, String, Option<String>)],
) -> Result<Vec<ScheduledJob>, StoreError> {
    lock_admission_keys(tx, &jobs, schedules, owners).await?;
    for previous in cancels {
        cancel_previous(tx, previous).await?;
    }
    unheld(tx, jobs, schedules, owners).await
}

/// Each job's (tenant, type, admission key), for those with a key.
fn admission_keys<'a>(
    jobs: &'a [ScheduledJob],
    schedules: &'a [Schedule],
    owners: &'a [(String, String, Option<String>)],
) -> impl Iterator<Item = (&'a str, &'a str, &'a str)> {
    jobs.iter().filter_map(|job| {
        let key = job.admission_key.as_ref()?;
        Some((owners[job.schedule].0.as_str(), schedules[job.schedule].job_type.as_str(), key.as_str()))
    })
}

/// Takes the locks of the jobs' admission keys (as a submission takes its
/// one, `store/queue/admission.rs`), in key order, held until the pass commits.
async fn lock_admission_keys(
    tx: &Transaction<'_>,
    jobs: &[ScheduledJob],
    schedules: &[Schedule],
    owners: &[(String, String, Option<String>)],
) -> Result<(), StoreError> {
    let mut keys: Vec<_> = admission_keys(jobs, schedules, owners).collect();
    keys.sort_unstable();
    keys.dedup();
    let lock = tx.prepare_cached(LOCK_KEY).await?;
    for (tenant, job_type, key) in keys {
        tx.execute(&lock, &[&tenant, &job_type, &key]).await?;
    }
    Ok(())
}

/// The jobs whose admission key no unfinished job holds (and of several of
/// the pass with one key, the first): the others are skipped, their work
/// being done by that job.
async fn unheld(
    tx: &Transaction<'_>,
    jobs: Vec<ScheduledJob>,
    schedules: &[Schedule],
    owners: &[(String, String, Option<String>)],
) -> Result<Vec<ScheduledJob>, StoreError> {
    let (tenants, (types, keys)): (Vec<&str>, (Vec<&str>, Vec<&str>)) =
        admission_keys(&jobs, schedules, owners).map(|(t, j, k)| (t, (j, k))).unzip();
    if keys.is_empty() {
        return Ok(jobs);
    }
    let rows = tx.query(&tx.prepare_cached(HELD_KEYS).await?, &[&tenants, &types, &keys]).await?;
    let mut held: std::collections::HashSet<(String, String, String)> = rows
        .iter()
        .map(|row| Ok((row.try_get("tenant_id")?, row.try_get("job_type")?, row.try_get("admission_key")?)))
        .collect::<Result<_, StoreError>>()?;
    let mut kept = Vec::with_capacity(jobs.len());
    for job in jobs {
        if let Some(key) = &job.admission_key {
            let scope =
                (owners[job.schedule].0.clone(), schedules[job.schedule].job_type.clone(), key.as_str().to_owned());
            // Held, or taken by an earlier job of this pass.
            if !held.insert(scope) {
                tracing::info!(schedule = %schedules[job.schedule].id, "a scheduled occurrence was skipped: an unfinished job holds its admission key");
                crate::telemetry::metrics().schedule_occurrences_skipped.add("admission", 1);
                continue;
            }
        }
        kept.push(job);
    }
    Ok(kept)
}
