//! Jobs claimed ahead of free slots: the dispatcher's local queue.
//!
//! A claim costs about the same whether it takes five jobs or fifty, and so
//! does the batch of ends that follows: short jobs drain at the rate their
//! batches allow. Tying a claim's size to the slots free at that moment
//! keeps the batches small exactly when jobs are short (the slots free up
//! one by one while the last claim is on its way). So the dispatcher claims
//! a little ahead: as many more jobs as its handlers have been starting in
//! [`AHEAD_OF_STARTS`], and a slot that frees takes the next of them at once,
//! without waiting for a claim.
//!
//! Held ahead, a job is `running` in the database under this process's
//! lease, and counts against its tenant's limit, so no fairness rule
//! changes; but no heartbeat renews its lease and no other process can take
//! it. Two bounds keep that harmless: slow handlers start few jobs per
//! [`AHEAD_OF_STARTS`], so nothing is held ahead of them; and a job held
//! longer than [`MOST_HELD`] (or a quarter of the lease, if shorter: its
//! first renewal then still comes well within the lease) is handed back to
//! the queue unstarted, as if never claimed.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::domain::LeaseId;
use crate::store::ClaimedJob;

/// How far ahead of its handlers' starts the dispatcher claims.
const AHEAD_OF_STARTS: Duration = Duration::from_millis(10);
/// Longest a job waits here for a slot before it is handed back.
const MOST_HELD: Duration = Duration::from_secs(1);
/// How often the start rate is taken.
const RATE_WINDOW: Duration = Duration::from_millis(100);

/// The local queue, and the start rate that sizes it.
#[derive(Debug)]
pub struct ClaimedAhead {
    jobs: VecDeque<(ClaimedJob, Instant)>,
    /// Most jobs held ahead (the handlers' limit).
    most: usize,
    /// Longest a job is held before it is handed back.
    held_for: Duration,
    window_started: Instant,
    starts_in_window: u32,
    /// Handlers' starts per second, smoothed over the last few windows.
    start_rate: f64,
}

impl ClaimedAhead {
    pub fn new(most: usize, lease: Duration, now: Instant) -> Self {
        Self {
            jobs: VecDeque::new(),
            most,
            held_for: MOST_HELD.min(lease / 4),
            window_started: now,
            starts_in_window: 0,
            start_rate: 0.0,
        }
    }

    /// How often to look for jobs held too long: twice per longest hold,
    /// so none is held more than one and a half times it.
    pub fn check_every(&self) -> Duration {
        self.held_for / 2
    }

    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// How many jobs to hold ahead now: what the handlers start in
    /// [`AHEAD_OF_STARTS`] at their recent rate, at most `most`. A rate not
    /// taken for a while (no starts) halves with every window since, so a
    /// process that went quiet after short jobs does not claim ahead of the
    /// next, maybe slow, ones.
    pub fn wanted(&self, now: Instant) -> usize {
        let since = now.duration_since(self.window_started).as_secs_f64() / RATE_WINDOW.as_secs_f64();
        let rate = self.start_rate * 0.5f64.powf((since - 1.0).max(0.0));
        // Saturating float-to-int cast: a rate is never negative.
        ((rate * AHEAD_OF_STARTS.as_secs_f64()) as usize).min(self.most)
    }

    /// Holds claimed jobs until a slot frees (oldest claimed first out).
    pub fn hold(&mut self, jobs: impl IntoIterator<Item = ClaimedJob>, now: Instant) {
        self.jobs.extend(jobs.into_iter().map(|job| (job, now)));
    }

    /// The next job for a free slot, counted as a start.
    pub fn next(&mut self, now: Instant) -> Option<ClaimedJob> {
        let (job, _) = self.jobs.pop_front()?;
        self.count_start(now);
        Some(job)
    }

    /// The leases of jobs held too long, no longer held: to be handed back.
    pub fn take_overdue(&mut self, now: Instant) -> Vec<LeaseId> {
        let overdue = self.jobs.iter().take_while(|(_, since)| now.duration_since(*since) >= self.held_for).count();
        self.jobs.drain(..overdue).map(|(job, _)| job.lease).collect()
    }

    /// The leases of every job held, no longer held (the process drains).
    pub fn take_all(&mut self) -> Vec<LeaseId> {
        self.jobs.drain(..).map(|(job, _)| job.lease).collect()
    }

