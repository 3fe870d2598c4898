//! The actors that move jobs along, one role each. Their memory is a cache and
//! a dispatcher; what must survive a crash is committed before any of them
//! hears of it.
//!
//! ```text
//! HTTP handler --SubmitJob/GetJob/ListJobs--> JobSupervisor (one per tenant,
//!      |                                        made on demand by the SupervisorRegistry)
//!      |                                             | WorkAvailable
//!      |                                             v
//!      |   LISTEN errand_jobs, poll, rescue ----> Dispatcher --claim (SQL)--> RunJob
//!      |                                             ^                          |
//!      |                                   SlotFreed |                          v
//!      |                                       JobSupervisor <--WorkerDone-- JobWorker (per job)
//!      |                                             | JobFinished            | Complete (batched,
//!      v                                             v                        v  fenced writes)
//!   PostgreSQL (the truth)                        Notifier                 Completer
//! ```

mod completer;
mod dispatcher;
mod listener;
mod mailer;
mod notifier;
mod pruner;
mod registry;
mod supervisor;
mod worker;

pub use completer::{Complete, Completer, CompletionFailed};
pub use dispatcher::{Dispatcher, DispatcherSettings, Drain, SlotFreed, WorkAvailable};
pub use listener::{Listeners, spawn_listener};
pub use mailer::{MailDue, Mailer};
pub use notifier::{JobFinished, ListNotifications, MarkAllRead, MarkRead, NotificationCommitted, Notifier, Subscribe};
pub use pruner::Pruner;
pub use registry::{CountSupervisors, SupervisorFor, SupervisorRegistry};
pub use supervisor::{GetJob, JobSupervisor, ListJobs, SubmitError, SubmitJob, SupervisorDeps};
