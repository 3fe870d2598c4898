//! The Scheduler: every `schedules.poll_interval`, fires the schedules that
//! are due (see `store/schedules/firing.rs`: the database decides who fires
//! what, so every process runs one and none leads), and people's digests
//! (`store/notifications/digests.rs`, the same way). A pass that took a full
//! batch runs again at once; the jobs it records are announced to the
//! dispatchers as any new job is, and the digests reach the Mailer's next poll.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use chrono::{DateTime, TimeDelta, Utc};

use crate::config::ScheduleSettings;
use crate::store::{Fired, FiringTerms, ScheduledType, Store};

/// Fire what is due as of `now` (tests pass a moved clock; the timer passes
/// the real one); answered with what the pass did.
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "Fired")]
pub struct FireDue {
    pub now: DateTime<Utc>,
}

/// Schedules taken per pass: one short transaction each.
const BATCH: i64 = 500;
/// Passes run back to back at most, before the timer's next turn.
const PASSES_PER_TURN: usize = 20;

pub struct Scheduler {
    store: Store,
    every: Duration,
    grace: TimeDelta,
    /// `schedules.owner_inactive_after`.
    owner_inactive_after: Option<TimeDelta>,
    /// What each schedulable job type's jobs are made with.
    types: Arc<HashMap<String, ScheduledType>>,
}

impl Scheduler {
    pub fn new(store: Store, terms: &ScheduleSettings, types: HashMap<String, ScheduledType>) -> Self {
        let grace = TimeDelta::from_std(terms.misfire_grace).unwrap_or(TimeDelta::MAX);
        let owner_inactive_after = terms.owner_inactive_after.and_then(|away| TimeDelta::from_std(away).ok());
        Self { store, every: terms.poll_interval, grace, owner_inactive_after, types: Arc::new(types) }
    }

    fn fire(&self, now: Option<DateTime<Utc>>) -> impl Future<Output = Fired> + 'static {
        let (store, grace, types, away) =
            (self.store.clone(), self.grace, self.types.clone(), self.owner_inactive_after);
        async move {
            let mut total = Fired::default();
            for _ in 0..PASSES_PER_TURN {
                let terms = FiringTerms { grace, types: &types, batch: BATCH, owner_inactive_after: away };
                match store.schedule_firing().fire_due(now.unwrap_or_else(Utc::now), &terms).await {
                    Ok(fired) => {
                        total.schedules += fired.schedules;
                        total.jobs += fired.jobs;
                        crate::telemetry::metrics().scheduled_jobs.inc_by(fired.jobs as u64);
                        if fired.schedules < BATCH as usize {
                            break;
                        }
                    }
                    Err(error) => {
                        tracing::warn!(%error, "could not fire due schedules");
                        break;
                    }
                }
            }
            for _ in 0..PASSES_PER_TURN {
                match store.digests().fire_due(now.unwrap_or_else(Utc::now), BATCH).await {
                    Ok(fired) => {
                        total.digests += fired.emails;
                        if fired.people < BATCH as usize {
                            break;
                        }
                    }
                    Err(error) => {
                        tracing::warn!(%error, "could not write due digests");
                        break;
                    }
                }
            }
            total
        }
    }
}

impl Actor for Scheduler {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        // `wait`: one turn at a time.
        ctx.run_interval(self.every, |act, ctx| {
            ctx.wait(act.fire(None).into_actor(act).map(|_, _, _| ()));
        });
    }
}

impl Handler<FireDue> for Scheduler {
    type Result = ResponseFuture<Fired>;

    fn handle(&mut self, msg: FireDue, _ctx: &mut Self::Context) -> Self::Result {
        Box::pin(self.fire(Some(msg.now)))
    }
}