    fn count_start(&mut self, now: Instant) {
        self.starts_in_window += 1;
        let elapsed = now.duration_since(self.window_started);
        if elapsed >= RATE_WINDOW {
            let rate = f64::from(self.starts_in_window) / elapsed.as_secs_f64();
            // Half the last window, half the ones before: a burst's end
            // (or a switch to slow jobs) shrinks the queue within a few windows.
            self.start_rate = (self.start_rate + rate) / 2.0;
            self.window_started = now;
            self.starts_in_window = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{JobId, TenantId, UserId};
    use uuid::Uuid;

    fn job() -> ClaimedJob {
        ClaimedJob {
            id: JobId(Uuid::new_v4()),
            tenant: TenantId::parse("t".to_string()).unwrap(),
            user: UserId::parse("u".to_string()).unwrap(),
            job_type: "noop".into(),
            params: serde_json::Value::Null,
            attempt: 1,
            lease: LeaseId(Uuid::new_v4()),
            due_at: chrono::Utc::now(),
            format: None,
            scheduled_for: None,
            checkpoint: None,
            trace: None,
        }
    }

    /// Starts `n` jobs evenly over `over`, from `at`; returns the end.
    fn start_evenly(ahead: &mut ClaimedAhead, n: u32, over: Duration, at: Instant) -> Instant {
        for i in 1..=n {
            ahead.hold([job()], at);
            assert!(ahead.next(at + over * i / n).is_some());
        }
        at + over
    }

    #[test]
    fn nothing_is_held_ahead_of_handlers_that_start_nothing() {
        let now = Instant::now();
        let ahead = ClaimedAhead::new(100, Duration::from_secs(30), now);
        assert_eq!(ahead.wanted(now + RATE_WINDOW), 0);
    }

    #[test]
    fn fast_handlers_get_what_they_start_in_the_lead_time_and_slow_ones_nothing() {
        let now = Instant::now();
        let mut fast = ClaimedAhead::new(100, Duration::from_secs(30), now);
        let mut at = now;
        for _ in 0..8 {
            at = start_evenly(&mut fast, 500, RATE_WINDOW, at); // 5,000 starts a second
        }
        let wanted = fast.wanted(at);
        assert!((45..=50).contains(&wanted), "5,000 starts a second hold about 50 ahead, not {wanted}");

        // The same queue once its jobs became slow: ten starts a second.
        for _ in 0..8 {
            at = start_evenly(&mut fast, 1, RATE_WINDOW, at);
        }
        assert_eq!(fast.wanted(at), 0);
    }

    #[test]
    fn a_queue_that_went_quiet_after_short_jobs_stops_claiming_ahead() {
        let now = Instant::now();
        let mut ahead = ClaimedAhead::new(100, Duration::from_secs(30), now);
        let mut at = now;
        for _ in 0..8 {
            at = start_evenly(&mut ahead, 500, RATE_WINDOW, at);
        }
        assert!(ahead.wanted(at + RATE_WINDOW) >= 45);
        assert_eq!(ahead.wanted(at + 10 * RATE_WINDOW), 0);
    }

    #[test]
    fn no_more_than_the_handlers_limit_is_held_ahead() {
        let now = Instant::now();
        let mut ahead = ClaimedAhead::new(20, Duration::from_secs(30), now);
        let mut at = now;
        for _ in 0..8 {
            at = start_evenly(&mut ahead, 5_000, RATE_WINDOW, at);
        }
        assert_eq!(ahead.wanted(at), 20);
    }

    #[test]
    fn jobs_come_out_oldest_claim_first_and_those_held_too_long_are_handed_back() {
        let now = Instant::now();
        let mut ahead = ClaimedAhead::new(100, Duration::from_secs(30), now);
        let (old, newer) = (job(), job());
        ahead.hold([old.clone()], now);
        ahead.hold([newer.clone()], now + Duration::from_millis(500));

        assert!(ahead.take_overdue(now + Duration::from_millis(999)).is_empty());
        assert_eq!(ahead.take_overdue(now + MOST_HELD), vec![old.lease]);
        assert_eq!(ahead.len(), 1);
        assert_eq!(ahead.next(now + MOST_HELD).map(|job| job.id), Some(newer.id));
        assert!(ahead.is_empty());
    }

    #[test]
    fn a_short_lease_shortens_how_long_a_job_is_held() {
        let now = Instant::now();
        let mut ahead = ClaimedAhead::new(100, Duration::from_millis(400), now);
        let held = job();
        ahead.hold([held.clone()], now);
        assert!(ahead.take_overdue(now + Duration::from_millis(99)).is_empty());
        assert_eq!(ahead.take_overdue(now + Duration::from_millis(100)), vec![held.lease]);
    }

    #[test]
    fn a_drain_takes_every_job_held() {
        let now = Instant::now();
        let mut ahead = ClaimedAhead::new(100, Duration::from_secs(30), now);
        let jobs = [job(), job(), job()];
        ahead.hold(jobs.clone(), now);
        assert_eq!(ahead.take_all(), jobs.iter().map(|job| job.lease).collect::<Vec<_>>());
        assert!(ahead.is_empty());
    }
}
