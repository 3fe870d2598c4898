//! Submissions: record a job and queue it, or find the job its key already
//! names. One submission is one statement; several that arrive together (see
//! the `Intake` actor) are one statement for all of them, so creation is not
//! bound by one commit per job.
//!
//! Every row's tenant and user come from its [`Caller`], never from request
//! input, and a submission can only find the job of its own (tenant, user, key).

use std::collections::HashMap;
use std::time::Duration;

use deadpool_postgres::{Client, GenericClient, Pool};
use tokio_postgres::Row;

use crate::domain::{
    AdmissionKey, Caller, ExportFormat, Fingerprint, IdempotencyKey, Job, JobId, QuotaExceeded, Quotas, ServiceId,
    TraceParent,
};
use crate::store::StoreError;
use crate::store::jobs::job_from_row;
use crate::store::queue::quota::{self, Admission, COMMIT, Submitter};

/// The text of [`INSERT_OR_FIND`], the batch inserted only where `$insert_if` holds.
macro_rules! insert_or_find {
    ($insert_if:literal) => {
        concat!(
            "
WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bytea[], $7::text[],
                         $8::jsonb[], $9::integer[], $10::smallint[], $11::integer[], $12::text[], $13::text[],
                         $14::float8[], $15::text[], $16::text[], $17::text[])
        WITH ORDINALITY AS i (id, tenant_id, user_id, user_email, idempotency_key, fingerprint, job_type, params,
                              max_attempts, priority, nth_of_owner, format, admission_key, start_after_ms, traceparent,
                              locale, acted_by, n)
), inserted AS (
    INSERT INTO jobs (id, tenant_id, user_id, user_email, idempotency_key, fingerprint, job_type, params, max_attempts,
                      priority, format, run_at, traceparent, locale, acted_by)
    SELECT id, tenant_id, user_id, user_email, idempotency_key, fingerprint, job_type, params, max_attempts, priority,
           format, now() + coalesce(start_after_ms, 0) * interval '1 millisecond', traceparent, locale, acted_by
    FROM input WHERE ",
            $insert_if,
            " ORDER BY n
    ON CONFLICT (tenant_id, user_id, idempotency_key) DO NOTHING
    RETURNING id, tenant_id, user_id, job_type, params, state, attempt, max_attempts, run_at, result,
              error_message, created_at, finished_at, fingerprint, priority, format
), queued AS (
    -- In its owner's turn (errand_turn), plus its place among the owner's
    -- jobs in this batch (from the input: a window here cost a sort).
    INSERT INTO job_queue (job_id, tenant_id, user_id, job_type, run_at, priority, turn, admission_key)
    SELECT x.id, x.tenant_id, x.user_id, x.job_type, x.run_at, x.priority, t.turn + i.nth_of_owner - 1, i.admission_key
    FROM inserted x JOIN input i ON i.id = x.id CROSS JOIN LATERAL errand_turn(x.tenant_id, x.user_id) t
)
SELECT id AS input_id, id, tenant_id, user_id, job_type, params, state, attempt, max_attempts, run_at, result,
       error_message, created_at, finished_at, NULL::jsonb AS progress, NULL::text AS cancel_requested_by,
       NULL::uuid AS schedule_id, NULL::timestamptz AS scheduled_for, fingerprint, priority, format,
       NULL::bigint AS resumed_from, true AS created
FROM inserted
UNION ALL
SELECT i.id, j.id, j.tenant_id, j.user_id, j.job_type, j.params, j.state, j.attempt, j.max_attempts, j.run_at,
       j.result, j.error_message, j.created_at, j.finished_at, j.progress, j.cancel_requested_by, j.schedule_id,
       j.scheduled_for, j.fingerprint, j.priority, j.format, j.resumed_from, false
FROM input i
JOIN jobs_live j ON j.tenant_id = i.tenant_id AND j.user_id = i.user_id AND j.idempotency_key = i.idempotency_key
WHERE NOT EXISTS (SELECT 1 FROM inserted x WHERE x.id = i.id)"
        )
    };
}

/// Records and queues a job for each array element, unless its caller's key
/// already names a job: then reads that one (with its live state from the
/// queue). (An element repeating an earlier one's key is skipped; its answer
/// is read after the statement, see `insert_or_find`.) One round trip for both common
/// cases, for one submission or many. Rows are inserted in array order, which
/// the caller sorts by key: two batches sharing keys then wait on each other
/// in one order and cannot deadlock. Answers one row per submission whose
/// job was inserted or committed before this statement began; `input_id`
/// tells which submission a row answers.
pub(in crate::store) const INSERT_OR_FIND: &str = insert_or_find!("true");

