//! One caller's batches (see `domain::batch`, and `batches` in
//! `migrations/V1__baseline.sql`): record a batch with all its children in
//! one statement, read it, cancel the children that have not started, read
//! its failed children. Tenant and user are bound into every statement from
//! the [`Caller`]; the counts are kept by the database's trigger as children
//! end, never written here.

use chrono::{DateTime, Utc};
use futures_util::{Stream, TryStreamExt};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::StoreError;
use crate::domain::{BatchCounts, BatchId, Caller, Fingerprint, IdempotencyKey, JobId, QuotaExceeded, TraceParent};
use crate::store::queue::quota::{self, Submitter};

/// Records batch $1 of $2's user $3 ($4: their email) under key $5
/// (fingerprint $6) of type $7, with a child per item of $8 (fingerprints
/// $9), each of $10 attempts at most, unless the key already names a batch.
/// The quota caps $11 (empty: none) are checked by the counting trigger on
/// the children queued, as for any submission (`submit.rs`): a batch over a
/// cap records nothing. The children carry the request's trace $13. Its end's
/// email: the category $14, the email default $15 (NULL: none), required $16.
/// The owner's language $17 is the batch's and its children's, and so is
/// the service $18 that asked for them (NULL: the owner).
/// Answers the batch if it was recorded.
const CREATE: &str = "
WITH batch AS (
    INSERT INTO batches (id, tenant_id, user_id, user_email, idempotency_key, fingerprint, job_type, total,
                         category, email_default, email_required, locale, acted_by)
    SELECT $1, $2, $3, $4, $5, $6, $7, cardinality($8::jsonb[]), $14, $15, $16, $17, $18
    WHERE (SELECT set_config('errand.quota_caps', $11::text, true)) IS NOT NULL
    ON CONFLICT (tenant_id, user_id, idempotency_key) DO NOTHING
    RETURNING id, tenant_id, user_id, user_email, job_type, total, completed, failed, cancelled, created_at,
              finished_at, locale, acted_by
), children AS (
    INSERT INTO jobs (id, tenant_id, user_id, user_email, idempotency_key, fingerprint, job_type, params, max_attempts,
                      batch_id, priority, traceparent, locale, acted_by)
    SELECT errand_uuid_v7(), b.tenant_id, b.user_id, b.user_email, 'batch:' || b.id || ':' || i.n, i.fingerprint,
           b.job_type, i.params, $10, b.id, $12::smallint, $13::text, b.locale, b.acted_by
    FROM batch b, unnest($8::jsonb[], $9::bytea[]) WITH ORDINALITY AS i (params, fingerprint, n)
    ORDER BY i.n
    RETURNING id, tenant_id, user_id, job_type, run_at, priority
), line AS MATERIALIZED (
    -- One owner and priority: the line's place is read once (joined to the
    -- children, the probes ran once per child: 11 s for 10,000).
    SELECT t.turn FROM batch b CROSS JOIN LATERAL errand_turn(b.tenant_id, b.user_id) t
), queued AS (
    INSERT INTO job_queue (job_id, tenant_id, user_id, job_type, run_at, priority, turn)
    SELECT c.id, c.tenant_id, c.user_id, c.job_type, c.run_at, c.priority, l.turn + row_number() OVER (ORDER BY c.id) - 1
    FROM line l, children c
)
SELECT id, job_type, total, completed, failed, cancelled, created_at, finished_at FROM batch";

/// The caller's batch: `$1` tenant, `$2` user, `$3` batch.
const GET_OWN: &str = "
SELECT id, job_type, total, completed, failed, cancelled, created_at, finished_at, fingerprint
FROM batches
WHERE tenant_id = $1 AND user_id = $2 AND id = $3";

/// The caller's batch that key `$3` names, read with a fresh snapshot (a
/// concurrent submission of the key may have committed it after `CREATE`'s).
const FIND_BY_KEY: &str = "
SELECT id, job_type, total, completed, failed, cancelled, created_at, finished_at, fingerprint
FROM batches
WHERE tenant_id = $1 AND user_id = $2 AND idempotency_key = $3";

