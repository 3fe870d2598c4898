//! The Notifier: owns the user-facing side of completion: the email channel
//! (it wakes the [`crate::actors::Mailer`] when a job ends here), and the in-app
//! channel's live side: it wakes live streams when a notification of their
//! user is committed, in this process (`JobFinished`) or in any other
//! (`NotificationsCommitted`, from PostgreSQL NOTIFY). The feed itself is
//! read by the HTTP handlers through the store's caller-scoped door.
//!
//! The notification row is the guarantee: one per job, written in the job's
//! final statement. This actor only fans out what is already durable, and a
//! stream woken by it reads what it has not sent from the database, so a
//! lost wake-up delays an event until the next one but never loses it.

use std::collections::HashMap;

use actix::prelude::*;
use tokio::sync::mpsc;

use crate::actors::delivery::mailer::MailDue;
use crate::actors::delivery::push_sender::PushDue;
use crate::domain::{Caller, OwnerTag, TenantId};
use crate::store::EndedAttempt;

/// A job ended (completed or failed) in this process and its notification is committed.
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct JobFinished(pub EndedAttempt);

/// Notifications for these owners were committed (in any process).
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct NotificationsCommitted(pub Vec<OwnerTag>);

/// Progress of running jobs of these owners was written (in any process).
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct ProgressCommitted(pub Vec<OwnerTag>);

/// Wake me when a notification of the caller is committed, or progress of
/// their running jobs written. Each receiver gets a unit per wake-up
/// (coalesced: at most one pending); dropping them unsubscribes. Refused
/// when the caller, or this process, has as many streams open as allowed.
#[derive(Debug, Clone, Message)]
#[rtype(result = "Result<StreamWakes, TooManyStreams>")]
pub struct Subscribe {
    pub caller: Caller,
}

/// How many streams one process keeps open: per user, per tenant, and in all.
#[derive(Debug, Clone, Copy)]
pub struct StreamLimits {
    pub per_user: usize,
    pub per_tenant: usize,
    pub per_process: usize,
}

/// A stream refused: the user's streams on this process, or all of its
/// streams, are at their limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TooManyStreams {
    #[error(
        "you already have {0} notification streams open here, the most one person may; close one (another tab?) first"
    )]
    User(usize),
    #[error(
        "your organisation's people have {0} notification streams open here, the most one organisation may; try again shortly"
    )]
    Tenant(usize),
    #[error("this server holds {0} notification streams, the most it may; try again shortly")]
    Process(usize),
}

/// A stream's wake-ups: one for its feed (notifications, read-marks), one for progress.
#[derive(Debug)]
pub struct StreamWakes {
    pub feed: mpsc::Receiver<()>,
    pub progress: mpsc::Receiver<()>,
}

/// The senders of one open stream's wake-ups.
struct StreamWakers {
    feed: mpsc::Sender<()>,
    progress: mpsc::Sender<()>,
}

/// What woke streams.
#[derive(Debug, Clone, Copy)]
enum Wake {
    Feed,
    Progress,
}

pub struct Notifier {
    /// Open streams by whose notifications they show.
    streams: HashMap<OwnerTag, Vec<StreamWakers>>,
    /// The same streams by tenant (their feed senders: closed once the
    /// stream is), for the tenant's cap.
    by_tenant: HashMap<TenantId, Vec<mpsc::Sender<()>>>,
    limits: StreamLimits,
    /// The outboxes' senders to wake when a job ends.
    senders: OutboxSenders,
}

/// The senders of the outboxes a job's end may have written to, those enabled.
#[derive(Default)]
pub struct OutboxSenders {
    pub mailer: Option<Recipient<MailDue>>,
    pub pusher: Option<Recipient<PushDue>>,
}

impl Notifier {
    pub fn new(senders: OutboxSenders, limits: StreamLimits) -> Self {
        Self { streams: HashMap::new(), by_tenant: HashMap::new(), limits, senders }
    }

    fn open_streams(&self) -> usize {
        self.streams.values().map(Vec::len).sum()
    }

    fn record_open_streams(&self) {
        crate::telemetry::metrics().notification_streams.set(self.open_streams() as i64);
    }

    /// Forgets the streams whose clients went away.
    fn forget_closed(&mut self) {
        self.by_tenant.retain(|_, senders| {
            senders.retain(|sender| !sender.is_closed());
            !senders.is_empty()
        });
        self.streams.retain(|_, senders| {
            senders.retain(|wakers| !wakers.feed.is_closed());
            !senders.is_empty()
        });
    }

