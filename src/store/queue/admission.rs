//! Submissions of a job type with an admission key (`domain::admission`):
//! one unfinished job per key in a tenant and type. Each runs in a
//! transaction of its own that first takes the key's lock (advisory, key
//! space 0x65720005), so that two requests for one key, in any processes,
//! decide one after the other on what the other committed; the unique index
//! `job_queue_admission` is the guarantee under the lock. Not batched with
//! other submissions: the lock is the price of deciding on the key.

use deadpool_postgres::Transaction;

use crate::domain::{AdmissionKey, JobId, OnConflict};
use crate::store::StoreError;
use crate::store::jobs::CallerJobs;
use crate::store::queue::cancel::{CancelledBy, LOCK_OWN, cancel_locked};
use crate::store::queue::submit::{
    FIND_BY_KEY, INSERT_OR_FIND, INSERT_OR_FIND_CAPPED, InsertBatch, NewJob, Submission, Submissions, admitted,
    answers, submission_from_row, submitters,
};
use crate::store::queue::{millis, quota};

/// Takes the lock of admission key `$3` of type `$2` in tenant `$1` until
/// the transaction ends.
pub(in crate::store) const LOCK_KEY: &str =
    "SELECT pg_advisory_xact_lock(1701969925, hashtext($1 || chr(31) || $2 || chr(31) || $3))";

/// The unfinished job holding admission key `$3` of type `$2` in tenant
/// `$1`, its queue row locked (a claim of it waits, and then finds it
/// moved or taken).
const HOLDER: &str = "
SELECT q.job_id, q.user_id, q.state IN ('available', 'retryable') AS waiting
FROM job_queue q
WHERE q.tenant_id = $1 AND q.job_type = $2 AND q.admission_key = $3
FOR UPDATE";

/// Debounces the waiting job `$1`: it starts `$2` ms from now, but no later
/// than `$3` ms after it was first asked for, with the params `$4` of the
/// latest request. (The queue row's `run_at` is the live one while the job
/// is unfinished: `jobs_live`.)
const DEBOUNCE: &str = "
WITH moved AS (
    UPDATE job_queue q SET run_at = least(now() + $2 * interval '1 millisecond',
                                          j.created_at + $3 * interval '1 millisecond')
    FROM jobs j
    WHERE q.job_id = $1 AND j.id = q.job_id AND q.state IN ('available', 'retryable')
    RETURNING q.job_id
)
UPDATE jobs j SET params = $4 FROM moved m WHERE j.id = m.job_id";

/// The running job `$1` gives up its admission key (it goes on running; a
/// new job takes the key).
pub(in crate::store) const RELEASE_KEY: &str = "UPDATE job_queue SET admission_key = NULL WHERE job_id = $1";

/// What a request's transaction decided.
enum Decided {
    Answered(Box<Submission>),
    /// The caller's job `0`, met as the function says (joined, debounced).
    Met(JobId, fn(crate::domain::Job) -> Submission),
}

/// What the key's unfinished job is to this request.
struct Holder {
    job: JobId,
    /// Its owner is the caller (a key without `{user}` may be a colleague's).
    own: bool,
    waiting: bool,
}

