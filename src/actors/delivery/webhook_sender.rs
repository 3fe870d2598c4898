//! The WebhookSender: makes the webhook deliveries. A delivery was written
//! in the statement that ended its job; the sender claims due ones (with a
//! lock, so a crash mid-send makes them due again), POSTs each, signed as
//! Standard Webhooks specifies ([`crate::outbound::webhook_signature`]), and records the
//! endpoint's answer within moments, several attempts per statement. Any
//! answer but a 2xx is tried again with backoff, for `[webhooks]
//! max_attempts` attempts.
//!
//! Attempts are a pipeline of up to [`IN_FLIGHT`], at most [`PER_ENDPOINT`]
//! of them to one endpoint: as they finish, more are claimed into the free
//! slots. A round-by-round sender waited for its slowest attempt, so one
//! tenant's endpoint that never answered held every tenant's deliveries up
//! for the whole timeout; without the cap per endpoint, its backlog would
//! fill every slot.
//!
//! The body is `{"type": "job.completed", "timestamp": …, "data": <the job
//! as GET /jobs/{id} shows it>}`; `data.result_url` is signed afresh for each
//! attempt and works for `storage.url_expiry`, as the API's does: a receiver
//! that downloads later asks `GET /jobs/{id}` for a fresh one. A
//! `type.paused` delivery's `data` is what was written when it was queued
//! (`errand_queue_pause_webhooks`).
//!
//! Each attempt's connection goes only to addresses that pass the check of
//! [`crate::outbound::policy`] (the client resolves through it: DNS can change after
//! registration, or between a check and a connect). The request goes through
//! no proxy, follows no redirect, and its answer's body is not read.
//!
//! A stopping process claims no more, and its attempts in flight are made and
//! recorded before it answers [`FinishSending`]: what it claimed is not left
//! to its lock (see `rounds.rs`).

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use actix::prelude::*;
use serde_json::json;
use tracing::Instrument;
use uuid::Uuid;

use crate::actors::delivery::rounds::FinishSending;
use crate::actors::delivery::until_recorded::until_answered;
use crate::config::WebhookSettings;
use crate::domain::{Job, TraceParent};
use crate::jobs::{JobView, downloadable, rfc3339};
use crate::outbound::policy::OutboundPolicy;
use crate::storage::Storage;
use crate::store::{DeliveryOutcome, DeliverySubject, Store, WebhookDelivery};
use crate::telemetry::traces;

/// Deliveries in flight at once, at most. They are sent as a pipeline, not
/// in rounds: a slow endpoint (up to `[webhooks] timeout`) holds up its own
/// deliveries only, while the rest go on around it.
const IN_FLIGHT: usize = 64;
/// Deliveries to one endpoint in flight at once, at most: an endpoint that
/// never answers, however many deliveries it has due, takes this many slots.
const PER_ENDPOINT: usize = 8;
/// Claims wait until this many slots are free, so that each takes a batch.
const CLAIM_AT_LEAST: usize = IN_FLIGHT / 4;
/// Attempts recorded by one statement, at most (a statement and commit
/// each would cost a drain beside the sender more than the attempts).
const RECORD_BATCH: usize = 50;
/// How long a finished attempt waits for others to be recorded with it.
const RECORD_WITHIN: Duration = Duration::from_millis(50);
/// How long a claimed delivery is ours before another sender may take it:
/// longer than a request may take.
const SEND_LOCK: Duration = Duration::from_secs(90);

/// What a delivery's body needs to sign a result's download URL.
#[derive(Clone)]
pub struct ResultUrls {
    pub storage: Storage,
    pub expiry: Duration,
}

pub struct WebhookSender {
    sender: Arc<Sender>,
    poll_interval: Duration,
    /// Attempts in flight, by endpoint.
    in_flight_to: HashMap<Uuid, usize>,
    claiming: bool,
    /// The last claim found some: more may be due now.
    more_due: bool,
    /// Attempts made and not yet recorded.
    attempted: Vec<Attempted>,
    record_scheduled: bool,
    /// Statements recording attempts, under way.
    recording: usize,
    /// Stopping: claim no more; tell these once nothing is in flight or unrecorded.
    finishing: Option<Vec<tokio::sync::oneshot::Sender<()>>>,
}

