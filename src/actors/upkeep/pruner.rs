//! The Pruner: gives what finished jobs leave behind a lifetime. Each pass it
//! deletes result files whose retention ended, then marks their jobs so the
//! API says "expired" (and `/result` answers 410) instead of handing out a
//! dead link; it deletes the files external workers uploaded for attempts
//! that did not complete (recorded by the statement that ended them); and it
//! deletes, in batches, finished jobs older than
//! `history.retention` with their notifications and outbox emails (their
//! idempotency keys are then free again), and operators' actions older than
//! `history.audit_retention`, and when people who own no schedule signed
//! in, after `schedules.owner_inactive_after`. Deleting twice is harmless, so
//! several processes may prune at once and a crash between deleting a file
//! and marking its job only repeats a delete.

use std::future::Future;
use std::time::Duration;

use actix::prelude::*;

use crate::config::HistorySettings;
use crate::storage::{ObjectKey, Storage};
use crate::store::Store;

/// Prune now; answered when the pass is done (tests drive the pruner with it
/// instead of waiting for its timer).
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "()")]
pub struct Prune;

/// Prune the history as if it were `.0` (tests move the clock with it; the
/// result files' expiry is the database's clock, as ever).
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "()")]
pub struct PruneAsOf(pub chrono::DateTime<chrono::Utc>);

/// Files pruned per pass at most.
const FILE_BATCH: i64 = 100;
/// Jobs deleted per statement: small enough to keep each transaction short.
const HISTORY_BATCH: i64 = 1000;
/// History statements per pass at most, so one pass cannot run for long.
const HISTORY_BATCHES_PER_PASS: usize = 20;
/// Quota counts at zero forgotten per pass; any left wait for the next one.
const IDLE_COUNTS_PER_PASS: i64 = 10_000;

/// How long finished jobs are kept: `history.retention`, unless their type
/// says otherwise (`job_types.<name>.retention`).
#[derive(Debug, Clone)]
pub struct Retentions {
    pub history: HistorySettings,
    /// The types with a retention of their own.
    pub by_type: Vec<(String, Duration)>,
    /// How long it is kept that someone who owns no schedule signed in
    /// (`people`): `schedules.owner_inactive_after`.
    pub sign_ins: Duration,
}

pub struct Pruner {
    store: Store,
    storage: Storage,
    every: Duration,
    retentions: Retentions,
}

impl Pruner {
    pub fn new(store: Store, storage: Storage, every: Duration, retentions: Retentions) -> Self {
        Self { store, storage, every, retentions }
    }

    /// One pass at `now`: expired result files, then old history and
    /// operators' actions, then quota counts at zero.
    fn pass(&self, now: chrono::DateTime<chrono::Utc>) -> impl Future<Output = ()> + 'static {
        let (store, storage, retentions) = (self.store.clone(), self.storage.clone(), self.retentions.clone());
        async move {
            prune_results(&store, &storage).await;
            prune_discarded_files(&store, &storage).await;
            prune_history(&store, &retentions, now).await;
            if let Some(cutoff) = cutoff(now, retentions.history.audit_retention)
                && let Err(error) = store.queue().prune_operator_actions(cutoff, HISTORY_BATCH).await
            {
                tracing::warn!(%error, "could not prune old operators' actions");
            }
            if let Some(cutoff) = cutoff(now, retentions.sign_ins)
                && let Err(error) = store.people().prune(cutoff, HISTORY_BATCH).await
            {
                tracing::warn!(%error, "could not forget old sign-ins");
            }
            if let Err(error) = store.queue().forget_idle_counts(IDLE_COUNTS_PER_PASS).await {
                tracing::warn!(%error, "could not forget quota counts at zero");
            }
        }
    }
}

impl Actor for Pruner {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        // `wait`: one pass at a time, however slow storage is.
        ctx.run_interval(self.every, |act, ctx| ctx.wait(act.pass(chrono::Utc::now()).into_actor(act)));
    }
}

impl Handler<Prune> for Pruner {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, _: Prune, _ctx: &mut Self::Context) -> Self::Result {
        Box::pin(self.pass(chrono::Utc::now()))
    }
}

impl Handler<PruneAsOf> for Pruner {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, PruneAsOf(now): PruneAsOf, _ctx: &mut Self::Context) -> Self::Result {
        Box::pin(self.pass(now))
    }
}

async fn prune_results(store: &Store, storage: &Storage) {
    let due = match store.queue().results_past_retention(FILE_BATCH).await {
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

async fn prune_discarded_files(store: &Store, storage: &Storage) {
    let keys = match store.queue().discarded_files(FILE_BATCH).await {
        Ok(keys) => keys,
        Err(error) => return tracing::warn!(%error, "could not look for discarded uploads"),
    };
    let mut deleted = Vec::with_capacity(keys.len());
    for key in keys {
        match storage.delete(&ObjectKey::from_stored(key.clone())).await {
            Ok(()) => deleted.push(key),
            Err(error) => tracing::warn!(%error, key, "could not delete a discarded upload"),
        }
    }
    if !deleted.is_empty()
        && let Err(error) = store.queue().forget_discarded(&deleted).await
    {
        // Deleted again next pass: deleting an absent file is fine.
        tracing::warn!(%error, "deleted discarded uploads but could not forget them");
    }
}

/// `retention` before `now`.
fn cutoff(now: chrono::DateTime<chrono::Utc>, retention: Duration) -> Option<chrono::DateTime<chrono::Utc>> {
    chrono::Duration::from_std(retention).ok().map(|retention| now - retention)
}

async fn prune_history(store: &Store, retentions: &Retentions, now: chrono::DateTime<chrono::Utc>) {
    let Some(cutoff) = cutoff(now, retentions.history.retention) else { return };
    let by_type: Vec<(String, chrono::DateTime<chrono::Utc>)> = retentions
        .by_type
        .iter()
        .filter_map(|(name, retention)| Some((name.clone(), self::cutoff(now, *retention)?)))
        .collect();
    let cutoffs = match store.queue().history_cutoffs(now, cutoff, by_type).await {
        Ok(cutoffs) => cutoffs,
        Err(error) => return tracing::warn!(%error, "could not read the tenants' retentions"),
    };
    for _ in 0..HISTORY_BATCHES_PER_PASS {
        match store.queue().prune_history(&cutoffs, HISTORY_BATCH).await {
            Ok(deleted) => {
                crate::telemetry::metrics().jobs_pruned.inc_by(deleted);
                if deleted < HISTORY_BATCH as u64 {
                    break;
                }
            }
            Err(error) => return tracing::warn!(%error, "could not prune the job history"),
        }
    }
    // Batches go once their children went (above, in this pass or an earlier one).
    if let Err(error) = store.queue().prune_batches(cutoff, HISTORY_BATCH).await {
        tracing::warn!(%error, "could not prune old batches");
    }
    if let Err(error) = store.queue().forget_expired_tickets(HISTORY_BATCH).await {
        tracing::warn!(%error, "could not forget expired stream tickets");
    }
}
