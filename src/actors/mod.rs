//! The actors that move jobs along, one role each. Their memory is a cache and
//! a dispatcher; what must survive a crash is committed before any of them
//! hears of it.
//!
//! The actors form a one-way tree; everything flowing back up (replies,
//! freed slots, finished jobs, lost leases) goes through a `Recipient`, so
//! no actor knows its parent's type and a test can put a probe there.
//!
//! ```text
//! HTTP handler --SubmitJob/SubmitBatch--> JobSupervisor (one per tenant,
//!      |                                        made on demand by the SupervisorRegistry)
//!      |                                             | Record --> Intake (batched INSERTs, all tenants)
//!      |                                             |              | WorkAvailable, LendSlots/SlotsUsed
//!      |                                             |              v
//!      |   LISTEN errand_jobs, poll, Rescuer -----------------> Dispatcher --claim (ClaimSpec)--> RunJob
//!      |                                             ^                                              |
//!      |                                  WorkerSlot |                                              v
//!      |                                       JobSupervisor <--WorkerDone-- JobWorker (per job)
//!      |                                                                      |   | Hold/Release lease
//!      |                                                             Complete |   v
//!      |   worker API --ClaimForWorker, RenewWorkerLease, ReportProgress--> Broker  |  LeaseKeeper (one renewal
//!      |   worker API --EndAttempt----------------------------------+         |   statement per interval)
//!      |   Rescuer --Rescue-----------------------------------------+         v
//!      v                                                            +--> Completer (batched, fenced ends:
//!   PostgreSQL (the truth)                                                   the one door) --JobFinished--> Notifier
//! ```
//!
//! A worker also tells the Dispatcher itself when its attempt's outcome is
//! known (`WorkerSlot::Released`): its slot is free while the end is written.

mod broker;
mod completer;
mod delivery;
mod running;
mod signals;
mod soon;
mod upkeep;

pub use broker::{Broker, ClaimForWorker, Leased, RenewWorkerLease, Renewed, ReportProgress};
pub use completer::{Complete, Completer, CompletionFailed, EndAttempt, Recorded, Rescue, WorkerEnd};
pub use delivery::mailer::{MailDue, Mailer};
pub use delivery::notifier::{
    CatchUp, JobFinished, NotificationsCommitted, Notifier, OutboxSenders, ProgressCommitted, StreamLimits,
    StreamWakes, Subscribe, TooManyStreams,
};
pub use delivery::push_sender::{PushDue, PushSender};
pub use delivery::rounds::FinishSending;
pub use delivery::webhook_sender::{ResultUrls, WebhookSender};
pub use running::dispatcher::{Dispatcher, DispatcherSettings, Drain};
pub use running::intake::{
    Intake, IntakeLinks, LendSlots, Overloaded, Record, RecordError, Shedding, SlotLoan, SlotsUsed,
};
pub use running::leases::{CancelRequested, LeaseChange, LeaseKeeper, LeaseNotice, RenewLeases};
pub use running::progress::{ProgressChange, ProgressWriter};
pub use running::registry::{CountSupervisors, SupervisorFor, SupervisorRegistry};
pub use running::supervisor::{JobSupervisor, RunJob, SubmitBatch, SubmitError, SubmitJob, SupervisorDeps};
pub use signals::WorkAvailable;
pub use upkeep::listener::{ListenerHealth, Listeners, spawn_listener};
pub use upkeep::pruner::{Prune, PruneAsOf, Pruner, Retentions};
pub use upkeep::rescuer::{RescueExpired, Rescuer};
pub use upkeep::scheduler::{FireDue, Scheduler};
pub use upkeep::sightings::{Sightings, SightingsWriter, WriteSightings};
pub use upkeep::totals::{PUBLISH_EVERY, TotalsPublisher};
pub use upkeep::vacuum::QueueVacuum;
