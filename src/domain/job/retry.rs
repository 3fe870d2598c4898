//! Exponential backoff with jitter, per job type, and the one decision of
//! what a failed attempt means for its job.

use std::time::Duration;

use crate::domain::job::attempt::{Failure, Outcome, storable};

/// When to try again after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// The delay after the first failure, before jitter.
    pub base: Duration,
    /// No delay exceeds this.
    pub max: Duration,
}

impl RetryPolicy {
    /// The waits between tries of a write that must land once what it
    /// records has happened (an attempt's end, an email's delivery): until
    /// the database answers, 50 ms doubling to 5 s.
    pub const UNTIL_RECORDED: Self =
        Self { max_attempts: u32::MAX, base: Duration::from_millis(50), max: Duration::from_secs(5) };

    /// Whether a job that just failed attempt `attempt` (1-based) may run again.
    pub fn allows_another(&self, attempt: u32) -> bool {
        attempt < self.max_attempts
    }

    /// The delay after failed attempt `attempt` (1-based): `base * 2^(attempt-1)`,
    /// capped at `max`, then "equal jitter": somewhere between half and all of it,
    /// so retries of many jobs that failed together (an outage) spread out
    /// without any delay shrinking to nothing.
    pub fn backoff(&self, attempt: u32, random_unit: f64) -> Duration {
        let exponent = attempt.saturating_sub(1).min(32);
        let uncapped = self.base.saturating_mul(2u32.saturating_pow(exponent));
        let capped = uncapped.min(self.max);
        let half = capped / 2;
        half + half.mul_f64(random_unit.clamp(0.0, 1.0))
    }

    /// [`Self::backoff`] with a fresh random draw.
    pub fn next_delay(&self, attempt: u32) -> Duration {
        self.backoff(attempt, fastrand::f64())
    }

    /// What failed attempt `attempt` (1-based) means for its job: another
    /// attempt after a backoff, or the job's end. Every runner's failures
    /// are decided here.
    pub fn outcome(&self, attempt: u32, failure: Failure) -> Outcome {
        match failure {
            Failure::Retryable(error) if self.allows_another(attempt) => {
                Outcome::Retry { delay: self.next_delay(attempt), error: storable(error) }
            }
            Failure::Retryable(error) | Failure::Permanent(error) => Outcome::Failed { error: storable(error) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn policy() -> RetryPolicy {
        RetryPolicy { max_attempts: 5, base: Duration::from_secs(1), max: Duration::from_secs(60) }
    }

    #[test]
    fn delays_double_until_the_cap() {
        let p = policy();
        assert_eq!(p.backoff(1, 1.0), Duration::from_secs(1));
        assert_eq!(p.backoff(2, 1.0), Duration::from_secs(2));
        assert_eq!(p.backoff(3, 1.0), Duration::from_secs(4));
        assert_eq!(p.backoff(20, 1.0), Duration::from_secs(60));
        assert_eq!(p.backoff(3, 0.0), Duration::from_secs(2));
    }

    #[test]
    fn a_retryable_failure_retries_while_attempts_remain_and_a_permanent_one_never() {
        let p = policy();
        let retryable = || Failure::Retryable("flaky\0".into());
        assert!(matches!(p.outcome(4, retryable()), Outcome::Retry { error, .. } if error == "flaky\u{FFFD}"));
        assert!(matches!(p.outcome(5, retryable()), Outcome::Failed { .. }));
        assert!(matches!(p.outcome(1, Failure::Permanent("bad".into())), Outcome::Failed { error } if error == "bad"));
    }

    #[test]
    fn the_last_attempt_allows_no_other() {
        let p = policy();
        assert!(p.allows_another(4));
        assert!(!p.allows_another(5));
    }

    proptest! {
        #[test]
        fn jitter_stays_between_half_and_the_cap(attempt in 1u32..1000, r in 0.0f64..=1.0) {
            let p = policy();
            let d = p.backoff(attempt, r);
            prop_assert!(d <= p.max);
            prop_assert!(d >= p.backoff(attempt, 0.0));
            prop_assert!(d >= p.base / 2);
        }
    }
}
