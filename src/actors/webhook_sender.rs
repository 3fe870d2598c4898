//! The WebhookSender: makes the webhook deliveries. A delivery was written
//! in the statement that ended its job; the sender claims due ones (with a
//! lock, so a crash mid-send makes them due again), POSTs each, signed as
//! Standard Webhooks specifies ([`crate::webhooks`]), and records the
//! endpoint's answer at once. Any answer but a 2xx is tried again with
//! backoff, for `[webhooks] max_attempts` attempts.
//!
//! The body is `{"type": "job.completed", "timestamp": …, "data": <the job
//! as GET /jobs/{id} shows it>}`; `data.result_url` is signed afresh for each
//! attempt and works for `storage.url_expiry`, as the API's does: a receiver
//! that downloads later asks `GET /jobs/{id}` for a fresh one.
//!
//! Before each attempt the endpoint's address is checked again
//! ([`crate::outbound`]): DNS can change after registration. The request
//! follows no redirect, and its answer's body is not read.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use actix::prelude::*;
use futures_util::future::join_all;
use serde_json::json;

use super::record::until_answered;
use crate::config::WebhookSettings;
use crate::jobs::{JobView, downloadable, rfc3339};
use crate::outbound::OutboundPolicy;
use crate::storage::Storage;
use crate::store::{DeliveryOutcome, Store, WebhookDelivery};

/// Deliveries claimed and sent at once, at most.
const BATCH: usize = 20;
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
    store: Store,
    client: reqwest::Client,
    policy: OutboundPolicy,
    settings: WebhookSettings,
    urls: ResultUrls,
    sending: bool,
}

impl WebhookSender {
    pub fn new(store: Store, settings: WebhookSettings, urls: ResultUrls) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder()
            .timeout(settings.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("errand-webhooks/", env!("CARGO_PKG_VERSION")))
            .build()?;
        let policy = OutboundPolicy::new(settings.allow_hosts.iter().cloned());
        Ok(Self { store, client, policy, settings, urls, sending: false })
    }

    fn deliver_due(&mut self, ctx: &mut Context<Self>) {
        if self.sending {
            return;
        }
        self.sending = true;
        let sender = Sender {
            store: self.store.clone(),
            client: self.client.clone(),
            policy: self.policy.clone(),
            settings: self.settings.clone(),
            urls: self.urls.clone(),
        };
        async move {
            let due = match sender.store.webhook_outbox().claim_due(BATCH as i64, SEND_LOCK).await {
                Ok(due) => due,
                Err(error) => {
                    tracing::warn!(%error, "could not read the webhook deliveries");
                    return 0;
                }
            };
            let count = due.len();
            sender.deliver(due).await;
            count
        }
        .into_actor(self)
        .map(|count, act, ctx| {
            act.sending = false;
            if count == BATCH {
                act.deliver_due(ctx);
            }
        })
        .spawn(ctx);
    }
}

/// What one pass of sending needs, owned by its future.
struct Sender {
    store: Store,
    client: reqwest::Client,
    policy: OutboundPolicy,
    settings: WebhookSettings,
    urls: ResultUrls,
}

impl Sender {
    /// Makes one attempt of each delivery, at once, and records what became
    /// of them all in one statement (a statement and commit each cost the
    /// drain, beside which this runs, more than the attempts themselves).
    async fn deliver(&self, due: Vec<WebhookDelivery>) {
        let outcomes = join_all(due.iter().map(|delivery| self.attempt_and_judge(delivery))).await;
        let attempts: Vec<_> =
            due.iter().zip(&outcomes).map(|(d, (outcome, latency))| (d, outcome, *latency)).collect();
        if attempts.is_empty() {
            return;
        }
        let outbox = self.store.webhook_outbox();
        until_answered(format!("{} webhook deliveries", attempts.len()), || outbox.record(&attempts)).await;
        for (delivery, (outcome, _)) in due.iter().zip(&outcomes) {
            if let DeliveryOutcome::Failed { delay: None, .. } = outcome {
                self.disable_if_failing(delivery).await;
            }
        }
    }

    /// Makes one attempt of `delivery`: what became of it, and how long it took.
    async fn attempt_and_judge(&self, delivery: &WebhookDelivery) -> (DeliveryOutcome, Duration) {
        let started = Instant::now();
        let outcome = match self.attempt(delivery).await {
            Ok(()) => DeliveryOutcome::Delivered,
            Err((status, error)) => {
                let attempt = u32::try_from(delivery.attempt).unwrap_or(u32::MAX);
                let policy = self.settings.retry_policy();
                let delay = policy.allows_another(attempt).then(|| policy.next_delay(attempt));
                tracing::info!(delivery = %delivery.id, attempt, %error, again = delay.is_some(), "webhook not delivered");
                DeliveryOutcome::Failed { status, error, delay }
            }
        };
        let result = match &outcome {
            DeliveryOutcome::Delivered => "delivered",
            DeliveryOutcome::Failed { delay: Some(_), .. } => "retried",
            DeliveryOutcome::Failed { delay: None, .. } => "failed",
        };
        metrics::counter!("errand_webhooks_total", "result" => result).increment(1);
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
                metrics::counter!("errand_webhook_endpoints_disabled_total").increment(1);
            }
            Ok(None) => {}
            // The next failed delivery checks again.
            Err(error) => tracing::warn!(%error, endpoint = %delivery.endpoint, "could not check a failing endpoint"),
        }
    }

    /// One POST of `delivery`: `Ok` on a 2xx, else the status (if any) and why.
    async fn attempt(&self, delivery: &WebhookDelivery) -> Result<(), (Option<u16>, String)> {
        let url = self.policy.check(&delivery.url).await.map_err(|refused| (None, refused.to_string()))?;
        let body = serde_json::to_vec(&json!({
            "type": delivery.event,
            "timestamp": rfc3339(chrono::Utc::now()),
            "data": JobView::of(delivery.job.clone(), self.result_url(delivery).await),
        }))
        .map_err(|e| (None, e.to_string()))?;
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        let signed = crate::webhooks::sign(&delivery.secret, &delivery.id.to_string(), now, &body)
            .map_err(|e| (None, e.to_string()))?;
        let response = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .header("webhook-id", signed.id)
            .header("webhook-timestamp", signed.timestamp)
            .header("webhook-signature", signed.signature)
            .body(body)
            .send()
            .await
            .map_err(|e| (None, format!("no answer: {e}")))?;
        let status = response.status();
        if status.is_success() {
            Ok(())
        } else {
            Err((Some(status.as_u16()), format!("the endpoint answered {status}")))
        }
    }

    /// A fresh download URL of a completed job's file that is still kept.
    async fn result_url(&self, delivery: &WebhookDelivery) -> Option<String> {
        let file = downloadable(&delivery.job)?;
        match self.urls.storage.result_url(&file, self.urls.expiry).await {
            Ok(url) => Some(url),
            Err(error) => {
                tracing::warn!(%error, job = %delivery.job.id, "could not sign a result URL for a webhook");
                None
            }
        }
    }
}

impl Actor for WebhookSender {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(self.settings.poll_interval, |act, ctx| act.deliver_due(ctx));
        self.deliver_due(ctx);
    }
}
