//! The JobSupervisor's batch requests: submit a batch (its items checked
//! against the type, as a job's params are), read one, cancel its waiting
//! children. Each is checked against the supervisor's tenant, as jobs are.

use actix::prelude::*;
use serde_json::Value;

use crate::actors::running::supervisor::{JobSupervisor, SubmitError};
use crate::domain::{BatchId, Caller, IdempotencyKey};
use crate::jobs::ParamsError;
use crate::store::{Batch, BatchSubmission, NewBatch, StoreError, UnfinishedChild};

/// A batch report's rows, read from the database as they are sent.
pub type ReportRows = futures_util::stream::BoxStream<'static, Result<UnfinishedChild, StoreError>>;

/// Record a batch for the caller, or find the one its key already names.
#[derive(Debug, Clone, Message)]
#[rtype(result = "Result<BatchSubmission, SubmitError>")]
pub struct SubmitBatch {
    pub caller: Caller,
    pub key: IdempotencyKey,
    pub job_type: String,
    pub items: Vec<Value>,
}

/// The caller's batch, if it is theirs.
#[derive(Debug, Clone, Message)]
#[rtype(result = "Result<Option<Batch>, StoreError>")]
pub struct GetBatch {
    pub caller: Caller,
    pub id: BatchId,
}

/// Cancel the children of the caller's batch that have not started: the
/// batch after, and how many were cancelled (`None`: no such batch).
#[derive(Debug, Clone, Message)]
#[rtype(result = "Result<Option<(Batch, i64)>, StoreError>")]
pub struct CancelBatch {
    pub caller: Caller,
    pub id: BatchId,
}

/// The children of the caller's batch that did not complete (`None`: no such batch).
#[derive(Debug, Clone, Message)]
#[rtype(result = "Result<Option<ReportRows>, StoreError>")]
pub struct BatchReport {
    pub caller: Caller,
    pub id: BatchId,
}

impl Handler<SubmitBatch> for JobSupervisor {
    type Result = ResponseFuture<Result<BatchSubmission, SubmitError>>;

    fn handle(&mut self, msg: SubmitBatch, _ctx: &mut Self::Context) -> Self::Result {
        let checked = self.check_tenant(&msg.caller);
        let job_type = self.job_type(&msg.job_type);
        let store = self.deps.store.clone();
        Box::pin(async move {
            checked?;
            let job_type = job_type.ok_or_else(|| SubmitError::UnknownType(msg.job_type.clone()))?;
            for (i, item) in msg.items.iter().enumerate() {
                // Named by where it is in the request body: `/items/3/to`.
                job_type.validate_params(item).map_err(|ParamsError { field, reason }| {
                    let field = format!("/items/{i}{}", field.trim_end_matches('/'));
                    SubmitError::InvalidParams(ParamsError { field, reason })
                })?;
            }
            let batch = NewBatch {
                key: msg.key,
                job_type: job_type.name.clone(),
                items: msg.items,
                max_attempts: job_type.retry.max_attempts,
                priority: crate::domain::priority(crate::domain::Origin::Bulk, job_type.priority, 0),
            };
            let submission = store.batches_for(&msg.caller).submit(&batch).await?;
            let outcome = match &submission {
                BatchSubmission::Created(_) => "created",
                BatchSubmission::Replayed(_) => "replayed",
                BatchSubmission::KeyReused => "key_reused",
                BatchSubmission::OverQuota(_) => "over_quota",
            };
            metrics::counter!("errand_batches_submitted_total", "outcome" => outcome).increment(1);
            if matches!(submission, BatchSubmission::Created(_)) {
                // Claims waiting on any process (external workers' included) look at once.
                if let Err(error) = store.queue().announce_work().await {
                    tracing::warn!(%error, "could not announce a batch; waiting claims look again within a second");
                }
            }
            Ok(submission)
        })
    }
}

impl Handler<GetBatch> for JobSupervisor {
    type Result = ResponseFuture<Result<Option<Batch>, StoreError>>;

    fn handle(&mut self, msg: GetBatch, _ctx: &mut Self::Context) -> Self::Result {
        let checked = self.check_tenant(&msg.caller);
        let store = self.deps.store.clone();
        Box::pin(async move {
            checked?;
            store.batches_for(&msg.caller).get(msg.id).await
        })
    }
}

impl Handler<CancelBatch> for JobSupervisor {
    type Result = ResponseFuture<Result<Option<(Batch, i64)>, StoreError>>;

    fn handle(&mut self, msg: CancelBatch, _ctx: &mut Self::Context) -> Self::Result {
        let checked = self.check_tenant(&msg.caller);
        let store = self.deps.store.clone();
        Box::pin(async move {
            checked?;
            store.batches_for(&msg.caller).cancel(msg.id).await
        })
    }
}

impl Handler<BatchReport> for JobSupervisor {
    type Result = ResponseFuture<Result<Option<ReportRows>, StoreError>>;

    fn handle(&mut self, msg: BatchReport, _ctx: &mut Self::Context) -> Self::Result {
        let checked = self.check_tenant(&msg.caller);
        let store = self.deps.store.clone();
        Box::pin(async move {
            checked?;
            let batches = store.batches_for(&msg.caller);
            if batches.get(msg.id).await?.is_none() {
                return Ok(None);
            }
            Ok(Some(Box::pin(batches.not_completed(msg.id)) as ReportRows))
        })
    }
}
