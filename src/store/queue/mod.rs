//! The queue: how a job is recorded (`submit.rs`, its quotas in `quota.rs`,
//! claimed beside its submission in `batch_claim.rs`), claimed (`claim.rs`,
//! `lost_claims.rs`), held (`attempts.rs`: leases, progress), ended
//! (`finish.rs`, `cancel.rs`) and forgotten (`history.rs`).

pub mod admission;
pub mod attempt_logs;
pub mod attempts;
pub mod batch_claim;
pub mod cancel;
pub mod claim;
pub mod finish;
pub mod history;
pub mod lost_claims;
pub mod quota;
pub mod submit;

use deadpool_postgres::Pool;

use crate::store::Endings;

/// The worker side of the queue: claims (`claim.rs`), ends (`finish.rs`),
/// leases and progress (`attempts.rs`), history (`history.rs`).
pub struct Queue<'a> {
    pub(super) pool: &'a Pool,
    pub(super) endings: &'a Endings,
    /// Opens the sealed params of the jobs it claims.
    pub(super) sealer: &'a crate::store::Sealer,
}

/// A duration as the float milliseconds errand's statements take.
pub(super) fn millis(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
