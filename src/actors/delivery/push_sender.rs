//! The PushSender: delivers the Web Push outbox. A message was written in
//! the statement that ended its job, one per device its owner subscribed;
//! the sender claims due ones (with a lock, so a crash mid-send makes them
//! due again), encrypts each to its device's keys, POSTs it to the device's
//! push service with errand's VAPID token, and records the answer at once.
//! A 429 or 5xx, or no answer, is tried again with backoff; a 404 or 410
//! means the browser dropped the subscription: it is deleted.
//!
//! The payload is `{"title", "body", "url", "tag"}`: `url` is the job's
//! signed link (`/links/jobs/{id}`, as the email's), never a token or a
//! storage URL; `tag` is the in-app notification's id, so that an open
//! tab's toast and the push are one notice.
//!
//! Push services' hosts are few and known (`[push] allow_hosts`), so
//! messages go in batches, as emails do; each connection still goes only to
//! addresses the outbound rules allow (`outbound::policy`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use actix::prelude::*;
use futures_util::future::join_all;
use serde_json::json;
use url::Url;

use crate::actors::delivery::rounds::{FinishSending, Rounds};
use crate::actors::delivery::until_recorded::until_answered;
use crate::config::WebPushSettings;
use crate::domain::JobState;
use crate::domain::keys::vapid::VapidKey;
use crate::jobs::JobTypes;
use crate::outbound::links::JobLinks;
use crate::outbound::policy::{OutboundPolicy, refusal_in};
use crate::outbound::web_push::{MAX_PAYLOAD, SubscriptionKeys};
use crate::store::{OutboxPush, PushOutcome, Store};

/// There may be push messages due.
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "()")]
pub struct PushDue;

/// Messages claimed and sent at once, at most.
const BATCH: usize = 50;
/// How long a claimed message is ours before another sender may take it.
const SEND_LOCK: Duration = Duration::from_secs(90);
/// A notice's body, at most (a failure's message is cut to it).
const BODY_CHARS: usize = 160;

pub struct PushSender {
    sender: std::sync::Arc<Sender>,
    poll_interval: Duration,
    rounds: Rounds,
}

/// One attempt made, to record.
struct Attempted {
    push: OutboxPush,
    outcome: PushOutcome,
    /// Its push service said the device is gone.
    gone: bool,
}

/// What sending needs.
struct Sender {
    store: Store,
    client: reqwest::Client,
    vapid: VapidKey,
    /// VAPID headers by push service origin, with when each stops being
    /// reused: a token is good for 12 hours, and signing one per message
    /// cost more than the message's encryption.
    tokens: std::sync::Mutex<std::collections::HashMap<String, (String, u64)>>,
    job_types: JobTypes,
    links: JobLinks,
    /// How long a job's link works when it has no file that says.
    link_lifetime: Duration,
    settings: WebPushSettings,
}