/// [`INSERT_OR_FIND`] when quotas are kept: the statement sets the caps that
/// hold (`$18`, see `quota::BatchCaps`) for its own transaction, and the
/// trigger that counts the queued jobs checks them on the counts it has just
/// written (`errand_count_changed` in `migrations/V3__counts_by_generation.sql`). A batch
/// that would take any count over its cap records nothing: the statement
/// fails with SQLSTATE `ER019` (`quota::is_over_quota`) and the caller
/// decides job by job. Far from the caps, the check costs no statement of its
/// own.
pub(in crate::store) const INSERT_OR_FIND_CAPPED: &str =
    insert_or_find!("(SELECT set_config('errand.quota_caps', $18::text, true)) IS NOT NULL");

/// The job the caller's key names, read with a fresh snapshot.
pub(in crate::store) const FIND_BY_KEY: &str = "
SELECT id, tenant_id, user_id, job_type, params, state, attempt, max_attempts, run_at, result, error_message,
       created_at, finished_at, progress, cancel_requested_by, schedule_id, scheduled_for, fingerprint, priority,
       format, resumed_from, false AS created
FROM jobs_live
WHERE tenant_id = $1 AND user_id = $2 AND idempotency_key = $3";

/// What became of a submission.
#[derive(Debug)]
pub enum Submission {
    /// A new job was recorded and queued.
    Created(Job),
    /// The key was used before for the same request: here is that job.
    Replayed(Job),
    /// The key was used before for a different request (type or params).
    KeyReused,
    /// A new job over one of its caller's quotas: nothing was recorded.
    OverQuota(QuotaExceeded),
    /// The caller's unfinished job with the same admission key, joined
    /// (`on_conflict = "join"`): nothing new was recorded.
    Joined(Job),
    /// The caller's waiting job with the same admission key, debounced: it
    /// took the request's params and starts later; nothing new was recorded.
    Debounced(Job),
    /// An unfinished job holds the admission key (`on_conflict = "reject"`,
    /// or a colleague's job): nothing was recorded.
    AdmissionConflict(JobId),
}

/// A job to record for its caller, already checked against its type.
#[derive(Debug, Clone)]
pub struct NewJob {
    pub caller: Caller,
    pub key: IdempotencyKey,
    pub job_type: String,
    /// As the caller sent them (its fingerprint and admission key are of these).
    pub params: serde_json::Value,
    /// The params as kept, where their type keeps them sealed
    /// (`Sealer::seal`); `None`: kept as they are.
    pub sealed_params: Option<serde_json::Value>,
    pub max_attempts: u32,
    /// Its class's and type's, and (interactive jobs) the request's: see
    /// `jobs.priority` in `migrations/V1__baseline.sql`.
    pub priority: i16,
    /// An export's file format (its type's default when not asked for);
    /// `None` for a job of another kind.
    pub format: Option<ExportFormat>,
    /// Its admission key, for a type that has one (`domain::admission`):
    /// recorded only through `Submissions::submit_admitted`, which holds
    /// the key's lock.
    pub admission_key: Option<AdmissionKey>,
    /// How long after it is recorded it may start (a debounced job's wait);
    /// at once when `None`.
    pub start_after: Option<Duration>,
    /// The trace of the request that recorded it (`telemetry::traces`).
    pub trace: Option<TraceParent>,
}

impl NewJob {
    /// What makes a second submission with its key the same request.
    pub(in crate::store) fn fingerprint(&self) -> Fingerprint {
        Fingerprint::of_job(&self.job_type, self.format, &self.params)
    }
}

/// The submissions of a batch as the quota check sees them.
pub(in crate::store) fn submitters(jobs: &[NewJob]) -> Vec<Submitter<'_>> {
    jobs.iter()
        .map(|job| Submitter {
            tenant: job.caller.tenant.as_str(),
            user: job.caller.user.as_str(),
            key: job.key.as_str(),
            job_type: &job.job_type,
        })
        .collect()
}

/// The submissions of `jobs` that the quota check let through, in their order.
pub(in crate::store) fn admitted<'a>(jobs: &'a [NewJob], admission: &Admission) -> Vec<&'a NewJob> {
    jobs.iter().enumerate().filter(|(i, _)| admission.is_admitted(*i)).map(|(_, job)| job).collect()
}