    fn wake(&mut self, key: OwnerTag, what: Wake) {
        if let Some(senders) = self.streams.get_mut(&key) {
            // A full channel already holds a wake-up: nothing to add.
            senders.retain(|wakers| !wakers.feed.is_closed());
            for wakers in senders.iter() {
                let _ = match what {
                    Wake::Feed => wakers.feed.try_send(()),
                    Wake::Progress => wakers.progress.try_send(()),
                };
            }
            if senders.is_empty() {
                self.streams.remove(&key);
            }
            self.record_open_streams();
        }
    }
}

impl Actor for Notifier {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        // Forget streams whose clients went away without a notification to prompt it.
        ctx.run_interval(std::time::Duration::from_secs(30), |act, _| {
            act.forget_closed();
            act.record_open_streams();
        });
    }
}

impl Handler<JobFinished> for Notifier {
    type Result = ();

    fn handle(&mut self, JobFinished(ended): JobFinished, _ctx: &mut Self::Context) {
        tracing::debug!(job = %ended.job, tenant = %ended.tenant, state = ?ended.state, "job finished");
        // Only when the end left something to send now: a message held for
        // quiet hours or a digest is found by the sender's poll when due, and
        // waking it for nothing costs a claim statement per end.
        if let Some(mailer) = self.senders.mailer.as_ref().filter(|_| ended.outbox_due.emails) {
            mailer.do_send(MailDue);
        }
        if let Some(pusher) = self.senders.pusher.as_ref().filter(|_| ended.outbox_due.pushes) {
            pusher.do_send(PushDue);
        }
        self.wake(OwnerTag::of(&ended.tenant, &ended.user), Wake::Feed);
    }
}

impl Handler<NotificationsCommitted> for Notifier {
    type Result = ();

    fn handle(&mut self, NotificationsCommitted(owners): NotificationsCommitted, _ctx: &mut Self::Context) {
        for owner in owners {
            self.wake(owner, Wake::Feed);
        }
    }
}

/// The listener was away (or has just started): what was announced
/// meanwhile went unheard, so every live stream looks again.
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "()")]
pub struct CatchUp;

impl Handler<CatchUp> for Notifier {
    type Result = ();

    fn handle(&mut self, _: CatchUp, _ctx: &mut Self::Context) {
        let owners: Vec<OwnerTag> = self.streams.keys().cloned().collect();
        for owner in owners {
            self.wake(owner.clone(), Wake::Feed);
            self.wake(owner, Wake::Progress);
        }
    }
}

impl Handler<ProgressCommitted> for Notifier {
    type Result = ();

    fn handle(&mut self, ProgressCommitted(owners): ProgressCommitted, _ctx: &mut Self::Context) {
        for owner in owners {
            self.wake(owner, Wake::Progress);
        }
    }
}

impl Handler<Subscribe> for Notifier {
    type Result = MessageResult<Subscribe>;

    fn handle(&mut self, msg: Subscribe, _ctx: &mut Self::Context) -> Self::Result {
        let owner = OwnerTag::of(&msg.caller.tenant, &msg.caller.user);
        if self.open_streams() >= self.limits.per_process {
            self.forget_closed();
            if self.open_streams() >= self.limits.per_process {
                return MessageResult(Err(TooManyStreams::Process(self.limits.per_process)));
            }
        }
        let tenants = self.by_tenant.entry(msg.caller.tenant.clone()).or_default();
        tenants.retain(|sender| !sender.is_closed());
        if tenants.len() >= self.limits.per_tenant {
            return MessageResult(Err(TooManyStreams::Tenant(self.limits.per_tenant)));
        }
        let theirs = self.streams.entry(owner).or_default();
        theirs.retain(|wakers| !wakers.feed.is_closed());
        if theirs.len() >= self.limits.per_user {
            return MessageResult(Err(TooManyStreams::User(self.limits.per_user)));
        }
        let (feed, feed_wakes) = mpsc::channel(1);
        let (progress, progress_wakes) = mpsc::channel(1);
        tenants.push(feed.clone());
        theirs.push(StreamWakers { feed, progress });
        self.record_open_streams();
        MessageResult(Ok(StreamWakes { feed: feed_wakes, progress: progress_wakes }))
    }
}
