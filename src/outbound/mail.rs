//! Completion emails: rendering (templates in `templates/email/`, built into
//! the binary) and sending over SMTP with lettre.

use lettre::message::header::{HeaderName, HeaderValue};
use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use minijinja::{Environment, context};

use crate::config::{EmailSettings, SmtpSecurity};
use crate::domain::{Arg, BatchCounts, BatchId, Branding, JobId, JobState, Locale, ScheduleId, TenantId, UserId};
use crate::outbound::links::JobLinks;
use crate::storage::ResultFile;

/// Whom an email goes to, and of which job type and category it tells.
#[derive(Clone)]
pub struct Addressee<'a> {
    pub tenant: &'a TenantId,
    pub user: &'a UserId,
    pub recipient: &'a str,
    /// The job type's name (a batch's children's; a digest's: none).
    pub display_name: String,
    /// The job type's notification category: the email's list (`List-Id`).
    pub category: &'a str,
    /// Whether its category may be turned off: then the email carries a
    /// one-click unsubscribe (RFC 8058). A required category's may not.
    pub unsubscribable: bool,
    /// How the recipient's tenant presents itself.
    pub branding: &'a Branding,
    /// The language the email is written in, and the recipient's time zone
    /// for its dates.
    pub locale: Locale,
    pub zone: chrono_tz::Tz,
}

/// What a job's email says, before rendering.
pub struct CompletionEmail<'a> {
    pub to: Addressee<'a>,
    pub job: JobId,
    /// The job's run (2 and up after operators' retries: each run's end is an email of its own).
    pub run: i32,
    pub status: JobState,
    pub error_message: Option<&'a str>,
    pub params: &'a serde_json::Value,
    pub result: Option<&'a serde_json::Value>,
    pub finished_at: Option<chrono::DateTime<chrono::Utc>>,
    /// The schedule that made the job: its id, expression and time zone.
    pub schedule: Option<(ScheduleId, &'a str, &'a str)>,
}

/// What a batch's email says: how its children ended.
pub struct BatchEmail<'a> {
    pub to: Addressee<'a>,
    pub batch: BatchId,
    pub counts: BatchCounts,
}

/// What a person's digest says: the ends it lists, oldest first.
pub struct DigestEmail<'a> {
    pub to: Addressee<'a>,
    /// The digest's outbox id (its Message-ID).
    pub id: uuid::Uuid,
    pub items: Vec<DigestEntry<'a>>,
}

/// A job's end, as a digest lists it.
pub struct DigestEntry<'a> {
    pub job: JobId,
    pub display_name: String,
    pub status: JobState,
    pub error_message: Option<&'a str>,
    pub result: Option<&'a serde_json::Value>,
    pub finished_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// What a kind of email renders: its templates (`{prefix}subject.txt`,
/// `body.txt`, `body.html`), what they are given, its one-click unsubscribe
/// link, and its Message-ID's local part.
pub(super) struct Draft {
    prefix: &'static str,
    ctx: minijinja::Value,
    unsubscribe: Option<String>,
    message_id: String,
}

/// An email as its templates render it, before it is a message (what a
/// preview shows).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Composed {
    /// The sender, e.g. `Acme reports <errand@example.com>`.
    #[serde(serialize_with = "as_text")]
    pub from: Mailbox,
    pub subject: String,
    pub text: String,
    pub html: String,
}

fn as_text<S: serde::Serializer>(mailbox: &Mailbox, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(mailbox)
}

/// Why an email could not be built or sent.
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    /// The address or content is unusable: retrying will not help.
    #[error("the email cannot be built: {0}")]
    Invalid(String),
    /// The server refused for good (e.g. 550 mailbox unknown).
    #[error("the SMTP server refused the email: {0}")]
    Rejected(String),
    /// The server is away or asked to try later.
    #[error("the email could not be sent now: {0}")]
    Transient(String),
}