impl PushSender {
    pub fn new(
        store: Store,
        vapid: VapidKey,
        settings: WebPushSettings,
        job_types: JobTypes,
        links: JobLinks,
        link_lifetime: Duration,
    ) -> Result<Self, reqwest::Error> {
        let policy = OutboundPolicy::new(settings.private_hosts.iter().cloned());
        // No proxy, no redirect: the checked addresses are where the connection goes.
        let client = reqwest::Client::builder()
            .timeout(settings.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(policy.resolver())
            .user_agent(concat!("errand-push/", env!("CARGO_PKG_VERSION")))
            .build()?;
        let poll_interval = settings.poll_interval;
        let tokens = std::sync::Mutex::default();
        let sender = Sender { store, client, vapid, tokens, job_types, links, link_lifetime, settings };
        Ok(Self { sender: std::sync::Arc::new(sender), poll_interval, rounds: Rounds::default() })
    }

    fn deliver_due(&mut self, ctx: &mut Context<Self>) {
        if !self.rounds.start() {
            return;
        }
        let sender = self.sender.clone();
        async move {
            let due = match sender.store.push_outbox().claim_due(BATCH as i64, SEND_LOCK).await {
                Ok(due) => due,
                Err(error) => {
                    tracing::warn!(%error, "could not read the push outbox");
                    return 0;
                }
            };
            let count = due.len();
            let attempts = join_all(due.into_iter().map(|push| sender.attempt_counted(push))).await;
            sender.record(attempts).await;
            count
        }
        .into_actor(self)
        .map(|count, act, ctx| {
            if act.rounds.end(count, BATCH) {
                act.deliver_due(ctx);
            }
        })
        .spawn(ctx);
    }
}

impl Sender {
    /// Sends one message: what became of it, and whether its device is gone.
    async fn attempt_counted(&self, push: OutboxPush) -> Attempted {
        let (outcome, gone) = self.attempt(&push).await;
        let result = match (&outcome, gone) {
            (_, true) => "gone",
            (PushOutcome::Sent { .. }, _) => "sent",
            (PushOutcome::Retry { .. }, _) => "deferred",
            (PushOutcome::Failed { .. }, _) => "refused",
        };
        crate::telemetry::metrics().pushes.add(result, 1);
        Attempted { push, outcome, gone }
    }

    /// Records what became of a batch's attempts, in one statement (a crash
    /// before it sends the batch again: a device shows a notice again under
    /// the same tag, which replaces the one shown), then forgets the devices
    /// whose push service said they are gone.
    async fn record(&self, attempts: Vec<Attempted>) {
        if attempts.is_empty() {
            return;
        }
        let gone: Vec<uuid::Uuid> = attempts.iter().filter(|a| a.gone).map(|a| a.push.subscription).collect();
        let recorded: Vec<(OutboxPush, PushOutcome)> = attempts.into_iter().map(|a| (a.push, a.outcome)).collect();
        let outbox = self.store.push_outbox();
        let what = format!("{} push messages", recorded.len());
        until_answered(&what, || outbox.record(&recorded)).await;
        if !gone.is_empty() {
            until_answered(&what, || outbox.forget_devices(&gone)).await;
        }
    }

    /// One attempt: its outcome, and whether the push service no longer
    /// knows the device.
    async fn attempt(&self, push: &OutboxPush) -> (PushOutcome, bool) {
        let refused = |error: String| (PushOutcome::Failed { status: None, error }, false);
        let Some(device) = &push.device else { return refused("the device was unsubscribed".into()) };
        let (endpoint, keys) =
            match (Url::parse(&device.endpoint), SubscriptionKeys::decode(&device.p256dh, &device.auth)) {
                (Ok(endpoint), Ok(keys)) => (endpoint, keys),
                (Err(error), _) => return refused(format!("the endpoint is not a URL: {error}")),
                (_, Err(error)) => return refused(error.to_string()),
            };
        let request = self.notice(push).and_then(|payload| {
            Ok((keys.encrypt(&payload).map_err(|e| e.to_string())?, self.authorization(&endpoint)?))
        });
        let (body, authorization) = match request {
            Ok(request) => request,
            Err(error) => return refused(error),
        };
        let sent = self
            .client
            .post(endpoint)
            .header("TTL", self.settings.ttl.as_secs().to_string())
            .header("Urgency", "normal")
            .header("Content-Encoding", "aes128gcm")
            .header("Content-Type", "application/octet-stream")
            .header("Authorization", authorization)
            .body(body)
            .send()
            .await;
        let status = match sent {
            Ok(response) => response.status(),
            Err(error) => {
                if let Some(refusal) = refusal_in(&error) {
                    return refused(refusal.to_string());
                }
                return (self.again(push, None, format!("no answer from the push service: {error}")), false);
            }
        };
        let code = status.as_u16();
        match code {
            200..=299 => (PushOutcome::Sent { status: code }, false),
            404 | 410 => {
                let error = format!("the push service no longer knows the device ({code}): unsubscribed");
                (PushOutcome::Failed { status: Some(code), error }, true)
            }
            429 | 500..=599 => (self.again(push, Some(code), format!("the push service answered {status}")), false),
            _ => {
                let error = format!("the push service refused the message: {status}");
                (PushOutcome::Failed { status: Some(code), error }, false)
            }
        }
    }