/// One attempt of a delivery, made.
struct Attempted {
    delivery: WebhookDelivery,
    outcome: DeliveryOutcome,
    latency: Duration,
}

impl WebhookSender {
    pub fn new(store: Store, settings: WebhookSettings, urls: ResultUrls) -> Result<Self, reqwest::Error> {
        let policy = OutboundPolicy::new(settings.allow_hosts.iter().cloned());
        // No proxy: the checked addresses are where the connection goes.
        let client = reqwest::Client::builder()
            .timeout(settings.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(policy.resolver())
            .user_agent(concat!("errand-webhooks/", env!("CARGO_PKG_VERSION")))
            .build()?;
        let poll_interval = settings.poll_interval;
        Ok(Self {
            sender: Arc::new(Sender { store, client, policy, settings, urls }),
            poll_interval,
            in_flight_to: HashMap::new(),
            claiming: false,
            more_due: false,
            attempted: Vec::new(),
            record_scheduled: false,
            recording: 0,
            finishing: None,
        })
    }

    fn in_flight(&self) -> usize {
        self.in_flight_to.values().sum()
    }

    /// Claims due deliveries into the free slots, if enough are free.
    fn claim(&mut self, ctx: &mut Context<Self>) {
        let room = IN_FLIGHT - self.in_flight();
        if self.claiming || room < CLAIM_AT_LEAST || self.finishing.is_some() {
            return;
        }
        self.claiming = true;
        let sender = self.sender.clone();
        let busy = self.in_flight_to.clone();
        async move { sender.store.webhook_outbox().claim_due(room as i64, SEND_LOCK, &busy, PER_ENDPOINT).await }
            .into_actor(self)
            .map(move |due, act, ctx| {
                act.claiming = false;
                let due = match due {
                    Ok(due) => due,
                    Err(error) => {
                        act.tell_if_finished();
                        return tracing::warn!(%error, "could not read the webhook deliveries");
                    }
                };
                // Fewer than asked may still leave more due (passed over at an
                // endpoint's cap): only a claim that found none says there is no more.
                act.more_due = !due.is_empty();
                for delivery in due {
                    act.send(delivery, ctx);
                }
                act.tell_if_finished();
            })
            .spawn(ctx);
    }

    /// Makes one attempt of `delivery`, beside the others in flight.
    fn send(&mut self, delivery: WebhookDelivery, ctx: &mut Context<Self>) {
        *self.in_flight_to.entry(delivery.endpoint).or_default() += 1;
        let sender = self.sender.clone();
        async move {
            let (outcome, latency) = sender.attempt_and_judge(&delivery).await;
            Attempted { delivery, outcome, latency }
        }
        .into_actor(self)
        .map(|attempted, act, ctx| {
            if let Entry::Occupied(mut to) = act.in_flight_to.entry(attempted.delivery.endpoint) {
                *to.get_mut() -= 1;
                if *to.get() == 0 {
                    to.remove();
                }
            }
            act.attempted.push(attempted);
            // Stopping: the last attempt in flight is recorded at once.
            if act.attempted.len() >= RECORD_BATCH || (act.finishing.is_some() && act.in_flight() == 0) {
                act.record(ctx);
            } else if !act.record_scheduled {
                act.record_scheduled = true;
                ctx.run_later(RECORD_WITHIN, |act, ctx| {
                    act.record_scheduled = false;
                    act.record(ctx);
                });
            }
            if act.more_due {
                act.claim(ctx);
            }
        })
        .spawn(ctx);
    }

    /// Records the attempts made so far, in one statement, beside what goes on.
    fn record(&mut self, ctx: &mut Context<Self>) {
        if self.attempted.is_empty() {
            return;
        }
        let attempted = std::mem::take(&mut self.attempted);
        let sender = self.sender.clone();
        self.recording += 1;
        ctx.spawn(async move { sender.record(attempted).await }.into_actor(self).map(|(), act, _| {
            act.recording -= 1;
            act.tell_if_finished();
        }));
    }

    /// While stopping, tells those waiting once no claim, attempt or record is under way.
    fn tell_if_finished(&mut self) {
        let idle = !self.claiming && self.in_flight() == 0 && self.attempted.is_empty() && self.recording == 0;
        if idle && let Some(waiting) = self.finishing.as_mut() {
            for waiter in waiting.drain(..) {
                let _ = waiter.send(());
            }
        }
    }
}

impl Handler<FinishSending> for WebhookSender {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, _: FinishSending, ctx: &mut Self::Context) -> Self::Result {
        let (told, finished) = tokio::sync::oneshot::channel();
        self.finishing.get_or_insert_with(Vec::new).push(told);
        if self.in_flight() == 0 {
            self.record(ctx);
        }
        self.tell_if_finished();
        // A dropped sender (the actor stopped) ends the wait as well.
        Box::pin(async move {
            let _ = finished.await;
        })
    }
}

