//! The Pruner: deletes result files whose retention ended, then marks their
//! jobs so the API says "expired" (and `/result` answers 410) instead of
//! handing out a dead link. Deleting twice is harmless, so several processes
//! may prune at once and a crash between delete and mark only repeats a delete.

use std::time::Duration;

use actix::prelude::*;

use crate::storage::{ObjectKey, Storage};
use crate::store::Store;

/// Files pruned per pass at most.
const BATCH: i64 = 100;

pub struct Pruner {
    store: Store,
    storage: Storage,
    every: Duration,
}

impl Pruner {
    pub fn new(store: Store, storage: Storage, every: Duration) -> Self {
        Self { store, storage, every }
    }
}

impl Actor for Pruner {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(self.every, |act, ctx| {
            let (store, storage) = (act.store.clone(), act.storage.clone());
            ctx.spawn(prune(store, storage).into_actor(act));
        });
    }
}

async fn prune(store: Store, storage: Storage) {
    let due = match store.queue().results_past_retention(BATCH).await {
        Ok(due) => due,
        Err(error) => return tracing::warn!(%error, "could not look for expired results"),
    };
    for (job, key) in due {
        if let Err(error) = storage.delete(&ObjectKey::from_stored(key)).await {
            tracing::warn!(%error, %job, "could not delete an expired result");
            continue;
        }
        if let Err(error) = store.queue().mark_result_expired(job).await {
            tracing::warn!(%error, %job, "deleted an expired result but could not mark its job");
        }
    }
}
