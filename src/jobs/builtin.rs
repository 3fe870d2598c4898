//! The handlers errand ships: `noop` and `sleep`, for tests, benchmarks and
//! trying the system out.

use std::time::Duration;

use serde::Deserialize;

use super::{HandlerFuture, JobContext, JobError, JobHandler, JobOutput};

/// Completes at once.
pub struct NoopHandler;

impl JobHandler for NoopHandler {
    fn run(&self, _ctx: JobContext) -> HandlerFuture {
        Box::pin(async { Ok(JobOutput::default()) })
    }
}

/// Sleeps `ms` milliseconds, failing its first `fail_times` attempts
/// (after sleeping), to exercise timeouts and retries.
pub struct SleepHandler;

#[derive(Deserialize)]
struct SleepParams {
    #[serde(default)]
    ms: u64,
    #[serde(default)]
    fail_times: u32,
}

impl JobHandler for SleepHandler {
    fn run(&self, ctx: JobContext) -> HandlerFuture {
        Box::pin(async move {
            let params: SleepParams = serde_json::from_value(ctx.params)
                .map_err(|e| JobError::Permanent(format!("invalid sleep params: {e}")))?;
            tokio::time::sleep(Duration::from_millis(params.ms)).await;
            if ctx.attempt <= params.fail_times {
                return Err(JobError::Retryable(format!("planned failure {} of {}", ctx.attempt, params.fail_times)));
            }
            Ok(JobOutput::default())
        })
    }
}