/// The caller's batches still running.
const OPEN: &str = "
SELECT id, job_type, total, completed, failed, cancelled, created_at, finished_at
FROM batches
WHERE tenant_id = $1 AND user_id = $2 AND finished_at IS NULL";

/// Cancels the caller's batch's children that have not started: `$1`
/// tenant, `$2` user, `$3` batch (`$4`: the notification rules, for the
/// children's categories). Their ends are counted on the batch by
/// the trigger; each child's webhook deliveries are queued as for any end.
const CANCEL_WAITING: &str = "
WITH dequeued AS (
    DELETE FROM job_queue q
    USING jobs j
    WHERE j.id = q.job_id AND j.batch_id = $3 AND j.tenant_id = $1 AND j.user_id = $2
      AND q.state IN ('available', 'retryable')
    RETURNING q.job_id, q.attempt
), finished AS (
    UPDATE jobs j
    SET state = 'cancelled', attempt = d.attempt, finished_at = clock_timestamp(),
        error_message = 'cancelled by its owner, with its batch'
    FROM dequeued d
    WHERE j.id = d.job_id
    RETURNING j.id, j.tenant_id, j.run, j.job_type
), hooked AS (  -- the tenant's webhook deliveries (see errand_queue_webhooks)
    SELECT errand_queue_webhooks(array_agg(tenant_id), array_agg(id), array_agg(run), array_agg('cancelled'::text),
                                 array_agg(errand_webhook_category(job_type, $4)))
    FROM finished
)
SELECT (SELECT count(*) FROM finished) AS cancelled, (SELECT count(*) FROM hooked) AS hooked";

/// The children of the caller's batch `$3` that did not complete, in order.
const NOT_COMPLETED: &str = "
SELECT j.id, j.state::text AS state, j.error_message, j.params
FROM jobs j JOIN batches b ON b.id = j.batch_id
WHERE b.tenant_id = $1 AND b.user_id = $2 AND b.id = $3 AND j.state IN ('failed', 'cancelled') AND j.id > $4
ORDER BY j.id
LIMIT $5";

/// Children a report page holds. Each page is read on a checkout of its own
/// that ends before the page is sent, so a reader who stops reading holds no
/// connection, and at most a page of params (64 KiB each) in memory.
const REPORT_PAGE: i64 = 50;

/// A batch as its owner sees it.
#[derive(Debug, Clone)]
pub struct Batch {
    pub id: BatchId,
    pub job_type: String,
    pub counts: BatchCounts,
    pub created_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// What became of a batch's submission.
#[derive(Debug)]
pub enum BatchSubmission {
    Created(Batch),
    /// The key was used before for the same items: here is that batch.
    Replayed(Batch),
    /// The key was used before for other items or another type.
    KeyReused,
    /// Its children would take the caller over a quota: nothing was recorded.
    OverQuota(QuotaExceeded),
}

/// A batch to record, its items already checked against its type.
#[derive(Debug)]
pub struct NewBatch {
    pub key: IdempotencyKey,
    pub job_type: String,
    pub items: Vec<serde_json::Value>,
    pub max_attempts: u32,
    /// The children's (a bulk class's, see `domain::priority`).
    pub priority: i16,
    /// The trace of the request that recorded it: its children's.
    pub trace: Option<TraceParent>,
}

/// A child that did not complete, for the batch's report.
#[derive(Debug)]
pub struct UnfinishedChild {
    pub job: JobId,
    /// `failed` or `cancelled`.
    pub state: String,
    pub error_message: Option<String>,
    pub params: serde_json::Value,
}

/// The batches of one user of one tenant.
pub struct CallerBatches<'a> {
    pub(super) pool: crate::store::TenantPool,
    pub(super) caller: &'a Caller,
    pub(super) batch_caps: &'a quota::BatchCaps,
    pub(super) quotas: &'a crate::domain::Quotas,
    pub(super) rules: &'a crate::domain::NotificationRules,
    /// Whether a batch's end is emailed (`[email] enabled`), as its owner's choice allows.
    pub(super) email_outbox: bool,
    /// Seals the children's params (of a type that keeps them sealed), and opens them.
    pub(super) sealer: &'a crate::store::Sealer,
}

