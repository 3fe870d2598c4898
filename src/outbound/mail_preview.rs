//! Previews of the emails, for a tenant's admins and for operators: each
//! kind rendered by the same templates and code as the emails people get,
//! with sample content, in the tenant's branding. Its links are signed for
//! the one who asks, to a job that does not exist: opening one shows that
//! it leads nowhere.

use serde_json::json;
use uuid::Uuid;

use crate::domain::{BatchCounts, BatchId, Branding, JobId, JobState, Locale, TenantId, UserId};
use crate::outbound::mail::{
    Addressee, BatchEmail, CompletionEmail, Composed, DigestEmail, DigestEntry, MailError, SmtpMailer,
};

/// The kinds of email a preview shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreviewKind {
    JobCompleted,
    JobFailed,
    BatchCompleted,
    Digest,
}

impl PreviewKind {
    pub const NAMES: [&'static str; 4] = ["job_completed", "job_failed", "batch_completed", "digest"];

    pub fn parse(name: &str) -> Option<Self> {
        let kinds = [Self::JobCompleted, Self::JobFailed, Self::BatchCompleted, Self::Digest];
        Self::NAMES.iter().position(|known| *known == name).map(|i| kinds[i])
    }
}

/// Whom a preview is rendered for: the tenant whose branding it shows, and
/// the one who asked (its links are signed for them).
pub struct PreviewFor<'a> {
    pub tenant: &'a TenantId,
    pub user: &'a UserId,
    pub branding: &'a Branding,
    pub locale: Locale,
}

impl SmtpMailer {
    /// `kind`'s email with sample content, for `viewer`.
    pub fn preview(&self, kind: PreviewKind, viewer: &PreviewFor<'_>) -> Result<Composed, MailError> {
        self.preview_at(kind, viewer, chrono::Utc::now())
    }

    /// [`Self::preview`], its jobs ended at `now` (the template tests fix it).
    fn preview_at(
        &self,
        kind: PreviewKind,
        viewer: &PreviewFor<'_>,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Composed, MailError> {
        let to = Addressee {
            tenant: viewer.tenant,
            user: viewer.user,
            recipient: "someone@example.com",
            display_name: "Sales report".into(),
            category: "exports",
            unsubscribable: false,
            branding: viewer.branding,
            locale: viewer.locale,
            zone: chrono_tz::UTC,
        };
        let file = json!({
            "storage_key": "preview", "size_bytes": 1_482_113, "row_count": 12_480, "content_type": "text/csv",
            "file_name": "sales_report-2026-11.csv", "expires_at": now + chrono::Duration::days(7),
        });
        let params = json!({"date_from": "2026-11-01", "date_to": "2026-11-30"});
        let job = JobId(Uuid::nil());
        let completion = |status, error_message, result| CompletionEmail {
            to: to.clone(),
            job,
            run: 1,
            status,
            error_message,
            params: &params,
            result,
            finished_at: Some(now),
            schedule: None,
        };
        match kind {
            PreviewKind::JobCompleted => {
                let email = completion(JobState::Completed, None, Some(&file));
                self.compose(&self.job_draft(&email), &email.to)
            }
            PreviewKind::JobFailed => {
                let email = completion(JobState::Failed, Some("the reporting database did not answer"), None);
                self.compose(&self.job_draft(&email), &email.to)
            }
            PreviewKind::BatchCompleted => {
                let counts = BatchCounts { total: 5, completed: 3, failed: 2, cancelled: 0 };
                let email = BatchEmail { to: to.clone(), batch: BatchId(Uuid::nil()), counts };
                self.compose(&self.batch_draft(&email), &email.to)
            }
            PreviewKind::Digest => {
                let entry = |status, result| DigestEntry {
                    job,
                    display_name: "Sales report".into(),
                    status,
                    error_message: None,
                    result,
                    finished_at: Some(now),
                };
                let items = vec![entry(JobState::Completed, Some(&file)), entry(JobState::Cancelled, None)];
                let email = DigestEmail { to: to.clone(), id: Uuid::nil(), items };
                self.compose(&self.digest_draft(&email), &email.to)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{EmailSettings, HttpUrl};
    use crate::outbound::links::JobLinks;

    fn mailer() -> SmtpMailer {
        let settings: EmailSettings = serde_json::from_value(json!({"from": "Reports <reports@example.com>"})).unwrap();
        let base = HttpUrl::parse("https://errand.example.com").unwrap();
        let links = JobLinks::new(b"a template test's link key, 32 bytes or more".to_vec(), &base);
        SmtpMailer::new(&settings, links, std::time::Duration::from_secs(7 * 24 * 3600)).unwrap()
    }

    /// Every kind of email in every shipped language, as people get it: a
    /// message no catalogue has, or a template giving one the wrong
    /// variables, fails the rendering; a change of wording shows in the
    /// snapshots (`cargo insta review`).
    #[test]
    fn every_email_renders_in_every_language() {
        let mailer = mailer();
        let (tenant, user) = (TenantId::parse("acme").unwrap(), UserId::parse("ann").unwrap());
        let branding = Branding { name: Some("Acme <b>Corp</b>".into()), ..Branding::default() };
        let now = "2026-12-05T07:00:00Z".parse().unwrap();
        // Beside the tests, not in the source tree: `tests/snapshots/emails/{kind}.{locale}.snap`.
        let mut snapshots = insta::Settings::clone_current();
        snapshots.set_snapshot_path("../../tests/snapshots/emails");
        snapshots.set_prepend_module_to_snapshot(false);
        let _bound = snapshots.bind_to_scope();
        for locale in Locale::all() {
            let viewer = PreviewFor { tenant: &tenant, user: &user, branding: &branding, locale };
            for (name, kind) in PreviewKind::NAMES.iter().map(|name| (name, PreviewKind::parse(name).unwrap())) {
                let email = mailer.preview_at(kind, &viewer, now).unwrap_or_else(|e| panic!("{locale} {name}: {e}"));
                assert!(email.html.contains(&format!("<html lang=\"{locale}\">")), "{locale} {name}");
                assert!(!email.html.contains("<b>Corp"), "tenant copy is text, never markup");
                let shown = format!(
                    "From: {}\nSubject: {}\n\n{}\n---- html ----\n{}",
                    email.from, email.subject, email.text, email.html
                );
                insta::assert_snapshot!(format!("{name}.{locale}"), shown);
            }
        }
    }
}
