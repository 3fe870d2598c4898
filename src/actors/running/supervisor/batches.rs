//! The JobSupervisor's batch requests: submit a batch (its items checked
//! against the type, as a job's params are), read one, cancel its waiting
//! children. Each is checked against the supervisor's tenant, as jobs are.

use actix::prelude::*;
use serde_json::Value;

use crate::actors::running::supervisor::{JobSupervisor, SubmitError};
use crate::domain::{Caller, IdempotencyKey};
use crate::jobs::ParamsError;
use crate::store::{BatchSubmission, NewBatch};

/// Record a batch for the caller, or find the one its key already names.
#[derive(Debug, Clone, Message)]
#[rtype(result = "Result<BatchSubmission, SubmitError>")]
pub struct SubmitBatch {
    pub caller: Caller,
    pub key: IdempotencyKey,
    pub job_type: String,
    pub items: Vec<Value>,
    /// The trace of the request (`http::support::request_id::trace_of`).
    pub trace: Option<crate::domain::TraceParent>,
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
            // Each of its jobs is decided against its resource's unfinished
            // one, under the key's lock: one at a time, not as a batch.
            if job_type.admission.is_some() {
                return Err(SubmitError::NotBatchable(job_type.name.clone()));
            }
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
                trace: msg.trace,
            };
            let submission = store.batches_for(&msg.caller).submit(&batch).await?;
            let outcome = match &submission {
                BatchSubmission::Created(_) => "created",
                BatchSubmission::Replayed(_) => "replayed",
                BatchSubmission::KeyReused => "key_reused",
                BatchSubmission::OverQuota(_) => "over_quota",
            };
            crate::telemetry::metrics().batches_submitted.add(outcome, 1);
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
