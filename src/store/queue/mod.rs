//! The queue: how a job is recorded (`submit.rs`, its quotas in `quota.rs`,
//! claimed beside its submission in `batch_claim.rs`), claimed (`claim.rs`,
//! `lost_claims.rs`), held (`attempts.rs`: leases, progress), ended
//! (`finish.rs`, `cancel.rs`) and forgotten (`history.rs`).

pub mod attempts;
pub mod batch_claim;
pub mod cancel;
pub mod claim;
pub mod finish;
pub mod history;
pub mod lost_claims;
pub mod quota;
pub mod submit;
