//! Completion emails: rendering (templates in `templates/email/`, built into
//! the binary) and sending over SMTP with lettre.

use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use minijinja::{Environment, context};

use crate::config::{EmailSettings, HttpUrl, SmtpSecurity};
use crate::domain::{JobId, JobState};

/// What an email says, before rendering.
pub struct CompletionEmail<'a> {
    pub job: JobId,
    pub recipient: &'a str,
    pub display_name: &'a str,
    pub status: JobState,
    pub error_message: Option<&'a str>,
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

/// Renders and sends completion emails.
#[derive(Clone)]
pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    public_base_url: HttpUrl,
    /// The domain of deterministic Message-IDs.
    domain: String,
    templates: std::sync::Arc<Environment<'static>>,
}

impl SmtpMailer {
    /// A mailer for these settings (already validated).
    pub fn new(settings: &EmailSettings, public_base_url: &HttpUrl) -> Result<Self, MailError> {
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
        templates
            .add_template("subject.txt", include_str!("../templates/email/job_completed.subject.txt"))
            .and_then(|()| templates.add_template("body.txt", include_str!("../templates/email/job_completed.txt")))
            .and_then(|()| templates.add_template("body.html", include_str!("../templates/email/job_completed.html")))
            .map_err(|e| invalid(&e))?;
        Ok(Self {
            transport: builder.build(),
            domain: from.email.domain().to_owned(),
            from,
            public_base_url: public_base_url.clone(),
            templates: std::sync::Arc::new(templates),
        })
    }

    /// The email for a finished job: subject, text and HTML from the templates,
    /// a link through errand (never a signed URL that would expire in the
    /// inbox), and a Message-ID derived from the job, so that a resend after a
    /// crash is recognisably the same message.
    pub fn render(&self, email: &CompletionEmail<'_>) -> Result<Message, MailError> {
        let invalid = |e: &dyn std::fmt::Display| MailError::Invalid(e.to_string());
        let failed = email.status == JobState::Failed;
        let ctx = context! {
            display_name => email.display_name,
            failed => failed,
            error_message => email.error_message.unwrap_or("no reason was recorded"),
            link => self.public_base_url.join_path(&format!("/jobs/{}/result", email.job)),
            job_id => email.job.to_string(),
        };
        let render =
            |name: &str| self.templates.get_template(name).and_then(|t| t.render(&ctx)).map_err(|e| invalid(&e));
        let subject = render("subject.txt")?;
        let to: Mailbox = email.recipient.parse().map_err(|e| invalid(&e))?;
        Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(subject.trim())
            .message_id(Some(format!("<job-{}@{}>", email.job, self.domain)))
            .multipart(MultiPart::alternative_plain_html(render("body.txt")?, render("body.html")?))
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