/// Every submission's answer, in the batch's order: the refusals, and
/// `recorded`, the answers of the [`admitted`] ones in their order.
pub(in crate::store) fn answers(
    admission: &Admission,
    recorded: Vec<Result<Submission, StoreError>>,
) -> Vec<Result<Submission, StoreError>> {
    let mut recorded = recorded.into_iter();
    admission
        .refused
        .iter()
        .map(|refused| match refused {
            Some(refused) => Ok(Submission::OverQuota(*refused)),
            None => recorded.next().unwrap_or_else(|| Err(StoreError::Corrupt("a submission went unanswered".into()))),
        })
        .collect()
}

impl NewJob {
    /// What makes two submissions with one key the same: whose key it is.
    pub fn key_owner(&self) -> (&str, &str, &str) {
        (self.caller.tenant.as_str(), self.caller.user.as_str(), self.key.as_str())
    }

    /// Its params as the job's row keeps them.
    pub(in crate::store) fn kept_params(&self) -> &serde_json::Value {
        self.sealed_params.as_ref().unwrap_or(&self.params)
    }

    fn max_attempts_sql(&self) -> i32 {
        i32::try_from(self.max_attempts).unwrap_or(i32::MAX)
    }
}

/// The submission side of the job table.
pub struct Submissions<'a> {
    pub(in crate::store) pool: &'a Pool,
    /// Checked in the recording transaction of every new job.
    pub(in crate::store) quotas: &'a Quotas,
    /// `quotas` as the recording statement binds them.
    pub(in crate::store) batch_caps: &'a quota::BatchCaps,
    /// What ending a job writes (for claimed jobs that must be failed at once).
    pub(in crate::store) endings: &'a crate::store::Endings,
    /// Opens the sealed params of the jobs claimed beside submissions.
    pub(in crate::store) sealer: &'a crate::store::Sealer,
}

impl Submissions<'_> {
    /// Records and queues `job`, or finds the job its key already names. The
    /// unique constraint on (tenant, user, key) is the guarantee: a concurrent
    /// duplicate waits on the index until the first commits, then finds its row.
    #[tracing::instrument(skip_all, fields(tenant = %job.caller.tenant, job_type = job.job_type))]
    pub async fn submit(&self, job: &NewJob) -> Result<Submission, StoreError> {
        let answers = crate::store::retry_if_connection_lost(|| self.insert_or_find(std::slice::from_ref(job))).await?;
        answers.into_iter().next().unwrap_or_else(|| Err(StoreError::Corrupt("a submission went unanswered".into())))
    }

    /// [`Self::submit`] for several jobs in one statement, answered in their
    /// order. A key repeated among them makes one job: the statement skips
    /// the repeat, which then finds the job as any later submission would. If the statement fails
    /// for any reason but a lost connection (a deadlock with another process,
    /// a row the database refuses), each job is submitted alone, so one bad
    /// submission cannot fail the others.
    #[tracing::instrument(skip_all, fields(jobs = jobs.len()))]
    pub async fn submit_many(&self, jobs: &[NewJob]) -> Vec<Result<Submission, StoreError>> {
        match crate::store::retry_if_connection_lost(|| self.insert_or_find(jobs)).await {
            Ok(answers) => answers,
            Err(error) if error.is_connection_lost() => {
                let message = error.to_string();
                jobs.iter().map(|_| Err(StoreError::ConnectionLost(message.clone()))).collect()
            }
            Err(error) if jobs.len() == 1 => vec![Err(error)],
            Err(error) => {
                tracing::info!(%error, "a batch of submissions failed; submitting each alone");
                let mut answers = Vec::with_capacity(jobs.len());
                for job in jobs {
                    answers.push(self.submit(job).await);
                }
                answers
            }
        }
    }

    /// One [`INSERT_OR_FIND`] for `jobs`: an answer each, in their order.
    /// With quotas, [`INSERT_OR_FIND_CAPPED`]; near a cap, the check job by job.
    async fn insert_or_find(&self, jobs: &[NewJob]) -> Result<Vec<Result<Submission, StoreError>>, StoreError> {
        let client = self.pool.get().await?;
        let all: Vec<&NewJob> = jobs.iter().collect();
        let batch = InsertBatch::new(&all);
        if !self.quotas.enforced() {
            let rows = client.query(&client.prepare_cached(INSERT_OR_FIND).await?, &batch.params()).await?;
            return batch.answers(&client, rows).await;
        }
        let capped = client.prepare_cached(INSERT_OR_FIND_CAPPED).await?;
        match client.query(&capped, &batch.params_with(self.batch_caps)).await {
            Ok(rows) => batch.answers(&client, rows).await,
            Err(error) if quota::is_over_quota(&error) => self.insert_or_find_one_by_one(&client, jobs).await,
            Err(error) => Err(error.into()),
        }
    }

    /// The quota check job by job (`quota.rs`), then one [`INSERT_OR_FIND_CAPPED`]
    /// for the jobs it admits, in one transaction: an answer each, in their
    /// order. The check holds the tenants' quota locks, but a batch far from
    /// the caps records without them: if one took the room meanwhile, the
    /// trigger refuses the insert, and the check is made again on the new counts.
    pub(in crate::store) async fn insert_or_find_one_by_one(
        &self,
        client: &Client,
        jobs: &[NewJob],
    ) -> Result<Vec<Result<Submission, StoreError>>, StoreError> {
        let (insert, commit) =
            (client.prepare_cached(INSERT_OR_FIND_CAPPED).await?, client.prepare_cached(COMMIT).await?);
        for _ in 0..quota::RECHECKS {
            let admission = quota::begin_admitting(client, &submitters(jobs), self.quotas).await?;
            let admitted = admitted(jobs, &admission);
            let batch = InsertBatch::new(&admitted);
            // Pipelined: one wait for both. If the insert fails, the COMMIT rolls back.
            let (inserted, committed) = futures_util::future::join(
                client.query(&insert, &batch.params_with(self.batch_caps)),
                client.execute(&commit, &[]),
            )
            .await;
            match inserted {
                Err(error) if quota::is_over_quota(&error) => continue,
                inserted => {
                    let rows = inserted?;
                    committed?;
                    return Ok(answers(&admission, batch.answers(client, rows).await?));
                }
            }
        }
        Err(StoreError::Contended("the quota check was overtaken by other submissions too often".into()))
    }
}