impl CallerBatches<'_> {
    fn owner(&self) -> (&str, &str) {
        (self.caller.tenant.as_str(), self.caller.user.as_str())
    }

    /// Records `batch` and queues its children in one statement, or finds
    /// the batch its key already names (the unique key is the guarantee, as
    /// for jobs).
    pub async fn submit(&self, batch: &NewBatch) -> Result<BatchSubmission, StoreError> {
        let prints: Vec<Fingerprint> = batch.items.iter().map(|item| Fingerprint::of(&batch.job_type, item)).collect();
        let fingerprint = Fingerprint::of_batch(&batch.job_type, &prints);
        let prints: Vec<&[u8]> = prints.iter().map(|p| p.0.as_slice()).collect();
        let id = BatchId(uuid::Uuid::now_v7());
        let (tenant, user) = self.owner();
        let caps = if self.quotas.enforced() { self.batch_caps.as_text() } else { "" };
        let attempts = i32::try_from(batch.max_attempts).unwrap_or(i32::MAX);
        let trace = batch.trace.as_ref().map(TraceParent::as_str);
        let mut items = Vec::with_capacity(batch.items.len());
        for item in &batch.items {
            items.push(self.sealer.seal(tenant, &batch.job_type, item).await?.unwrap_or_else(|| item.clone()));
        }
        // Its end's email as the configuration has it now (see `batches.email_default`).
        let category = self.rules.category_of(&batch.job_type);
        let email_default = (self.email_outbox && self.caller.email.is_some()).then(|| self.rules.email_default());
        let required = self.rules.is_required(category);
        let locale = self.caller.locale.as_str();
        let acted_by = self.caller.acted_by.as_ref().map(crate::domain::ServiceId::as_str);
        let params: [&(dyn ToSql + Sync); 18] = [
            &id.0,
            &tenant,
            &user,
            &self.caller.email,
            &batch.key.as_str(),
            &fingerprint.0.as_slice(),
            &batch.job_type,
            &items,
            &prints,
            &attempts,
            &caps,
            &batch.priority,
            &trace,
            &category,
            &email_default,
            &required,
            &locale,
            &acted_by,
        ];
        let client = self.pool.get().await?;
        match client.query_opt(&client.prepare_cached(CREATE).await?, &params).await {
            Ok(Some(created)) => {
                client.commit().await?;
                return Ok(BatchSubmission::Created(batch_from_row(&created)?));
            }
            Ok(None) => {}
            Err(error) if quota::is_over_quota(&error) => {
                drop(client);
                return self.over_quota(batch).await;
            }
            Err(error) => return Err(error.into()),
        }
        // The key named a batch already (committed by now: the insert waited for it).
        let row = client
            .query_one(&client.prepare_cached(FIND_BY_KEY).await?, &[&tenant, &user, &batch.key.as_str()])
            .await?;
        let stored: &[u8] = row.try_get("fingerprint")?;
        Ok(if stored == fingerprint.0.as_slice() {
            BatchSubmission::Replayed(batch_from_row(&row)?)
        } else {
            BatchSubmission::KeyReused
        })
    }

    /// Which cap a batch the counting trigger refused would go over: the
    /// quota check job by job (`quota.rs`) on its children, rolled back.
    async fn over_quota(&self, batch: &NewBatch) -> Result<BatchSubmission, StoreError> {
        let (tenant, user) = self.owner();
        let keys: Vec<String> = (1..=batch.items.len()).map(|n| format!("batch item {n}")).collect();
        let children: Vec<Submitter<'_>> =
            keys.iter().map(|key| Submitter { tenant, user, key, job_type: &batch.job_type }).collect();
        let client = self.pool.get().await?;
        let admission = quota::admit_in(&*client, &children, self.quotas).await?;
        drop(client); // rolled back: the check keeps nothing
        let refused = admission.refused.into_iter().flatten().next();
        // Room freed since the trigger refused: the caller may try again at once.
        refused.map(BatchSubmission::OverQuota).ok_or_else(|| {
            StoreError::Contended("the quota check and the batch disagreed; try again with the same key".into())
        })
    }

    /// The caller's batch, if it is theirs.
    pub async fn get(&self, id: BatchId) -> Result<Option<Batch>, StoreError> {
        let client = self.pool.get().await?;
        let (tenant, user) = self.owner();
        let row = client.query_opt(&client.prepare_cached(GET_OWN).await?, &[&tenant, &user, &id.0]).await?;
        row.as_ref().map(batch_from_row).transpose()
    }

    /// The caller's batches still running (their live streams' progress).
    pub async fn open(&self) -> Result<Vec<Batch>, StoreError> {
        let client = self.pool.get().await?;
        let (tenant, user) = self.owner();
        let rows = client.query(&client.prepare_cached(OPEN).await?, &[&tenant, &user]).await?;
        rows.iter().map(batch_from_row).collect()
    }

    /// Cancels the children of the caller's batch that have not started
    /// (running ones finish); answers the batch after, and how many it
    /// cancelled, or `None` if the caller has no such batch.
    pub async fn cancel(&self, id: BatchId) -> Result<Option<(Batch, i64)>, StoreError> {
        let client = self.pool.get().await?;
        let (tenant, user) = self.owner();
        let cancelled: i64 = client
            .query_one(&client.prepare_cached(CANCEL_WAITING).await?, &[&tenant, &user, &id.0, self.rules.as_sql()])
            .await?
            .try_get(0)?;
        client.commit().await?;
        Ok(self.get(id).await?.map(|batch| (batch, cancelled)))
    }

    /// The children of the caller's batch that failed or were cancelled, in
    /// order, read page by page as the stream is polled (a report may list
    /// thousands, and its reader may stop reading).
    pub fn not_completed(&self, id: BatchId) -> impl Stream<Item = Result<UnfinishedChild, StoreError>> + use<> {
        let (pool, sealer) = (self.pool.clone(), self.sealer.clone());
        let (tenant, user) = (self.caller.tenant.to_string(), self.caller.user.to_string());
        let pages = futures_util::stream::try_unfold(Some(uuid::Uuid::nil()), move |after| {
            let (pool, sealer, tenant, user) = (pool.clone(), sealer.clone(), tenant.clone(), user.clone());
            async move {
                let Some(after) = after else { return Ok(None) };
                let client = pool.get().await?;
                let statement = client.prepare_cached(NOT_COMPLETED).await?;
                let rows = client.query(&statement, &[&tenant, &user, &id.0, &after, &REPORT_PAGE]).await?;
                drop(client);
                let mut children = rows.iter().map(child_from_row).collect::<Result<Vec<_>, _>>()?;
                for child in &mut children {
                    sealer.open_for_view(&tenant, &mut child.params, crate::domain::sealing::Purpose::Params).await?;
                }
                let full = i64::try_from(children.len()).is_ok_and(|n| n == REPORT_PAGE);
                let next = children.last().filter(|_| full).map(|child| child.job.0);
                Ok::<_, StoreError>(Some((
                    futures_util::stream::iter(children.into_iter().map(Ok::<_, StoreError>)),
                    next,
                )))
            }
        });
        pages.try_flatten()
    }
}

fn batch_from_row(row: &Row) -> Result<Batch, StoreError> {
    let count =
        |column: &str| -> Result<u32, StoreError> { Ok(u32::try_from(row.try_get::<_, i32>(column)?).unwrap_or(0)) };
    Ok(Batch {
        id: BatchId(row.try_get("id")?),
        job_type: row.try_get("job_type")?,
        counts: BatchCounts {
            total: count("total")?,
            completed: count("completed")?,
            failed: count("failed")?,
            cancelled: count("cancelled")?,
        },
        created_at: row.try_get("created_at")?,
        finished_at: row.try_get("finished_at")?,
    })
}

fn child_from_row(row: &Row) -> Result<UnfinishedChild, StoreError> {
    Ok(UnfinishedChild {
        job: JobId(row.try_get("id")?),
        state: row.try_get("state")?,
        error_message: row.try_get("error_message")?,
        params: row.try_get("params")?,
    })
}
