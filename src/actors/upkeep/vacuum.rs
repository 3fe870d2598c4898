//! The QueueVacuum: every `database.vacuum_queue_every`, vacuums `job_queue`
//! once its dead rows passed a bound (`Store::vacuum_queue`), instead of
//! leaving it to autovacuum. Autovacuum looks at a database once every
//! `autovacuum_naptime`, a setting of the whole cluster (a minute by
//! default, and often out of errand's operators' reach): at a few thousand
//! jobs a second that is 100,000 dead rows for every claim to walk past, and
//! a busy queue's start latency went from milliseconds to seconds
//! (BENCHMARKS.md). A vacuum of the queue, which holds only unfinished jobs,
//! takes milliseconds and blocks no claim or end.
//!
//! No vacuum removes what an open transaction elsewhere may still see: when
//! one has held the horizon back for over a minute, the pass says who, at
//! most once a minute, since that is what then slows every claim.

use std::time::{Duration, Instant};

use actix::prelude::*;

use crate::store::Store;
use crate::store::pool::server::{HorizonHeld, VacuumPass};

/// How long a transaction may hold the horizon back before it is told, and
/// how often it is told at most.
const WARN_EVERY: Duration = Duration::from_secs(60);

pub struct QueueVacuum {
    store: Store,
    every: Duration,
    last_warned: Option<Instant>,
}

impl QueueVacuum {
    pub fn new(store: Store, every: Duration) -> Self {
        Self { store, every, last_warned: None }
    }

    fn report(&mut self, pass: VacuumPass) {
        if pass.vacuumed {
            crate::telemetry::metrics().queue_vacuums.inc();
        }
        let Some(held) = pass.horizon_held else { return };
        if self.last_warned.is_some_and(|at| at.elapsed() < WARN_EVERY) {
            return;
        }
        self.last_warned = Some(Instant::now());
        let HorizonHeld { pid, application, state, seconds } = held;
        tracing::warn!(
            pid,
            application,
            state,
            seconds = seconds.round(),
            "a transaction open for {:.0} s holds back what vacuum may remove: job_queue's dead rows stay and \
             every claim slows until it ends (docs/operations.md)",
            seconds
        );
    }
}

impl Actor for QueueVacuum {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(self.every, |act, ctx| {
            let store = act.store.clone();
            let pass = async move { store.vacuum_queue(WARN_EVERY).await };
            ctx.wait(pass.into_actor(act).map(|result, act, _| match result {
                Ok(pass) => act.report(pass),
                Err(error) => tracing::debug!(%error, "could not vacuum the queue"),
            }));
        });
    }
}
