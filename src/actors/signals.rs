//! Signals with many senders, declared apart from every actor so that none
//! of their senders imports another actor for them.

use actix::prelude::*;

/// There may be work to claim: a local submission no claim took yet, a
/// NOTIFY from another process, a rescue. Sent by the Intake, the Listener
/// and the Rescuer; handled by the Dispatcher (which passes it on to the
/// worker API's waiting claims).
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "()")]
pub struct WorkAvailable;

/// A worker's slot, or its job's end, changed. Told to the dispatcher, which
/// bounds the handlers running at once by its slots, and the ends being
/// recorded beside them: `Released` by the worker itself (no hop through
/// its supervisor on every job's path), `Ended` and `Stopped` by the
/// supervisor, which forgets the worker then.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Message)]
#[rtype(result = "()")]
pub enum WorkerSlot {
    /// A worker's attempt ended and its end is being recorded: its slot is
    /// free, but its job counts against its tenant's limit until the end
    /// is written.
    Released,
    /// A worker that had released its slot stopped: its end is written (or
    /// given up on), so its tenant may have room again.
    Ended,
    /// A worker stopped while it held its slot (stopped before its attempt
    /// ended, or its job could not run here).
    Stopped,
}
