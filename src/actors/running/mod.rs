//! Running jobs in this process: the per-tenant supervisors and their
//! registry, the Intake that records what they accept, the Dispatcher that
//! claims due work, one JobWorker per running job, and the writers that keep
//! a running job's lease and progress.

pub mod dispatcher;
pub mod intake;
pub mod leases;
pub mod progress;
pub mod registry;
pub mod supervisor;
pub mod worker;