/// The templates, by the name each kind of email renders (`{prefix}{part}`,
/// see `SmtpMailer::message`); `.html` ones are escaped as HTML.
const TEMPLATES: [(&str, &str); 10] = [
    ("layout.html", include_str!("../../templates/email/layout.html")),
    ("subject.txt", include_str!("../../templates/email/job_completed.subject.txt")),
    ("body.txt", include_str!("../../templates/email/job_completed.txt")),
    ("body.html", include_str!("../../templates/email/job_completed.html")),
    ("batch/subject.txt", include_str!("../../templates/email/batch_completed.subject.txt")),
    ("batch/body.txt", include_str!("../../templates/email/batch_completed.txt")),
    ("batch/body.html", include_str!("../../templates/email/batch_completed.html")),
    ("digest/subject.txt", include_str!("../../templates/email/digest.subject.txt")),
    ("digest/body.txt", include_str!("../../templates/email/digest.txt")),
    ("digest/body.html", include_str!("../../templates/email/digest.html")),
];

/// A header lettre has no type for.
fn header(name: &'static str, value: String) -> HeaderValue {
    HeaderValue::new(HeaderName::new_from_ascii_str(name), value)
}

/// Renders and sends completion emails.
#[derive(Clone)]
pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    links: JobLinks,
    /// How long a link works when the job left no file to set it (the result retention).
    link_lifetime: std::time::Duration,
    /// The domain of deterministic Message-IDs.
    domain: String,
    templates: std::sync::Arc<Environment<'static>>,
}

impl SmtpMailer {
    /// A mailer for these settings (already validated).
    pub fn new(
        settings: &EmailSettings,
        links: JobLinks,
        link_lifetime: std::time::Duration,
    ) -> Result<Self, MailError> {
        let invalid = |e: &dyn std::fmt::Display| MailError::Invalid(e.to_string());
        let from: Mailbox = settings.from.clone();
        let host = settings.smtp_host.as_str();
        let tls = match settings.security {
            SmtpSecurity::None => Tls::None,
            SmtpSecurity::Starttls => Tls::Required(TlsParameters::new(host.into()).map_err(|e| invalid(&e))?),
            SmtpSecurity::Tls => Tls::Wrapper(TlsParameters::new(host.into()).map_err(|e| invalid(&e))?),
        };
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(host)
            .port(settings.smtp_port)
            .tls(tls)
            .timeout(Some(std::time::Duration::from_secs(30)));
        if let (Some(user), Some(password)) = (&settings.username, &settings.password) {
            let password = secrecy::ExposeSecret::expose_secret(password).to_owned();
            builder = builder.credentials(Credentials::new(user.clone(), password));
        }
        let mut templates = Environment::new();
        for (name, source) in TEMPLATES {
            templates.add_template(name, source).map_err(|e| invalid(&e))?;
        }
        Ok(Self {
            transport: builder.build(),
            domain: from.email.domain().to_owned(),
            from,
            links,
            link_lifetime,
            templates: std::sync::Arc::new(templates),
        })
    }

    /// The email for a finished job: subject, text and HTML from the templates;
    /// what was made (the type's name, its params), how big it is and until
    /// when the link works; a signed link that opens without a token (see
    /// [`JobLinks`]); and a Message-ID derived from the job, so that a resend
    /// after a crash is recognisably the same message.
    pub fn render(&self, email: &CompletionEmail<'_>) -> Result<Message, MailError> {
        self.message(&self.job_draft(email), &email.to)
    }

    /// The email of a batch whose last child ended: how its children ended,
    /// and a Message-ID derived from the batch.
    pub fn render_batch(&self, email: &BatchEmail<'_>) -> Result<Message, MailError> {
        self.message(&self.batch_draft(email), &email.to)
    }

    /// The email of a person's digest: each end with its link (until its
    /// file's expiry, as a job's email has it), and a Message-ID derived from
    /// the digest. A digest whose ends were all pruned before it went is
    /// not sent.
    pub fn render_digest(&self, email: &DigestEmail<'_>) -> Result<Message, MailError> {
        if email.items.is_empty() {
            return Err(MailError::Invalid("nothing left to tell: its jobs were pruned".into()));
        }
        self.message(&self.digest_draft(email), &email.to)
    }

