//! Sightings: who signed in, when, with which email, as the HTTP side sees
//! authenticated users' requests. They are gathered in memory and written
//! every [`WRITE_EVERY`], many people a statement (`store::People`), and
//! each person at most once per [`RECORD_EVERY`] unless their email
//! changed: knowing someone signed in this hour, not this second, is what
//! a schedule needs (`schedules.owner_inactive_after`), and creation's hot
//! path gains no statement. A process killed with sightings unwritten only
//! makes those people's next sighting later.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix::prelude::*;
use chrono::Utc;

use crate::domain::{Caller, TenantId, UserId};
use crate::store::{Sighting, Store};

/// How often the gathered sightings are written.
pub const WRITE_EVERY: Duration = Duration::from_secs(10);
/// A person seen again within this, with the same email, is not written again.
const RECORD_EVERY: Duration = Duration::from_secs(3600);
/// People remembered as written, and sightings waiting, at most: past it the
/// memory is cleared (people are then written again), and new sightings
/// wait for the next write. Bounds memory whatever many users a tenant has.
const REMEMBERED: usize = 100_000;

type Person = (TenantId, UserId);

/// The sightings gathered and not yet written, and when each person was
/// last written (shared by the HTTP side, which gathers, and the writer).
#[derive(Default)]
pub struct Sightings {
    inner: Mutex<Gathered>,
}

#[derive(Default)]
struct Gathered {
    waiting: HashMap<Person, Sighting>,
    written: HashMap<Person, (Option<String>, Instant)>,
}

impl Sightings {
    /// `caller` was authenticated just now.
    pub fn saw(&self, caller: &Caller) {
        let Ok(mut gathered) = self.inner.lock() else { return };
        let person = (caller.tenant.clone(), caller.user.clone());
        if let Some((email, at)) = gathered.written.get(&person)
            && *email == caller.email
            && at.elapsed() < RECORD_EVERY
        {
            return;
        }
        if gathered.waiting.len() >= REMEMBERED && !gathered.waiting.contains_key(&person) {
            return;
        }
        let sighting =
            Sighting { tenant: person.0.clone(), user: person.1.clone(), email: caller.email.clone(), at: Utc::now() };
        gathered.waiting.insert(person, sighting);
    }

    /// The sightings waiting, taken to be written.
    fn take(&self) -> Vec<Sighting> {
        self.inner.lock().map(|mut gathered| gathered.waiting.drain().map(|(_, s)| s).collect()).unwrap_or_default()
    }

    /// `sightings` were written.
    fn written(&self, sightings: Vec<Sighting>) {
        let Ok(mut gathered) = self.inner.lock() else { return };
        if gathered.written.len() + sightings.len() > REMEMBERED {
            gathered.written.clear();
        }
        let now = Instant::now();
        for s in sightings {
            gathered.written.insert((s.tenant, s.user), (s.email, now));
        }
    }
}

/// Write the sightings gathered now; answered when they are written (tests
/// send it instead of waiting for the timer).
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "()")]
pub struct WriteSightings;

/// Writes the sightings the HTTP side gathers.
pub struct SightingsWriter {
    store: Store,
    sightings: Arc<Sightings>,
}

impl SightingsWriter {
    pub fn new(store: Store, sightings: Arc<Sightings>) -> Self {
        Self { store, sightings }
    }

    fn write(&self) -> impl Future<Output = ()> + 'static {
        let (store, sightings) = (self.store.clone(), self.sightings.clone());
        async move {
            let batch = sightings.take();
            if batch.is_empty() {
                return;
            }
            match store.people().record(&batch).await {
                Ok(()) => sightings.written(batch),
                // Lost: each person's next request is seen again.
                Err(error) => tracing::warn!(%error, people = batch.len(), "could not record who signed in"),
            }
        }
    }
}

impl Actor for SightingsWriter {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        // `wait`: one write at a time.
        ctx.run_interval(WRITE_EVERY, |act, ctx| ctx.wait(act.write().into_actor(act)));
    }
}

impl Handler<WriteSightings> for SightingsWriter {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, _: WriteSightings, _ctx: &mut Self::Context) -> Self::Result {
        Box::pin(self.write())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(user: &str, email: Option<&str>) -> Caller {
        Caller {
            tenant: TenantId::parse("acme".to_owned()).unwrap(),
            user: UserId::parse(user.to_owned()).unwrap(),
            email: email.map(str::to_owned),
            zoneinfo: None,
            locale: crate::domain::Locale::default(),
            acted_by: None,
        }
    }

    #[test]
    fn a_person_is_written_once_an_hour_unless_their_email_changes() {
        let sightings = Sightings::default();
        sightings.saw(&caller("ann", Some("ann@a.example")));
        sightings.saw(&caller("ann", Some("ann@a.example")));
        let first = sightings.take();
        assert_eq!(first.len(), 1, "one sighting per person waits");
        sightings.written(first);
        sightings.saw(&caller("ann", Some("ann@a.example")));
        assert!(sightings.take().is_empty(), "seen again within the hour, same email: nothing to write");
        sightings.saw(&caller("ann", Some("ann@b.example")));
        sightings.saw(&caller("bob", None));
        let mut again = sightings.take();
        again.sort_by(|a, b| a.user.as_str().cmp(b.user.as_str()));
        assert_eq!(again.iter().map(|s| s.email.as_deref()).collect::<Vec<_>>(), [Some("ann@b.example"), None]);
    }

    #[test]
    fn a_write_that_failed_is_tried_again_at_the_next_sighting() {
        let sightings = Sightings::default();
        sightings.saw(&caller("ann", None));
        drop(sightings.take());
        sightings.saw(&caller("ann", None));
        assert_eq!(sightings.take().len(), 1);
    }
}