/// What sending needs, shared by the attempts in flight.
struct Sender {
    store: Store,
    client: reqwest::Client,
    policy: OutboundPolicy,
    settings: WebhookSettings,
    urls: ResultUrls,
}

impl Sender {
    /// Records what became of `attempted`, in one statement, then disables
    /// the endpoints whose deliveries keep failing.
    async fn record(&self, attempted: Vec<Attempted>) {
        let attempts: Vec<_> = attempted.iter().map(|a| (&a.delivery, &a.outcome, a.latency)).collect();
        let outbox = self.store.webhook_outbox();
        until_answered(format!("{} webhook deliveries", attempts.len()), || outbox.record(&attempts)).await;
        for a in &attempted {
            if let DeliveryOutcome::Failed { delay: None, .. } = a.outcome {
                self.disable_if_failing(&a.delivery).await;
            }
        }
    }

    /// Makes one attempt of `delivery`: what became of it, and how long it took.
    async fn attempt_and_judge(&self, delivery: &WebhookDelivery) -> (DeliveryOutcome, Duration) {
        let started = Instant::now();
        let span = delivery_span(delivery);
        let outcome = match self.attempt(delivery, &span).instrument(span.clone()).await {
            Ok(()) => DeliveryOutcome::Delivered,
            Err((status, error)) => {
                let attempt = u32::try_from(delivery.attempt).unwrap_or(u32::MAX);
                let policy = self.settings.retry_policy();
                let delay = policy.allows_another(attempt).then(|| policy.next_delay(attempt));
                tracing::info!(delivery = %delivery.id, attempt, %error, again = delay.is_some(), "webhook not delivered");
                span.record("otel.status_code", "error");
                span.record("otel.status_description", error.as_str());
                DeliveryOutcome::Failed { status, error, delay }
            }
        };
        let result = match &outcome {
            DeliveryOutcome::Delivered => "delivered",
            DeliveryOutcome::Failed { delay: Some(_), .. } => "retried",
            DeliveryOutcome::Failed { delay: None, .. } => "failed",
        };
        crate::telemetry::metrics().webhooks.add(result, 1);
        (outcome, started.elapsed())
    }

    /// After a delivery failed for good: an endpoint whose last
    /// `disable_after` deliveries all failed gets no more until an admin
    /// registers it again (`GET /webhooks` shows it disabled, and why).
    async fn disable_if_failing(&self, delivery: &WebhookDelivery) {
        let failures = self.settings.disable_after.get();
        let reason = format!("its last {failures} deliveries failed");
        match self.store.webhook_outbox().disable_if_failing(delivery.endpoint, failures, &reason).await {
            Ok(Some(url)) => {
                tracing::warn!(endpoint = %delivery.endpoint, url, "webhook endpoint disabled: {reason}");
                crate::telemetry::metrics().webhook_endpoints_disabled.inc();
            }
            Ok(None) => {}
            // The next failed delivery checks again.
            Err(error) => tracing::warn!(%error, endpoint = %delivery.endpoint, "could not check a failing endpoint"),
        }
    }

