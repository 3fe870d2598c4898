//! Reads and submissions of one caller's jobs: tenant and user are bound into
//! every statement from the [`Caller`], never from request input.

use deadpool_postgres::Pool;
use tokio_postgres::Row;
use uuid::Uuid;

use super::StoreError;
use crate::domain::{Caller, Fingerprint, IdempotencyKey, Job, JobId, JobState, JobStatus, TenantId, UserId};

/// The columns every caller-facing read selects, in the order [`job_from_row`] reads them.
const JOB_COLUMNS: &str = "id, tenant_id, user_id, job_type, params, state::text, attempt, max_attempts, \
     run_at, result, error_message, created_at, finished_at";
const JOB_COLUMN_COUNT: usize = 13;

/// What became of a submission.
#[derive(Debug)]
pub enum Submission {
    /// A new job was recorded and queued.
    Created(Job),
    /// The key was used before for the same request: here is that job.
    Replayed(Job),
    /// The key was used before for a different request (type or params).
    KeyReused,
}

/// Filters and page of a job list.
#[derive(Debug, Clone, Default)]
pub struct JobFilter {
    pub status: Option<JobStatus>,
    pub job_type: Option<String>,
    /// Only jobs older than this one (the previous page's last job).
    pub before: Option<JobId>,
    pub limit: u32,
}

/// One page of a job list, newest first.
#[derive(Debug)]
pub struct JobPage {
    pub jobs: Vec<Job>,
    /// The last job of this page, when there may be more.
    pub next_before: Option<JobId>,
}

/// The jobs of one user of one tenant.
pub struct CallerJobs<'a> {
    pool: &'a Pool,
    caller: &'a Caller,
}

impl<'a> CallerJobs<'a> {
    pub(super) fn new(pool: &'a Pool, caller: &'a Caller) -> Self {
        Self { pool, caller }
    }