    /// [`Self::render`]'s templates and what they are given.
    pub(super) fn job_draft(&self, email: &CompletionEmail<'_>) -> Draft {
        let failed = email.status == JobState::Failed;
        let cancelled = email.status == JobState::Cancelled;
        let file = ResultFile::of(email.result).filter(|_| email.status == JobState::Completed);
        let link_expires = self.link_expiry(file.as_ref(), email.finished_at);
        let to = &email.to;
        let locale = to.locale;
        let unsubscribe = self.unsubscribe_link(to);
        let rows = |n: u64| locale.say("email-rows", &[("count", n.into()), ("rows", locale.count(n).into())]);
        let ctx = context! {
            display_name => &to.display_name,
            failed => failed,
            cancelled => cancelled,
            error_message => email.error_message.map_or_else(|| locale.say("no-reason", &[]), str::to_owned),
            params => param_lines(email.params),
            // Files uploaded by external workers have no rows to count.
            rows => file.as_ref().filter(|f| f.row_count > 0).map(|f| rows(f.row_count)),
            size => file.as_ref().map(|f| locale.size(f.size_bytes)),
            file_name => file.as_ref().map(|f| f.file_name.clone()),
            link => self.links.link(email.job, to.tenant, to.user, link_expires, locale),
            link_expires => locale.date_time(link_expires, to.zone),
            job_id => email.job.to_string(),
            unsubscribe => unsubscribe.clone(),
            schedule => email.schedule.map(|(_, cron, zone)| format!("{cron} ({zone})")),
            pause_link => email.schedule.map(|(id, _, _)| self.links.pause_link(to.tenant, to.user, id)),
        };
        let message_id = match email.run {
            1 => format!("job-{}", email.job),
            run => format!("job-{}-{run}", email.job),
        };
        Draft { prefix: "", ctx, unsubscribe, message_id }
    }

    /// [`Self::render_batch`]'s templates and what they are given.
    pub(super) fn batch_draft(&self, email: &BatchEmail<'_>) -> Draft {
        let (c, to) = (email.counts, &email.to);
        let unsubscribe = self.unsubscribe_link(to);
        let ctx = context! {
            display_name => &to.display_name,
            total => c.total,
            completed => c.completed,
            outcome => c.outcome(to.locale),
            batch_id => email.batch.to_string(),
            unsubscribe => unsubscribe.clone(),
        };
        Draft { prefix: "batch/", ctx, unsubscribe, message_id: format!("batch-{}", email.batch) }
    }

    /// [`Self::render_digest`]'s templates and what they are given.
    pub(super) fn digest_draft(&self, email: &DigestEmail<'_>) -> Draft {
        let to = &email.to;
        let locale = to.locale;
        let items: Vec<minijinja::Value> = email
            .items
            .iter()
            .map(|item| {
                let file = ResultFile::of(item.result).filter(|_| item.status == JobState::Completed);
                let link_expires = self.link_expiry(file.as_ref(), item.finished_at);
                context! {
                    display_name => &item.display_name,
                    status => item.status.as_sql(),
                    error_message => item.error_message.map_or_else(|| locale.say("no-reason", &[]), str::to_owned),
                    size => file.as_ref().map(|f| locale.size(f.size_bytes)),
                    file_name => file.as_ref().map(|f| f.file_name.clone()),
                    link => self.links.link(item.job, to.tenant, to.user, link_expires, locale),
                    link_expires => locale.date_time(link_expires, to.zone),
                }
            })
            .collect();
        let ctx = context! { count => items.len(), items => items };
        Draft { prefix: "digest/", ctx, unsubscribe: None, message_id: format!("digest-{}", email.id) }
    }

    /// Until when a job's link works: its file's expiry, else the result
    /// retention from its end.
    fn link_expiry(
        &self,
        file: Option<&ResultFile>,
        finished_at: Option<chrono::DateTime<chrono::Utc>>,
    ) -> chrono::DateTime<chrono::Utc> {
        match file {
            Some(file) => file.expires_at,
            None => {
                let finished_at = finished_at.unwrap_or_else(chrono::Utc::now);
                finished_at + chrono::Duration::from_std(self.link_lifetime).unwrap_or(chrono::Duration::days(7))
            }
        }
    }

    /// The one-click unsubscribe link of `to`'s category, unless it is required.
    fn unsubscribe_link(&self, to: &Addressee<'_>) -> Option<String> {
        to.unsubscribable.then(|| self.links.unsubscribe_link(to.tenant, to.user, to.category))
    }

