//! A real SMTP server (maildev) per email test, read back over its REST API.

use super::*;

/// A real SMTP server (maildev) started for one test, read back over its REST API.
pub struct MailServer {
    child: Child,
    pub smtp_port: u16,
    api: String,
    dir: PathBuf,
}

/// A free TCP port on loopback (free when asked; good enough for tests).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl MailServer {
    /// Starts maildev (`ERRAND_TEST_MAILDEV`, installed by `scripts/test`) on `smtp_port`.
    pub async fn start_on(smtp_port: u16) -> Self {
        let bin = std::env::var("ERRAND_TEST_MAILDEV")
            .expect("ERRAND_TEST_MAILDEV is not set: run the tests with scripts/test, which installs maildev");
        let http_port = free_port();
        let dir = std::env::temp_dir().join(format!("errand-mail-{}", Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let child = Command::new(bin)
            .args(["--ip", "127.0.0.1", "--web-ip", "127.0.0.1", "--silent"])
            .args(["-s", &smtp_port.to_string(), "-w", &http_port.to_string()])
            .arg("--mail-directory")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start maildev");
        let server = Self { child, smtp_port, api: format!("http://127.0.0.1:{http_port}/api"), dir };
        let http = reqwest::Client::new();
        eventually(Duration::from_secs(20), "maildev answers", || async {
            http.get(format!("{}/healthz", server.api)).send().await.is_ok_and(|r| r.status().is_success())
        })
        .await;
        server
    }

    pub async fn start() -> Self {
        Self::start_on(free_port()).await
    }

    /// The header `name` of `email` as sent, unfolded (maildev's JSON keeps only a few headers).
    pub async fn header(&self, email: &Value, name: &str) -> Option<String> {
        let id = email["id"].as_str().expect("an email's id");
        let source = reqwest::get(format!("{}/email/{id}/source", self.api)).await.unwrap().text().await.unwrap();
        let head = source.split("\r\n\r\n").next().unwrap_or_default().replace("\r\n ", " ").replace("\r\n\t", " ");
        let prefix = format!("{}:", name.to_ascii_lowercase());
        head.split("\r\n")
            .find(|line| line.to_ascii_lowercase().starts_with(&prefix))
            .map(|line| line[prefix.len()..].trim().to_owned())
    }

    /// Every email received so far.
    pub async fn emails(&self) -> Vec<Value> {
        reqwest::get(format!("{}/email", self.api)).await.unwrap().json().await.unwrap()
    }

    /// Once the outbox holds nothing left to send, exactly `expected` emails
    /// were sent and arrived: one per outbox row. The rows, not a wait, are
    /// why no more can come (errand sends only what its outbox holds).
    pub async fn assert_all_sent(&self, db: &TestDb, expected: usize) {
        eventually(Duration::from_secs(20), "the outbox to have nothing left to send", || async {
            let unsent = "SELECT count(*) FROM email_outbox WHERE state IN ('pending', 'sending')";
            db.scalar::<i64>(unsent, &[]).await == 0
        })
        .await;
        let sent: i64 = db.scalar("SELECT count(*) FROM email_outbox WHERE state = 'sent'", &[]).await;
        assert_eq!(usize::try_from(sent).unwrap(), expected, "outbox rows sent");
        assert_eq!(self.emails().await.len(), expected, "emails that arrived");
    }

    /// Waits until at least `n` emails arrived; returns them all.
    pub async fn wait_for(&self, n: usize, within: Duration) -> Vec<Value> {
        let deadline = Instant::now() + within;
        loop {
            let emails = self.emails().await;
            if emails.len() >= n {
                return emails;
            }
            assert!(Instant::now() < deadline, "{} of {n} emails arrived within {within:?}", emails.len());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for MailServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Email on, pointed at `smtp_port`, with quick retries.
pub fn email_to(smtp_port: u16) -> impl FnOnce(&mut Settings) {
    move |s: &mut Settings| {
        s.email.enabled = true;
        s.email.smtp_port = smtp_port;
        s.email.from = "errand <errand@example.com>".parse().unwrap();
        s.http.public_base_url = errand::config::HttpUrl::parse("https://errand.example.com/").unwrap();
        s.email.backoff_base = Duration::from_millis(50);
        s.email.backoff_max = Duration::from_millis(200);
        s.email.poll_interval = Duration::from_millis(100);
        s.job_types.get_mut("sleep").unwrap().max_attempts = nonzero(3);
    }
}

/// `alert` jobs (no-ops) in `alerts`, a required category: what no one can
/// turn off, and what quiet hours, digests and tenant defaults leave alone.
pub fn with_alerts(s: &mut Settings) {
    use errand::config::{HandlerKind, JobTypeSettings};
    let mut alert = JobTypeSettings::new(HandlerKind::Registered("noop".into()));
    alert.category = Some("alerts".into());
    s.job_types.insert("alert".into(), alert);
    s.notifications.preferences.required = vec!["alerts".into()];
}

/// A token whose `email` claim is `email`.
pub fn token_for(tenant: &str, user: &str, email: &str) -> String {
    token_with(UserClaims {
        sub: user.into(),
        tenant: tenant.into(),
        email: Some(email.into()),
        scope: None,
        exp: now_secs() + 3600,
    })
}
