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
    #[serde(default, deserialize_with = "whole_number")]
    ms: u64,
    #[serde(default, deserialize_with = "whole_number")]
    fail_times: u32,
}

/// A whole number written either way JSON Schema's `integer` accepts: `10`,
/// or `10.0` / `1e1` (a number with no fractional part). What the schema let
/// through, the handler must run.
fn whole_number<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: TryFrom<u64>,
{
    let number = serde_json::Number::deserialize(deserializer)?;
    let whole = match (number.as_u64(), number.as_f64()) {
        (Some(n), _) => Some(n),
        (None, Some(f)) if f >= 0.0 && f.fract() == 0.0 && f <= u64::MAX as f64 => Some(f as u64),
        _ => None,
    };
    whole
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| serde::de::Error::custom(format!("expected a whole number in range, not {number}")))
}

/// How often `sleep` wakes to report its progress.
const PROGRESS_STEP: Duration = Duration::from_millis(100);

impl JobHandler for SleepHandler {
    fn run(&self, ctx: JobContext) -> HandlerFuture {
        Box::pin(async move {
            let params: SleepParams = serde_json::from_value(ctx.params.clone())
                .map_err(|e| JobError::Permanent(format!("invalid sleep params: {e}")))?;
            // In steps, reporting the milliseconds slept so far (so that
            // tests and demos can watch progress move).
            let started = tokio::time::Instant::now();
            let total = Duration::from_millis(params.ms);
            loop {
                let slept = started.elapsed().min(total);
                ctx.progress(slept.as_millis() as u64, Some(params.ms), Some("milliseconds slept"));
                if slept >= total {
                    break;
                }
                tokio::time::sleep((total - slept).min(PROGRESS_STEP)).await;
            }
            if ctx.attempt <= params.fail_times {
                return Err(JobError::Retryable(format!("planned failure {} of {}", ctx.attempt, params.fail_times)));
            }
            Ok(JobOutput::default())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_numbers_written_as_floats_are_accepted_and_fractions_refused() {
        for raw in [r#"{"ms": 10}"#, r#"{"ms": 10.0}"#, r#"{"ms": 1e1}"#, r#"{"ms": 10.000}"#] {
            let params: SleepParams = serde_json::from_str(raw).unwrap();
            assert_eq!(params.ms, 10, "{raw}");
        }
        for raw in [r#"{"ms": 10.5}"#, r#"{"ms": -1}"#, r#"{"fail_times": 1e12}"#] {
            assert!(serde_json::from_str::<SleepParams>(raw).is_err(), "{raw}");
        }
    }
}
