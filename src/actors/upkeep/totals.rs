//! The TotalsPublisher: every few seconds, writes this process's running
//! totals of claims and attempt ends (counted in `telemetry`) to the
//! database, where the operators' overview sums every process's into
//! cluster-wide rates. One small upsert per process per period, none per job.

use std::time::Duration;

use actix::prelude::*;

use crate::store::Store;

/// How often the totals are written: the overview's rates lag by this much at most.
pub const PUBLISH_EVERY: Duration = Duration::from_secs(5);

pub struct TotalsPublisher {
    store: Store,
    every: Duration,
}

impl TotalsPublisher {
    pub fn new(store: Store, every: Duration) -> Self {
        Self { store, every }
    }
}

impl Actor for TotalsPublisher {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(self.every, |act, ctx| {
            let store = act.store.clone();
            let publish = async move {
                let (claimed, ended) = crate::telemetry::totals();
                if let Err(error) = store.publish_totals(claimed, ended).await {
                    tracing::debug!(%error, "could not publish this process's totals");
                }
            };
            ctx.wait(publish.into_actor(act));
        });
    }
}
