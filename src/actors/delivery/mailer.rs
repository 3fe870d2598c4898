//! The Mailer: delivers the email outbox. Emails were written in the
//! statement that ended their job; the Mailer claims due ones (with a lock,
//! so a crash mid-send makes them due again), sends each over SMTP and
//! records the server's answer at once. Transient failures retry with
//! backoff; refusals that will never succeed are recorded and stop.
//!
//! An email is sent at most once per recorded delivery: what became of a
//! send is recorded however long the database takes to answer (a failover),
//! within the lock. The one resend a crash between sending and recording can
//! cause carries the same Message-ID (derived from the job), so it is
//! recognisably the same message.

use std::time::Duration;

use actix::prelude::*;
use futures_util::future::join_all;
use tracing::Instrument;

use crate::actors::delivery::rounds::{FinishSending, Rounds};
use crate::actors::delivery::until_recorded::until_answered;
use crate::config::EmailSettings;
use crate::domain::NotificationRules;
use crate::jobs::JobTypes;
use crate::outbound::mail::{Addressee, BatchEmail, CompletionEmail, DigestEmail, DigestEntry, MailError, SmtpMailer};
use crate::store::{EmailAbout, OutboxEmail, Store};

/// There may be emails due.
#[derive(Debug, Clone, Copy, Message)]
#[rtype(result = "()")]
pub struct MailDue;

/// Emails claimed and sent at once, at most.
const BATCH: usize = 20;
/// How long a claimed email is ours before another sender may take it.
const SEND_LOCK: Duration = Duration::from_secs(90);

pub struct Mailer {
    store: Store,
    smtp: SmtpMailer,
    job_types: JobTypes,
    settings: EmailSettings,
    rounds: Rounds,
}

impl Mailer {
    pub fn new(store: Store, smtp: SmtpMailer, job_types: JobTypes, settings: EmailSettings) -> Self {
        Self { store, smtp, job_types, settings, rounds: Rounds::default() }
    }

