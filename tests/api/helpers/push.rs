//! A push service (tools/pushstub/stub.py) per Web Push test: it hands out
//! browsers' subscriptions, and checks and decrypts what errand sends them
//! with an implementation of RFC 8291 and 8292 independent of errand's.

use super::*;

/// The push service stub, stopped when dropped.
pub struct PushService {
    child: Child,
    address: String,
    http: reqwest::Client,
}

impl PushService {
    /// Starts the stub (`ERRAND_TEST_PUSH_PYTHON`, installed by `scripts/test`).
    pub fn start() -> Self {
        let python = std::env::var("ERRAND_TEST_PUSH_PYTHON").expect(
            "ERRAND_TEST_PUSH_PYTHON is not set: run the tests with scripts/test, which installs the push stub",
        );
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tools/pushstub/stub.py");
        let mut child = Command::new(python)
            .arg(script)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the push stub");
        let mut port = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut port).expect("the push stub's port");
        let port: u16 = port.trim().parse().expect("the push stub prints its port");
        Self { child, address: format!("http://127.0.0.1:{port}"), http: reqwest::Client::new() }
    }

    /// A browser's `PushSubscription.toJSON()` for `device` (its keys made once).
    pub async fn subscription(&self, device: &str) -> Value {
        self.http.get(format!("{}/subscription/{device}", self.address)).send().await.unwrap().json().await.unwrap()
    }

    /// Makes the stub answer `device`'s next message with `status` instead of taking it.
    pub async fn answer_next(&self, device: &str, status: u16) {
        let answered = self.http.post(format!("{}/answer/{device}/{status}", self.address)).send().await.unwrap();
        assert!(answered.status().is_success());
    }

    /// The messages taken: each with its decrypted `payload`, `ttl`, `urgency`, VAPID `sub` and `k`.
    pub async fn messages(&self) -> Vec<Value> {
        self.http.get(format!("{}/messages", self.address)).send().await.unwrap().json().await.unwrap()
    }

    /// Messages that failed the stub's checks (VAPID, encryption), and why.
    pub async fn refused(&self) -> Vec<Value> {
        self.http.get(format!("{}/refused", self.address)).send().await.unwrap().json().await.unwrap()
    }

    /// How many messages each device was sent, taken or not.
    pub async fn attempts(&self, device: &str) -> u64 {
        let attempts: Value =
            self.http.get(format!("{}/attempts", self.address)).send().await.unwrap().json().await.unwrap();
        attempts[device].as_u64().unwrap_or(0)
    }

    /// Waits until `n` messages were taken; returns them all.
    pub async fn wait_for(&self, n: usize, within: Duration) -> Vec<Value> {
        eventually(within, &format!("{n} push messages"), || async { self.messages().await.len() >= n }).await;
        self.messages().await
    }
}

impl Drop for PushService {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Settings with Web Push on: a fresh VAPID pair, the stub's host allowed
/// (and exempt from the outbound rules, being on loopback), quick retries.
pub fn push_on(s: &mut Settings) {
    let (public, private) = errand::domain::keys::vapid::VapidKey::generate().unwrap();
    s.push.enabled = true;
    s.push.vapid_public_key = Some(public);
    s.push.vapid_private_key = Some(private.into());
    s.push.subject = Some("mailto:ops@errand.example.com".into());
    s.push.allow_hosts = vec!["127.0.0.1".into()];
    s.push.private_hosts = vec!["127.0.0.1".into()];
    s.push.backoff_base = Duration::from_millis(50);
    s.push.backoff_max = Duration::from_millis(200);
    s.push.poll_interval = Duration::from_millis(100);
    s.http.public_base_url = errand::config::HttpUrl::parse("https://errand.example.com/").unwrap();
}
