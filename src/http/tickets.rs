//! Stream tickets issued and not yet used, per user: a cap, so that a script
//! cannot mint tickets without end (each one opens a stream for a minute).
//! The ledger is this process's: a ticket used on another process stays
//! counted here until it expires, which errs on the strict side for at most
//! one ticket lifetime.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use uuid::Uuid;

use crate::domain::Caller;

/// Users tracked before the ledger sweeps out those with nothing outstanding.
const SWEEP_ABOVE: usize = 10_000;

/// Too many of a user's tickets are outstanding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("you already have {0} stream tickets that were never used, the most one person may; use one, or wait a minute")]
pub struct TooManyTickets(pub usize);

/// Whose tickets: (tenant, user).
type Owner = (String, String);
/// A user's outstanding tickets, oldest first: id and expiry.
type Outstanding = VecDeque<(Uuid, Instant)>;

pub struct TicketLedger {
    cap: usize,
    ttl: Duration,
    outstanding: Mutex<HashMap<Owner, Outstanding>>,
}

impl TicketLedger {
    pub fn new(cap: usize, ttl: Duration) -> Self {
        Self { cap, ttl, outstanding: Mutex::new(HashMap::new()) }
    }

    /// A ticket id for `caller`, counted as outstanding until it is used or expires.
    pub fn issue(&self, caller: &Caller) -> Result<Uuid, TooManyTickets> {
        let now = Instant::now();
        let mut outstanding = self.outstanding.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if outstanding.len() > SWEEP_ABOVE {
            outstanding.retain(|_, tickets| {
                tickets.retain(|(_, expires)| *expires > now);
                !tickets.is_empty()
            });
        }
        let tickets = outstanding.entry(owner(caller)).or_default();
        tickets.retain(|(_, expires)| *expires > now);
        if tickets.len() >= self.cap {
            return Err(TooManyTickets(self.cap));
        }
        let id = Uuid::new_v4();
        tickets.push_back((id, now + self.ttl));
        Ok(id)
    }

    /// `caller`'s ticket `id` opened a stream: it no longer counts.
    pub fn used(&self, caller: &Caller, id: Uuid) {
        let mut outstanding = self.outstanding.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = owner(caller);
        if let Some(tickets) = outstanding.get_mut(&key) {
            tickets.retain(|(ticket, _)| *ticket != id);
            if tickets.is_empty() {
                outstanding.remove(&key);
            }
        }
    }
}

fn owner(caller: &Caller) -> Owner {
    (caller.tenant.to_string(), caller.user.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{TenantId, UserId};

    #[test]
    fn unused_tickets_are_capped_and_a_used_or_expired_one_frees_its_place() {
        let alice =
            Caller { tenant: TenantId::parse("acme").unwrap(), user: UserId::parse("alice").unwrap(), email: None };
        let bob = Caller { user: UserId::parse("bob").unwrap(), ..alice.clone() };
        let ledger = TicketLedger::new(2, Duration::from_secs(60));
        let first = ledger.issue(&alice).unwrap();
        ledger.issue(&alice).unwrap();
        assert_eq!(ledger.issue(&alice), Err(TooManyTickets(2)));
        assert!(ledger.issue(&bob).is_ok(), "another user's tickets are their own");
        ledger.used(&alice, first);
        assert!(ledger.issue(&alice).is_ok());

        let short = TicketLedger::new(1, Duration::ZERO);
        short.issue(&alice).unwrap();
        assert!(short.issue(&alice).is_ok(), "an expired ticket no longer counts");
    }
}