    fn deliver_due(&mut self, ctx: &mut Context<Self>) {
        if !self.rounds.start() {
            return;
        }
        let (store, smtp, job_types, settings) =
            (self.store.clone(), self.smtp.clone(), self.job_types.clone(), self.settings.clone());
        async move {
            let due = match store.outbox().claim_due(BATCH as i64, SEND_LOCK).await {
                Ok(due) => due,
                Err(error) => {
                    tracing::warn!(%error, "could not read the email outbox");
                    return 0;
                }
            };
            let count = due.len();
            join_all(due.into_iter().map(|email| deliver(&store, &smtp, &job_types, &settings, email))).await;
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

/// Sends one email and records the outcome, in a span of its job's trace.
async fn deliver(store: &Store, smtp: &SmtpMailer, job_types: &JobTypes, settings: &EmailSettings, email: OutboxEmail) {
    let span = tracing::info_span!(
        parent: None,
        "email",
        email = %email.id,
        tenant = %email.tenant,
        attempt = email.attempt,
        otel.name = "send email",
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
    );
    if let EmailAbout::Job(job) = &email.about {
        crate::telemetry::traces::join_job_trace(&span, job.trace.as_ref(), job.job_attempts.into());
    }
    send(store, smtp, job_types, settings, email, &span).instrument(span.clone()).await;
}

/// The email's message, rendered for its job, its batch or its digest.
fn render(smtp: &SmtpMailer, rules: &NotificationRules, job_types: &JobTypes, email: &OutboxEmail) -> Rendered {
    match &email.about {
        EmailAbout::Job(job) => smtp.render(&CompletionEmail {
            to: addressee(rules, job_types, email, &job.job_type),
            job: job.job,
            run: job.run,
            status: job.job_status,
            error_message: job.error_message.as_deref(),
            params: &job.params,
            result: job.result.as_ref(),
            finished_at: job.finished_at,
            schedule: job.schedule.as_ref().map(|(id, cron, zone)| (*id, cron.as_str(), zone.as_str())),
        }),
        EmailAbout::Batch { batch, job_type, counts } => smtp.render_batch(&BatchEmail {
            to: addressee(rules, job_types, email, job_type),
            batch: *batch,
            counts: *counts,
        }),
        EmailAbout::Digest { items } => {
            let items = items
                .iter()
                .map(|item| DigestEntry {
                    job: item.job,
                    display_name: job_types.display_name(&item.job_type, email.locale),
                    status: item.job_status,
                    error_message: item.error_message.as_deref(),
                    result: item.result.as_ref(),
                    finished_at: item.finished_at,
                })
                .collect();
            // A digest's list is its own (`List-Id` digest), and it has no
            // one-click unsubscribe: it spans categories, each of which the
            // person sets in their preferences.
            let to = Addressee {
                tenant: &email.tenant,
                user: &email.user,
                recipient: &email.recipient,
                display_name: String::new(),
                category: "digest",
                unsubscribable: false,
                branding: &email.branding,
                locale: email.locale,
                zone: email.zone,
            };
            smtp.render_digest(&DigestEmail { to, id: email.id, items })
        }
    }
}

/// Whom `email` goes to, telling of a job (or a batch of jobs) of `job_type`.
fn addressee<'a>(
    rules: &'a NotificationRules,
    job_types: &JobTypes,
    email: &'a OutboxEmail,
    job_type: &'a str,
) -> Addressee<'a> {
    let category = rules.category_of(job_type);
    Addressee {
        tenant: &email.tenant,
        user: &email.user,
        recipient: &email.recipient,
        display_name: job_types.display_name(job_type, email.locale),
        category,
        unsubscribable: !rules.is_required(category),
        branding: &email.branding,
        locale: email.locale,
        zone: email.zone,
    }
}

type Rendered = Result<lettre::Message, MailError>;

async fn send(
    store: &Store,
    smtp: &SmtpMailer,
    job_types: &JobTypes,
    settings: &EmailSettings,
    email: OutboxEmail,
    span: &tracing::Span,
) {
    let sent = match render(smtp, store.notification_rules(), job_types, &email) {
        Ok(message) => smtp.send(message).await,
        Err(error) => Err(error),
    };
    let outbox = store.outbox();
    let result = match &sent {
        Ok(_) => "sent",
        Err(MailError::Invalid(_) | MailError::Rejected(_)) => "refused",
        Err(MailError::Transient(_)) => "deferred",
    };
    crate::telemetry::metrics().emails.add(result, 1);
    if sent.is_err() {
        span.record("otel.status_code", "error");
    }
    let what = match &email.about {
        EmailAbout::Job(job) => format!("the email of job {}", job.job),
        EmailAbout::Batch { batch, .. } => format!("the email of batch {batch}"),
        EmailAbout::Digest { .. } => format!("the digest {}", email.id),
    };
    match sent {
        Ok(response) => until_answered(&what, || outbox.record_sent(&email, &response)).await,
        Err(error @ (MailError::Invalid(_) | MailError::Rejected(_))) => {
            tracing::warn!(%error, email = %what, "email refused; not retrying");
            let error = error.to_string();
            until_answered(&what, || outbox.record_failed(&email, &error)).await
        }
        Err(error) => {
            let attempt = u32::try_from(email.attempt).unwrap_or(u32::MAX);
            let policy = settings.retry_policy();
            if policy.allows_another(attempt) {
                tracing::info!(%error, email = %what, attempt, "email not sent; will retry");
                let (error, delay) = (error.to_string(), policy.next_delay(attempt));
                until_answered(&what, || outbox.record_retry(&email, &error, delay)).await
            } else {
                tracing::warn!(%error, email = %what, attempt, "email not sent; out of attempts");
                let error = error.to_string();
                until_answered(&what, || outbox.record_failed(&email, &error)).await
            }
        }
    }
}

impl Actor for Mailer {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(self.settings.poll_interval, |act, ctx| act.deliver_due(ctx));
        self.deliver_due(ctx);
    }
}

impl Handler<MailDue> for Mailer {
    type Result = ();

    fn handle(&mut self, _: MailDue, ctx: &mut Self::Context) {
        self.deliver_due(ctx);
    }
}

impl Handler<FinishSending> for Mailer {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, _: FinishSending, _: &mut Self::Context) -> Self::Result {
        Box::pin(self.rounds.finish())
    }
}