    /// What `draft`'s templates say to `to`, in its tenant's branding.
    pub(super) fn compose(&self, draft: &Draft, to: &Addressee<'_>) -> Result<Composed, MailError> {
        let invalid = |e: &dyn std::fmt::Display| MailError::Invalid(e.to_string());
        let brand = to.branding;
        let ctx = context! {
            t => words(to.locale),
            lang => to.locale.as_str(),
            sender => brand.name.as_deref().unwrap_or("errand"),
            brand_name => &brand.name,
            brand_logo => &brand.logo_url,
            brand_color => &brand.primary_color,
            brand_footer => brand.footer_text(),
            ..draft.ctx.clone()
        };
        let render = |name: &str| {
            let template = self.templates.get_template(&format!("{}{name}", draft.prefix));
            template.and_then(|t| t.render(&ctx)).map_err(|e| invalid(&e))
        };
        // The tenant's name for the sender; the address stays errand's (its SPF and DKIM).
        let from = match &brand.from_name {
            Some(name) => Mailbox::new(Some(name.clone()), self.from.email.clone()),
            None => self.from.clone(),
        };
        let subject = render("subject.txt")?.trim().to_owned();
        Ok(Composed { from, subject, text: render("body.txt")?, html: render("body.html")? })
    }

    /// The message of `draft` to `to`, listed under its category, with a
    /// one-click unsubscribe when it has a link, and its Message-ID (the
    /// sender's domain added).
    fn message(&self, draft: &Draft, to: &Addressee<'_>) -> Result<Message, MailError> {
        let invalid = |e: &dyn std::fmt::Display| MailError::Invalid(e.to_string());
        let Composed { from, subject, text, html } = self.compose(draft, to)?;
        let mailbox: Mailbox = to.recipient.parse().map_err(|e| invalid(&e))?;
        let mut message =
            Message::builder().raw_header(header("List-Id", format!("<{}.{}>", to.category, self.domain)));
        if let Some(link) = &draft.unsubscribe {
            // RFC 8058: a mailbox provider's one-click unsubscribe POSTs
            // `List-Unsubscribe=One-Click` to the link; a GET changes nothing.
            message = message
                .raw_header(header("List-Unsubscribe", format!("<{link}>")))
                .raw_header(header("List-Unsubscribe-Post", "List-Unsubscribe=One-Click".into()));
        }
        message
            .from(from)
            .to(mailbox)
            .subject(subject)
            .message_id(Some(format!("<{}@{}>", draft.message_id, self.domain)))
            .multipart(MultiPart::alternative_plain_html(text, html))
            .map_err(|e| invalid(&e))
    }

    /// Sends a message; returns the server's answer.
    pub async fn send(&self, message: Message) -> Result<String, MailError> {
        match self.transport.send(message).await {
            Ok(response) => Ok(format!("{} {}", response.code(), response.message().collect::<Vec<_>>().join(" "))),
            Err(error) if error.is_permanent() => Err(MailError::Rejected(error.to_string())),
            Err(error) => Err(MailError::Transient(error.to_string())),
        }
    }
}

/// A job's params as (label, value) lines for a person: `date_from` reads
/// "Date from", strings go bare, anything else as JSON.
fn param_lines(params: &serde_json::Value) -> Vec<(String, String)> {
    let Some(params) = params.as_object() else { return Vec::new() };
    params
        .iter()
        .map(|(key, value)| {
            let label = key.replace('_', " ");
            let mut chars = label.chars();
            let label = chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default();
            let value = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
            (label, value)
        })
        .collect()
}

/// The templates' `t("id", name=value, …)`: message `id` of `locale`'s
/// catalogue (English's where it lacks one). A message no catalogue has, or
/// one given the wrong variables, fails the rendering: the template tests
/// render every email in every locale.
fn words(locale: Locale) -> minijinja::Value {
    minijinja::Value::from_function(move |id: &str, kwargs: minijinja::value::Kwargs| {
        let mut args = Vec::new();
        for name in kwargs.args() {
            let value: minijinja::Value = kwargs.get(name)?;
            let arg = match value.as_i64() {
                Some(n) => Arg::from(n),
                None => Arg::from(value.to_string()),
            };
            args.push((name, arg));
        }
        locale
            .try_say(id, &args)
            .or_else(|_| Locale::ENGLISH.try_say(id, &args))
            .map_err(|unsaid| minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, unsaid.to_string()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_read_as_labelled_lines() {
        let params = serde_json::json!({"date_from": "2026-01-01", "limit": 5});
        assert_eq!(
            param_lines(&params),
            vec![("Date from".to_owned(), "2026-01-01".to_owned()), ("Limit".to_owned(), "5".to_owned())]
        );
    }
}