    /// The VAPID header for `endpoint`'s push service: the one made for its
    /// origin while it has more than an hour to go, else a new one.
    fn authorization(&self, endpoint: &Url) -> Result<String, String> {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        let origin = endpoint.origin().ascii_serialization();
        let mut tokens = self.tokens.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((header, reuse_until)) = tokens.get(&origin)
            && now < *reuse_until
        {
            return Ok(header.clone());
        }
        let header = self.vapid.authorization(endpoint, now).map_err(|e| e.to_string())?;
        // Valid 12 hours from `now`; reused for 11, so no push service sees one about to expire.
        tokens.insert(origin, (header.clone(), now + 11 * 3600));
        Ok(header)
    }

    /// Another attempt after backoff, or failed when out of attempts.
    fn again(&self, push: &OutboxPush, status: Option<u16>, error: String) -> PushOutcome {
        let attempt = u32::try_from(push.attempt).unwrap_or(u32::MAX);
        let policy = self.settings.retry_policy();
        if policy.allows_another(attempt) {
            PushOutcome::Retry { status, error, delay: policy.next_delay(attempt) }
        } else {
            PushOutcome::Failed { status, error: format!("{error}; out of attempts") }
        }
    }

    /// The notice, as the payload the device decrypts: a title, a short
    /// body, the job's signed link, and the tag its in-app toast has too.
    fn notice(&self, push: &OutboxPush) -> Result<Vec<u8>, String> {
        let locale = push.locale;
        let name = self.job_types.display_name(&push.job_type, locale);
        let named = [("name", crate::domain::Arg::from(name.as_str()))];
        let file =
            crate::storage::ResultFile::of(push.result.as_ref()).filter(|_| push.job_status == JobState::Completed);
        let (title, body) = match push.job_status {
            JobState::Completed => (
                locale.say("job-ready", &named),
                file.as_ref().map_or_else(|| locale.say("push-open-result", &[]), |f| f.file_name.clone()),
            ),
            JobState::Cancelled => {
                (locale.say("job-cancelled", &named), push.error_message.clone().unwrap_or_default())
            }
            _ => (locale.say("job-failed", &named), push.error_message.clone().unwrap_or_default()),
        };
        let finished_at = push.finished_at.unwrap_or_else(chrono::Utc::now);
        let expires = match &file {
            Some(file) => file.expires_at,
            None => finished_at + chrono::Duration::from_std(self.link_lifetime).unwrap_or(chrono::Duration::days(7)),
        };
        let tag = push.notification.map_or_else(|| push.job.to_string(), |id| id.to_string());
        let payload = json!({
            "title": title,
            "body": body.chars().take(BODY_CHARS).collect::<String>(),
            "url": self.links.link(push.job, &push.tenant, &push.user, expires, locale),
            "tag": tag,
            "job_id": push.job,
            "status": push.job_status.status().as_str(),
        });
        let payload = serde_json::to_vec(&payload).map_err(|e| e.to_string())?;
        if payload.len() > MAX_PAYLOAD {
            return Err(format!("the notice is {} bytes, more than a push message holds", payload.len()));
        }
        Ok(payload)
    }
}

impl Actor for PushSender {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(self.poll_interval, |act, ctx| act.deliver_due(ctx));
        self.deliver_due(ctx);
    }
}

impl Handler<PushDue> for PushSender {
    type Result = ();

    fn handle(&mut self, _: PushDue, ctx: &mut Self::Context) {
        self.deliver_due(ctx);
    }
}

impl Handler<FinishSending> for PushSender {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, _: FinishSending, _: &mut Self::Context) -> Self::Result {
        Box::pin(self.rounds.finish())
    }
}