/// Each caller's place among the same owner's (tenant and user) in a
/// batch, from 1: its job's turn is that many places after the owner's
/// first (see `errand_turn`). The batch is in key order, so an owner's jobs
/// are together.
fn nth_of_owner<'a>(callers: impl Iterator<Item = &'a Caller>) -> Vec<i32> {
    let mut previous: Option<&Caller> = None;
    let mut nth = 0;
    callers
        .map(|caller| {
            let same = previous.is_some_and(|p| p.tenant == caller.tenant && p.user == caller.user);
            nth = if same { nth + 1 } else { 1 };
            previous = Some(caller);
            nth
        })
        .collect()
}

/// A batch of submissions as the parameters of [`INSERT_OR_FIND`], rows in
/// key order (see there), and how its answers are read back.
pub(in crate::store) struct InsertBatch<'a> {
    jobs: &'a [&'a NewJob],
    ids: Vec<JobId>,
    fingerprints: Vec<Fingerprint>,
    id_column: Vec<uuid::Uuid>,
    tenants: Vec<&'a str>,
    users: Vec<&'a str>,
    emails: Vec<Option<&'a str>>,
    keys: Vec<&'a str>,
    prints: Vec<Vec<u8>>,
    types: Vec<&'a str>,
    params: Vec<&'a serde_json::Value>,
    attempts: Vec<i32>,
    priorities: Vec<i16>,
    /// Each job's place among its owner's in the batch, from 1.
    nth_of_owner: Vec<i32>,
    formats: Vec<Option<&'static str>>,
    admission_keys: Vec<Option<&'a str>>,
    start_after_ms: Vec<Option<f64>>,
    traces: Vec<Option<&'a str>>,
    locales: Vec<&'static str>,
    acted_by: Vec<Option<&'a str>>,
}

