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