    /// One POST of `delivery`, in `span`: `Ok` on a 2xx, else the status (if any) and why.
    async fn attempt(&self, delivery: &WebhookDelivery, span: &tracing::Span) -> Result<(), (Option<u16>, String)> {
        // The addresses are checked as the client resolves them, for this connection.
        let url = self.policy.check_form(&delivery.url).map_err(|refused| (None, refused.to_string()))?;
        let data = match &delivery.about {
            DeliverySubject::Job(job) => json!(JobView::of(job.as_ref().clone(), self.result_url(job).await)),
            DeliverySubject::Event(details) => details.clone(),
        };
        let body = serde_json::to_vec(&json!({
            "type": delivery.event,
            "timestamp": rfc3339(chrono::Utc::now()),
            "data": data,
        }))
        .map_err(|e| (None, e.to_string()))?;
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        let signed = crate::outbound::webhook_signature::sign(&delivery.secret, &delivery.id.to_string(), now, &body)
            .map_err(|e| (None, e.to_string()))?;
        let mut request = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .header("webhook-id", signed.id)
            .header("webhook-timestamp", signed.timestamp)
            .header("webhook-signature", signed.signature);
        // The receiver's work joins the trace: this span's, or (when errand
        // exports no spans) the job's request's, passed on as it came where
        // the delivery continues it.
        if let Some(trace) = traces::parent_of(span).or_else(|| continued(delivery)) {
            request = request.header("traceparent", trace.as_str());
        }
        let response = request.body(body).send().await.map_err(|e| match crate::outbound::policy::refusal_in(&e) {
            Some(refused) => (None, refused.to_string()),
            None => (None, format!("no answer: {e}")),
        })?;
        let status = response.status();
        if status.is_success() {
            Ok(())
        } else {
            Err((Some(status.as_u16()), format!("the endpoint answered {status}")))
        }
    }

    /// A fresh download URL of a completed job's file that is still kept.
    async fn result_url(&self, job: &Job) -> Option<String> {
        let file = downloadable(job)?;
        match self.urls.storage.result_url(&file, self.urls.expiry).await {
            Ok(url) => Some(url),
            Err(error) => {
                tracing::warn!(%error, job = %job.id, "could not sign a result URL for a webhook");
                None
            }
        }
    }
}

impl Actor for WebhookSender {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(self.poll_interval, |act, ctx| act.claim(ctx));
        self.claim(ctx);
    }
}

/// The job's trace, where the delivery continues it (`JobTrace::continued_by`).
fn continued(delivery: &WebhookDelivery) -> Option<TraceParent> {
    let DeliverySubject::Job(job) = &delivery.about else { return None };
    delivery.trace.as_ref()?.parent_for(job.attempt.into()).cloned()
}

/// A delivery's span (a client span): in the trace of the request that
/// recorded its job when the job ended in its first attempt, else in one of
/// its own, linked to it, as the job's later attempts are
/// (`telemetry::traces`).
fn delivery_span(delivery: &WebhookDelivery) -> tracing::Span {
    let span = tracing::info_span!(
        parent: None,
        "webhook delivery",
        delivery = %delivery.id,
        event = %delivery.event,
        attempt = delivery.attempt,
        tenant = tracing::field::Empty,
        otel.name = format!("send {}", delivery.event),
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
        otel.status_description = tracing::field::Empty,
        http.request.method = "POST",
        server.address = tracing::field::Empty,
    );
    if let DeliverySubject::Job(job) = &delivery.about {
        span.record("tenant", job.tenant.as_str());
        traces::join_job_trace(&span, delivery.trace.as_ref(), job.attempt.into());
    }
    if let Ok(url) = url::Url::parse(&delivery.url) {
        span.record("server.address", url.host_str().unwrap_or_default());
    }
    span
}