impl<'a> InsertBatch<'a> {
    pub(in crate::store) fn new(jobs: &'a [&'a NewJob]) -> Self {
        // Insert in key order (see INSERT_OR_FIND), answer in the callers' order.
        let mut order: Vec<usize> = (0..jobs.len()).collect();
        order.sort_by(|&a, &b| jobs[a].key_owner().cmp(&jobs[b].key_owner()));
        let ids: Vec<JobId> = jobs.iter().map(|_| JobId::new()).collect();
        let fingerprints: Vec<Fingerprint> = jobs.iter().map(|j| j.fingerprint()).collect();
        Self {
            jobs,
            id_column: order.iter().map(|&i| ids[i].0).collect(),
            tenants: order.iter().map(|&i| jobs[i].caller.tenant.as_str()).collect(),
            users: order.iter().map(|&i| jobs[i].caller.user.as_str()).collect(),
            emails: order.iter().map(|&i| jobs[i].caller.email.as_deref()).collect(),
            keys: order.iter().map(|&i| jobs[i].key.as_str()).collect(),
            prints: order.iter().map(|&i| fingerprints[i].0.to_vec()).collect(),
            types: order.iter().map(|&i| jobs[i].job_type.as_str()).collect(),
            params: order.iter().map(|&i| jobs[i].kept_params()).collect(),
            attempts: order.iter().map(|&i| jobs[i].max_attempts_sql()).collect(),
            priorities: order.iter().map(|&i| jobs[i].priority).collect(),
            nth_of_owner: nth_of_owner(order.iter().map(|&i| &jobs[i].caller)),
            formats: order.iter().map(|&i| jobs[i].format.map(ExportFormat::as_str)).collect(),
            admission_keys: order.iter().map(|&i| jobs[i].admission_key.as_ref().map(AdmissionKey::as_str)).collect(),
            start_after_ms: order.iter().map(|&i| jobs[i].start_after.map(super::millis)).collect(),
            traces: order.iter().map(|&i| jobs[i].trace.as_ref().map(TraceParent::as_str)).collect(),
            locales: order.iter().map(|&i| jobs[i].caller.locale.as_str()).collect(),
            acted_by: order.iter().map(|&i| jobs[i].caller.acted_by.as_ref().map(ServiceId::as_str)).collect(),
            ids,
            fingerprints,
        }
    }

    /// The parameters of [`INSERT_OR_FIND_CAPPED`]: [`Self::params`] and the caps.
    pub(in crate::store) fn params_with<'b>(
        &'b self,
        caps: &'b quota::BatchCaps,
    ) -> Vec<&'b (dyn tokio_postgres::types::ToSql + Sync)> {
        let mut params = self.params().to_vec();
        params.push(caps.as_param());
        params
    }

    pub(in crate::store) fn params(&self) -> [&(dyn tokio_postgres::types::ToSql + Sync); 17] {
        [
            &self.id_column,
            &self.tenants,
            &self.users,
            &self.emails,
            &self.keys,
            &self.prints,
            &self.types,
            &self.params,
            &self.attempts,
            &self.priorities,
            &self.nth_of_owner,
            &self.formats,
            &self.admission_keys,
            &self.start_after_ms,
            &self.traces,
            &self.locales,
            &self.acted_by,
        ]
    }

    /// An answer per submission, in the callers' order, from the statement's `rows`.
    pub(in crate::store) async fn answers(
        &self,
        client: &impl GenericClient,
        rows: Vec<Row>,
    ) -> Result<Vec<Result<Submission, StoreError>>, StoreError> {
        let mut by_input: HashMap<uuid::Uuid, Row> = HashMap::with_capacity(rows.len());
        for row in rows {
            by_input.insert(row.try_get("input_id")?, row);
        }
        let mut answers = Vec::with_capacity(self.jobs.len());
        for (i, job) in self.jobs.iter().enumerate() {
            let row = match by_input.remove(&self.ids[i].0) {
                Some(row) => row,
                // The key's row was committed after this statement's snapshot
                // was taken, by a concurrent request (the insert waited for
                // it) or by this statement for an earlier element: read it
                // with a fresh snapshot.
                None => {
                    let (tenant, user, key) = job.key_owner();
                    client.query_one(&client.prepare_cached(FIND_BY_KEY).await?, &[&tenant, &user, &key]).await?
                }
            };
            answers.push(submission_from_row(&row, job, &self.fingerprints[i]));
        }
        Ok(answers)
    }
}

/// The answer to `submitted` (whose `fingerprint` is given), from the row
/// its key names. The job's params are the submission's own: the same
/// fingerprint means the same params, and the row's may be sealed.
pub(in crate::store) fn submission_from_row(
    row: &Row,
    submitted: &NewJob,
    fingerprint: &Fingerprint,
) -> Result<Submission, StoreError> {
    let job = crate::domain::Job { params: submitted.params.clone(), ..job_from_row(row)? };
    let stored: &[u8] = row.try_get("fingerprint")?;
    let created: bool = row.try_get("created")?;
    Ok(match (created, stored == fingerprint.0) {
        (true, _) => Submission::Created(job),
        (false, true) => Submission::Replayed(job),
        (false, false) => Submission::KeyReused,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{TenantId, UserId};

    #[test]
    fn a_job_s_place_counts_only_its_own_owner_s_jobs_before_it() {
        let caller = |tenant: &str, user: &str| Caller {
            tenant: TenantId::parse(tenant).unwrap(),
            user: UserId::parse(user).unwrap(),
            email: None,
            zoneinfo: None,
            locale: crate::domain::Locale::default(),
            acted_by: None,
        };
        let callers =
            [caller("acme", "alice"), caller("acme", "alice"), caller("acme", "bob"), caller("globex", "bob")];
        assert_eq!(nth_of_owner(callers.iter()), [1, 2, 1, 1]);
    }
}