impl Submissions<'_> {
    /// Records `job` (whose `admission_key` is set) unless an unfinished job
    /// of its tenant and type holds the key: then does what `on_conflict`
    /// says. A retry of the same request (its idempotency key) is answered
    /// as any replay, first. A colleague's job holding the key (a template
    /// without `{user}`) is never joined, debounced or cancelled for the
    /// caller: the answer is [`Submission::AdmissionConflict`].
    #[tracing::instrument(skip_all, fields(tenant = %job.caller.tenant, job_type = job.job_type))]
    pub async fn submit_admitted(&self, job: &NewJob, on_conflict: OnConflict) -> Result<Submission, StoreError> {
        // The job met is read once the deciding connection is back in the
        // pool: a request never holds two, which many requests for one key
        // (each holding one while it waits for the key's lock) would exhaust.
        match self.decide(job, on_conflict).await? {
            Decided::Answered(submission) => Ok(*submission),
            Decided::Met(id, answer) => {
                let found = CallerJobs::new(
                    crate::store::TenantPool::new(self.pool, &job.caller.tenant),
                    &job.caller,
                    self.sealer,
                )
                .get(id)
                .await?;
                found.map(answer).ok_or_else(|| StoreError::Corrupt(format!("job {id} vanished after it was joined")))
            }
        }
    }

    async fn decide(&self, job: &NewJob, on_conflict: OnConflict) -> Result<Decided, StoreError> {
        let key = job.admission_key.as_ref().ok_or_else(|| StoreError::Corrupt("no admission key".into()))?;
        let mut client = self.pool.get().await?;
        for _ in 0..quota::RECHECKS {
            let tx = client.transaction().await?;
            let (tenant, user, idempotency) = job.key_owner();
            tx.execute(&tx.prepare_cached(LOCK_KEY).await?, &[&tenant, &job.job_type, &key.as_str()]).await?;
            // A retry of the same request (its idempotency key) is a replay, first.
            let find = tx.prepare_cached(FIND_BY_KEY).await?;
            if let Some(row) = tx.query_opt(&find, &[&tenant, &user, &idempotency]).await? {
                return submission_from_row(&row, job, &job.fingerprint())
                    .map(|answer| Decided::Answered(Box::new(answer)));
            }
            let holder = self.holder(&tx, job, key).await?;
            let mut job = job.clone();
            match (holder, on_conflict) {
                (Some(holder), _) if !holder.own => {
                    return Ok(Decided::Answered(Box::new(Submission::AdmissionConflict(holder.job))));
                }
                (Some(holder), OnConflict::Reject) => {
                    return Ok(Decided::Answered(Box::new(Submission::AdmissionConflict(holder.job))));
                }
                (Some(holder), OnConflict::Join) => return Ok(Decided::Met(holder.job, Submission::Joined)),
                (Some(holder), OnConflict::Debounce { debounce, max_delay }) if holder.waiting => {
                    let (wait, longest) = (millis(debounce), millis(max_delay));
                    tx.execute(
                        &tx.prepare_cached(DEBOUNCE).await?,
                        &[&holder.job.0, &wait, &longest, job.kept_params()],
                    )
                    .await?;
                    tx.commit().await?;
                    return Ok(Decided::Met(holder.job, Submission::Debounced));
                }
                (Some(holder), OnConflict::Debounce { debounce, .. }) => {
                    tx.execute(&tx.prepare_cached(RELEASE_KEY).await?, &[&holder.job.0]).await?;
                    job.start_after = Some(debounce);
                }
                (Some(holder), OnConflict::Supersede) => {
                    tx.execute(&tx.prepare_cached(RELEASE_KEY).await?, &[&holder.job.0]).await?;
                    self.supersede(&tx, &job, holder.job).await?;
                }
                (None, OnConflict::Debounce { debounce, .. }) => job.start_after = Some(debounce),
                (None, _) => {}
            }
            // (None: the quota check was overtaken by a batch recorded without
            // the quota locks; checked again.)
            if let Some(submission) = self.record(&tx, &job).await? {
                if matches!(submission, Submission::Created(_)) {
                    tx.commit().await?;
                }
                return Ok(Decided::Answered(Box::new(submission)));
            }
        }
        Err(StoreError::Contended("the quota check was overtaken by other submissions too often".into()))
    }

    async fn holder(
        &self,
        tx: &Transaction<'_>,
        job: &NewJob,
        key: &AdmissionKey,
    ) -> Result<Option<Holder>, StoreError> {
        let row = tx
            .query_opt(&tx.prepare_cached(HOLDER).await?, &[&job.caller.tenant.as_str(), &job.job_type, &key.as_str()])
            .await?;
        row.map(|row| {
            let owner: String = row.try_get("user_id")?;
            Ok(Holder {
                job: JobId(row.try_get("job_id")?),
                own: owner == job.caller.user.as_str(),
                waiting: row.try_get("waiting")?,
            })
        })
        .transpose()
    }

    /// Records `job` in `tx` (its quotas checked under their locks): the
    /// submission, `Created` unless over a quota; `None` if the check was
    /// overtaken (see `Submissions::insert_or_find_one_by_one`).
    async fn record(&self, tx: &Transaction<'_>, job: &NewJob) -> Result<Option<Submission>, StoreError> {
        let jobs = std::slice::from_ref(job);
        let recorded = if self.quotas.enforced() {
            let admission = quota::admit_in(tx, &submitters(jobs), self.quotas).await?;
            let admitted = admitted(jobs, &admission);
            let batch = InsertBatch::new(&admitted);
            let insert = tx.prepare_cached(INSERT_OR_FIND_CAPPED).await?;
            let rows = match tx.query(&insert, &batch.params_with(self.batch_caps)).await {
                Err(error) if quota::is_over_quota(&error) => return Ok(None),
                rows => rows?,
            };
            answers(&admission, batch.answers(tx, rows).await?)
        } else {
            let all = [job];
            let batch = InsertBatch::new(&all);
            let rows = tx.query(&tx.prepare_cached(INSERT_OR_FIND).await?, &batch.params()).await?;
            batch.answers(tx, rows).await?
        };
        let answer = recorded.into_iter().next();
        answer.unwrap_or_else(|| Err(StoreError::Corrupt("a submission went unanswered".into()))).map(Some)
    }

    /// Cancels the caller's job `id`, which a newer request supersedes: a
    /// waiting one ends at once, a running one is asked to stop (its owner's
    /// streams hear `job_superseded`; no email, nothing in the feed).
    async fn supersede(&self, tx: &Transaction<'_>, job: &NewJob, id: JobId) -> Result<(), StoreError> {
        let (tenant, user) = (job.caller.tenant.as_str(), job.caller.user.as_str());
        cancel_locked(tx, LOCK_OWN, &[&tenant, &user, &id.0], id, CancelledBy::Superseded, None).await?;
        Ok(())
    }
}