    /// Records and queues a job under `key`, or finds the job the key already
    /// names. The unique constraint on (tenant, user, key) is the guarantee:
    /// a concurrent duplicate waits on the index until the first commits,
    /// then finds its row.
    #[tracing::instrument(skip_all, fields(tenant = %self.caller.tenant, job_type))]
    pub async fn submit(
        &self,
        key: &IdempotencyKey,
        job_type: &str,
        params: &serde_json::Value,
        max_attempts: u32,
    ) -> Result<Submission, StoreError> {
        let fingerprint = Fingerprint::of(job_type, params);
        let client = self.pool.get().await?;
        // One round trip for both common cases: the insert, or (when the key
        // exists) the existing row, read in the same statement.
        let insert_or_find = format!(
            "WITH inserted AS ( \
                 INSERT INTO jobs (id, tenant_id, user_id, user_email, idempotency_key, fingerprint, job_type, \
                                   params, max_attempts) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
                 ON CONFLICT (tenant_id, user_id, idempotency_key) DO NOTHING \
                 RETURNING {JOB_COLUMNS}, fingerprint, true AS created \
             ) \
             SELECT * FROM inserted \
             UNION ALL \
             SELECT {JOB_COLUMNS}, fingerprint, false FROM jobs \
             WHERE tenant_id = $2 AND user_id = $3 AND idempotency_key = $5 AND NOT EXISTS (SELECT 1 FROM inserted)"
        );
        let statement = client.prepare_cached(&insert_or_find).await?;
        let max_attempts = i32::try_from(max_attempts).unwrap_or(i32::MAX);
        let (tenant, user) = (self.caller.tenant.as_str(), self.caller.user.as_str());
        let row = client
            .query_opt(
                &statement,
                &[
                    &JobId::new().0,
                    &tenant,
                    &user,
                    &self.caller.email,
                    &key.as_str(),
                    &&fingerprint.0[..],
                    &job_type,
                    params,
                    &max_attempts,
                ],
            )
            .await?;
        let row = match row {
            Some(row) => row,
            None => {
                // The key's row was committed by a concurrent request after this
                // statement's snapshot was taken (the insert waited for it):
                // read it with a fresh snapshot.
                let find = format!(
                    "SELECT {JOB_COLUMNS}, fingerprint, false FROM jobs \
                     WHERE tenant_id = $1 AND user_id = $2 AND idempotency_key = $3"
                );
                let statement = client.prepare_cached(&find).await?;
                client.query_one(&statement, &[&tenant, &user, &key.as_str()]).await?
            }
        };
        let job = job_from_row(&row)?;
        let stored: &[u8] = row.try_get(JOB_COLUMN_COUNT)?;
        let created: bool = row.try_get(JOB_COLUMN_COUNT + 1)?;
        Ok(match (created, stored == fingerprint.0) {
            (true, _) => Submission::Created(job),
            (false, true) => Submission::Replayed(job),
            (false, false) => Submission::KeyReused,
        })
    }

    /// The caller's job `id`, or `None` whether it is missing or someone else's.
    pub async fn get(&self, id: JobId) -> Result<Option<Job>, StoreError> {
        let client = self.pool.get().await?;
        let sql = format!("SELECT {JOB_COLUMNS} FROM jobs WHERE tenant_id = $1 AND user_id = $2 AND id = $3");
        let row = client.query_opt(&sql, &[&self.caller.tenant.as_str(), &self.caller.user.as_str(), &id.0]).await?;
        row.as_ref().map(job_from_row).transpose()
    }

    /// A page of the caller's jobs, newest first (keyset pagination on the v7 id).
    pub async fn list(&self, filter: &JobFilter) -> Result<JobPage, StoreError> {
        let client = self.pool.get().await?;
        let states: Option<Vec<&str>> = filter.status.map(|s| s.states().iter().map(|state| state.as_sql()).collect());
        let sql = format!(
            "SELECT {JOB_COLUMNS} FROM jobs \
             WHERE tenant_id = $1 AND user_id = $2 \
               AND ($3::text[] IS NULL OR state::text = ANY($3)) \
               AND ($4::text IS NULL OR job_type = $4) \
               AND ($5::uuid IS NULL OR id < $5) \
             ORDER BY id DESC LIMIT $6"
        );
        // One extra row tells whether another page follows.
        let fetch = i64::from(filter.limit) + 1;
        let statement = client.prepare_cached(&sql).await?;
        let rows = client
            .query(
                &statement,
                &[
                    &self.caller.tenant.as_str(),
                    &self.caller.user.as_str(),
                    &states,
                    &filter.job_type,
                    &filter.before.map(|id| id.0),
                    &fetch,
                ],
            )
            .await?;
        let mut jobs = rows.iter().map(job_from_row).collect::<Result<Vec<_>, _>>()?;
        let next_before = if jobs.len() > filter.limit as usize {
            jobs.truncate(filter.limit as usize);
            jobs.last().map(|job| job.id)
        } else {
            None
        };
        Ok(JobPage { jobs, next_before })
    }
}

fn job_from_row(row: &Row) -> Result<Job, StoreError> {
    let corrupt = |what: String| StoreError::Corrupt(what);
    let state: String = row.try_get(5)?;
    Ok(Job {
        id: JobId(row.try_get::<_, Uuid>(0)?),
        tenant: TenantId::parse(row.try_get::<_, String>(1)?).map_err(|e| corrupt(e.to_string()))?,
        user: UserId::parse(row.try_get::<_, String>(2)?).map_err(|e| corrupt(e.to_string()))?,
        job_type: row.try_get(3)?,
        params: row.try_get(4)?,
        state: state.parse::<JobState>().map_err(|e| corrupt(e.to_string()))?,
        attempt: row.try_get(6)?,
        max_attempts: row.try_get(7)?,
        run_at: row.try_get(8)?,
        result: row.try_get(9)?,
        error_message: row.try_get(10)?,
        created_at: row.try_get(11)?,
        finished_at: row.try_get(12)?,
    })
}
