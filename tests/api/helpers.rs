//! The test harness: a fresh database per test, errand started in-process
//! (`spawn_app`) or as real processes (`ErrandProcess`), and a client that
//! speaks the API, so a new test is a few lines long.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use errand::config::{JobTypeSettings, Settings};
use errand::jobs::HandlerRegistry;
use errand::startup::Application;
use errand::tokens::{TokenIssuer, UserClaims};
use reqwest::{Response, StatusCode};
use serde_json::{Value, json};
use tokio_postgres::NoTls;
use uuid::Uuid;

pub const SECRET: &str = "test-secret-that-is-long-enough-0123456789";

/// The server that test databases are created on: `DATABASE_URL` (any
/// database on it), else the local default.
fn admin_url() -> String {
    std::env::var("DATABASE_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

fn with_database(url: &str, name: &str) -> String {
    let mut parsed = reqwest::Url::parse(url).expect("DATABASE_URL must be a URL");
    parsed.set_path(&format!("/{name}"));
    parsed.to_string()
}

/// A database that exists for one test and is dropped after it.
pub struct TestDb {
    pub name: String,
    pub url: String,
    /// A URL of the server it lives on, from which it is dropped.
    admin: String,
}

impl TestDb {
    /// A migrated database on the shared test server: a copy of the
    /// template database (see [`template`]), not a migration run of its own.
    pub async fn create() -> Self {
        let template = template().await;
        Self::create_with(&admin_url(), &format!("TEMPLATE {template}")).await
    }

    /// An empty database (not migrated) on the shared test server.
    pub async fn create_empty() -> Self {
        Self::create_on(&admin_url()).await
    }

    /// An empty database on the server of `admin` (a URL of any database there).
    pub async fn create_on(admin: &str) -> Self {
        Self::create_with(admin, "").await
    }

    async fn create_with(admin: &str, options: &str) -> Self {
        let name = format!("errand_test_{}", Uuid::new_v4().simple());
        connect(admin)
            .await
            .batch_execute(&format!("CREATE DATABASE {name} {options}"))
            .await
            .expect("create test database");
        Self { url: with_database(admin, &name), name, admin: admin.to_owned() }
    }

    /// A fresh connection to this database.
    pub async fn client(&self) -> tokio_postgres::Client {
        connect(&self.url).await
    }

    /// Runs a query expecting one row and returns its first column.
    pub async fn scalar<T: for<'a> tokio_postgres::types::FromSql<'a>>(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> T {
        self.client().await.query_one(sql, params).await.expect(sql).get(0)
    }

    /// How many notifications exist for a job.
    pub async fn notifications_for(&self, job: &str) -> i64 {
        let id = Uuid::parse_str(job).unwrap();
        self.scalar("SELECT count(*) FROM notifications WHERE job_id = $1", &[&id]).await
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let (name, admin) = (self.name.clone(), self.admin.clone());
        // Drop runs outside async context: use a private runtime on a thread.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async {
                if let Ok((client, conn)) = tokio_postgres::connect(&admin, NoTls).await {
                    tokio::spawn(conn);
                    let _ = client.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await;
                }
            });
        })
        .join();
    }
}

/// The name of a database holding errand's schema, from which each test's
/// database is copied: made once per schema (its name carries a hash of
/// `migrations/`), under an advisory lock so that concurrent test processes
/// make it once, and never connected to afterwards (a copy needs that).
async fn template() -> &'static str {
    static TEMPLATE: tokio::sync::OnceCell<String> = tokio::sync::OnceCell::const_new();
    TEMPLATE
        .get_or_init(|| async {
            use sha2::Digest;
            let mut files: Vec<_> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations"))
                .expect("migrations/ is readable")
                .map(|entry| entry.expect("a migration").path())
                .collect();
            files.sort();
            let mut hash = sha2::Sha256::new();
            for file in files {
                hash.update(std::fs::read(file).expect("a readable migration"));
            }
            let name = format!("errand_template_{}", &hex::encode(hash.finalize())[..12]);
            let admin = connect(&admin_url()).await;
            admin
                .batch_execute("SELECT pg_advisory_lock(hashtext('errand test template'))")
                .await
                .expect("the template lock");
            let exists = !admin
                .query("SELECT 1 FROM pg_database WHERE datname = $1", &[&name])
                .await
                .expect("look for the template")
                .is_empty();
            if !exists {
                // Made under another name and renamed once whole, so that a
                // run stopped half-way leaves no half-made template behind.
                let making = TestDb::create_on(&admin_url()).await;
                let store = errand::store::Store::connect(&making.url, 1).unwrap();
                errand::db::migrate(&store).await.expect("migrate the template");
                drop(store);
                // A copy, like a rename, needs the pool's connection gone.
                let making_name = making.name.clone();
                eventually(Duration::from_secs(20), "the template's migrating connection to close", || async {
                    let sql = "SELECT count(*) FROM pg_stat_activity WHERE datname = $1";
                    admin.query_one(sql, &[&making_name]).await.expect(sql).get::<_, i64>(0) == 0
                })
                .await;
                let rename = format!("ALTER DATABASE {} RENAME TO {name}", making.name);
                admin.batch_execute(&rename).await.expect("name the template");
                std::mem::forget(making);
            }
            admin
                .batch_execute("SELECT pg_advisory_unlock(hashtext('errand test template'))")
                .await
                .expect("the template lock");
            name
        })
        .await
}

/// A fresh database, migrated, and a store on it: for tests that drive the store directly.
pub async fn migrated_store() -> (TestDb, errand::store::Store) {
    let db = TestDb::create().await;
    let store = errand::store::Store::connect(&db.url, 4).unwrap();
    errand::db::migrate(&store).await.unwrap();
    (db, store)
}

/// A job for the store to record: `user` of `tenant` asks for `job_type` under `key`.
pub fn new_job(tenant: &str, user: &str, key: &str, job_type: &str, params: Value) -> errand::store::NewJob {
    use errand::domain::{Caller, IdempotencyKey, TenantId, UserId};
    let caller = Caller { tenant: TenantId::parse(tenant).unwrap(), user: UserId::parse(user).unwrap(), email: None };
    errand::store::NewJob {
        caller,
        key: IdempotencyKey::parse(key).unwrap(),
        job_type: job_type.into(),
        params,
        max_attempts: 3,
    }
}

pub async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, NoTls).await.expect("connect to PostgreSQL");
    tokio::spawn(conn);
    client
}

fn repo_path(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// The shipped `config.toml`, pointed at `db`, on a free port, with fast loops for tests.
pub fn test_settings(db: &TestDb) -> Settings {
    let mut settings = Settings::load(&repo_path("config.toml")).expect("shipped config.toml loads");
    settings.database.url = db.url.clone().into();
    settings.database.pool_size = 8;
    settings.http.bind = "127.0.0.1:0".parse().unwrap();
    settings.http.workers = Some(2);
    settings.auth.jwt_secret = SECRET.into();
    settings.workers.poll_interval = Duration::from_millis(200);
    settings.workers.lease = Duration::from_secs(3);
    settings.workers.shutdown_grace = Duration::from_secs(2);
    for job_type in settings.job_types.values_mut() {
        job_type.backoff_base = Duration::from_millis(20);
        job_type.backoff_max = Duration::from_millis(100);
    }
    settings
}

/// A job type running `handler` with test-friendly retry settings.
pub fn job_type(handler: &str) -> JobTypeSettings {
    JobTypeSettings {
        handler: handler.into(),
        max_attempts: 3,
        backoff_base: Duration::from_millis(20),
        backoff_max: Duration::from_millis(100),
        timeout: Duration::from_secs(30),
        params_schema: None,
        display_name: None,
        export: None,
        http: None,
        concurrency: None,
    }
}

/// errand running in this test's actix system.
pub struct TestApp {
    pub address: String,
    pub registry: actix::Addr<errand::actors::SupervisorRegistry>,
    /// Make the periodic actors (rescuer, pruner, lease keeper) run a pass now.
    pub ticks: errand::startup::Ticks,
    pub db: TestDb,
    pub http: reqwest::Client,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    stopped: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

/// errand with the shipped configuration on a fresh database.
pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}, HandlerRegistry::builtin()).await
}

/// errand with settings changed by `configure` and the given handlers.
pub async fn spawn_app_with(configure: impl FnOnce(&mut Settings), handlers: HandlerRegistry) -> TestApp {
    errand::telemetry::init_with_default("warn");
    let db = TestDb::create().await;
    spawn_app_on(db, configure, handlers).await
}

/// errand on an existing test database.
pub async fn spawn_app_on(db: TestDb, configure: impl FnOnce(&mut Settings), handlers: HandlerRegistry) -> TestApp {
    let mut settings = test_settings(&db);
    configure(&mut settings);
    settings.validate().expect("test settings are valid");
    let app = Application::build(settings, handlers).await.expect("errand starts");
    let address = format!("http://127.0.0.1:{}", app.port());
    let registry = app.registry();
    let ticks = app.ticks();
    let (stop, stopped_rx) = tokio::sync::oneshot::channel::<()>();
    let stopped = actix_web::rt::spawn(app.run_until(async move {
        let _ = stopped_rx.await;
    }));
    TestApp { address, registry, ticks, db, http: reqwest::Client::new(), stop: Some(stop), stopped: Some(stopped) }
}

impl TestApp {
    /// Shuts errand down gracefully and waits for it.
    pub async fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(stopped) = self.stopped.take() {
            let _ = stopped.await;
        }
    }
}

/// Checks the answer to a cancel of a running job: 202 `cancelling`, or, if
/// its worker stopped before the answer read the job, 200 `cancelled` (the
/// answer tells the job's state when it is given).
pub async fn assert_stopping(response: Response) {
    let status = response.status();
    let state = response.json::<Value>().await.unwrap()["state"].clone();
    assert!(
        (status == StatusCode::ACCEPTED && state == "cancelling") || (status == StatusCode::OK && state == "cancelled"),
        "a running job is being stopped: {status} {state}"
    );
}

/// The `id` of the job a response shows.
pub async fn id_of(response: Response) -> String {
    response.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_owned()
}

/// A client of one errand instance (in-process or a separate process).
#[allow(async_fn_in_trait)]
pub trait Api {
    fn address(&self) -> &str;
    fn http(&self) -> &reqwest::Client;

    async fn submit(&self, token: &str, job_type: &str, key: &str, params: Value) -> Response {
        self.http()
            .post(format!("{}/jobs/{job_type}", self.address()))
            .bearer_auth(token)
            .header("Idempotency-Key", key)
            .json(&params)
            .send()
            .await
            .expect("POST /jobs")
    }

    /// Submits and expects a 202; returns the job's id.
    async fn create(&self, token: &str, job_type: &str, params: Value) -> String {
        let response = self.submit(token, job_type, &Uuid::new_v4().to_string(), params).await;
        assert_eq!(response.status(), StatusCode::ACCEPTED);
        id_of(response).await
    }

    async fn get(&self, token: &str, path: &str) -> Response {
        self.http().get(format!("{}{path}", self.address())).bearer_auth(token).send().await.expect("GET")
    }

    /// A POST without a body.
    async fn post(&self, token: &str, path: &str) -> Response {
        self.http().post(format!("{}{path}", self.address())).bearer_auth(token).send().await.expect("POST")
    }

    /// A POST of a JSON body.
    async fn post_json(&self, token: &str, path: &str, body: Value) -> Response {
        let url = format!("{}{path}", self.address());
        self.http().post(url).bearer_auth(token).json(&body).send().await.expect("POST")
    }

    /// A GET with no Authorization header.
    async fn get_without_token(&self, path: &str) -> Response {
        self.http().get(format!("{}{path}", self.address())).send().await.expect("GET")
    }

    async fn job(&self, token: &str, id: &str) -> Value {
        let response = self.get(token, &format!("/jobs/{id}")).await;
        assert_eq!(response.status(), StatusCode::OK, "GET /jobs/{id}");
        response.json().await.unwrap()
    }

    /// Waits (up to `within`) until the job's status is `completed`, `failed` or `cancelled`.
    async fn wait_until_finished(&self, token: &str, id: &str, within: Duration) -> Value {
        let deadline = Instant::now() + within;
        loop {
            let job = self.job(token, id).await;
            if ["completed", "failed", "cancelled"].contains(&job["status"].as_str().unwrap_or_default()) {
                return job;
            }
            assert!(Instant::now() < deadline, "job {id} did not finish within {within:?}: {job}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Api for TestApp {
    fn address(&self) -> &str {
        &self.address
    }
    fn http(&self) -> &reqwest::Client {
        &self.http
    }
}

/// A valid token for `user` of `tenant`.
pub fn token(tenant: &str, user: &str) -> String {
    token_with(UserClaims { sub: user.into(), tenant: tenant.into(), email: None, exp: now_secs() + 3600 })
}

/// A valid operator token (`scope: operator`) for `name`.
pub fn operator_token(name: &str) -> String {
    let claims = errand::tokens::OperatorClaims { sub: name.into(), scope: "operator".into(), exp: now_secs() + 3600 };
    TokenIssuer::new(SECRET).unwrap().issue(&claims).unwrap()
}

pub fn token_with(claims: UserClaims) -> String {
    TokenIssuer::new(SECRET).unwrap().issue(&claims).unwrap()
}

/// A token with no signature at all (`alg: none` and the like).
pub fn unsigned_token(header: Value, claims: Value) -> String {
    use base64::Engine;
    let b64 = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    format!("{}.{}.", b64(header), b64(claims))
}

pub fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// Waits (up to `within`) for an async condition.
pub async fn eventually<F, Fut>(within: Duration, what: &str, mut condition: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + within;
    while !condition().await {
        assert!(Instant::now() < deadline, "timed out after {within:?} waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Asserts an RFC 9457 problem response with `status` and `code`; returns the body.
pub async fn assert_problem(response: Response, status: StatusCode, code: &str) -> Value {
    assert_eq!(response.status(), status);
    let content_type = response.headers()["content-type"].to_str().unwrap().to_owned();
    assert_eq!(content_type, "application/problem+json");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["status"], json!(status.as_u16()));
    assert_eq!(body["code"], code, "{body}");
    assert!(body["detail"].as_str().is_some_and(|d| !d.is_empty()), "{body}");
    assert!(body["title"].is_string() && body["type"].is_string(), "{body}");
    body
}

/// A real `errand serve` process.
pub struct ErrandProcess {
    pub child: Child,
    pub address: String,
    /// The address errand said it listens on (its bind address, port chosen).
    pub listening: String,
    http: reqwest::Client,
}

impl ErrandProcess {
    /// Starts `errand serve` on `db` with extra `ERRAND_*` settings, and waits until it listens.
    pub fn start(db: &TestDb, env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_errand"));
        command
            .arg("serve")
            .arg("--config")
            .arg(repo_path("config.toml"))
            .env_remove("DATABASE_URL")
            .env("ERRAND_DATABASE__URL", &db.url)
            .env("ERRAND_DATABASE__POOL_SIZE", "8")
            .env("ERRAND_HTTP__BIND", "127.0.0.1:0")
            .env("ERRAND_HTTP__WORKERS", "2")
            .env("ERRAND_AUTH__JWT_SECRET", SECRET)
            .env("ERRAND_WORKERS__POLL_INTERVAL", "200ms")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("start errand");
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).expect("errand prints its address");
        let listening = line
            .trim()
            .strip_prefix("errand listening on ")
            .unwrap_or_else(|| panic!("errand did not start: {line:?}"));
        let port = listening.rsplit(':').next().unwrap_or_default();
        let address = format!("http://127.0.0.1:{port}");
        Self { child, address, listening: listening.to_owned(), http: reqwest::Client::new() }
    }

    /// SIGKILL: no chance to clean up.
    pub fn kill_hard(&mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reap");
    }

    /// SIGTERM, then wait for the process to exit.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().expect("kill -TERM");
        self.child.wait().expect("reap")
    }
}

impl Drop for ErrandProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Api for ErrandProcess {
    fn address(&self) -> &str {
        &self.address
    }
    fn http(&self) -> &reqwest::Client {
        &self.http
    }
}

/// One frame of a Server-Sent Events stream.
#[derive(Debug, Clone, PartialEq)]
pub enum SseFrame {
    Event { id: Option<String>, event: Option<String>, data: Value },
    Comment(String),
}

/// A client end of `GET /notifications/stream`.
pub struct SseStream {
    body: std::pin::Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<actix_web::web::Bytes>>>>,
    buffer: String,
}

impl SseStream {
    /// Opens the stream at `url` with optional bearer token and `Last-Event-ID`.
    pub async fn open(url: &str, token: Option<&str>, last_event_id: Option<&str>) -> Self {
        let mut request = reqwest::Client::new().get(url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(id) = last_event_id {
            request = request.header("Last-Event-ID", id);
        }
        let response = request.send().await.expect("open stream");
        assert_eq!(response.status(), StatusCode::OK, "stream refused");
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Self { body: Box::pin(response.bytes_stream()), buffer: String::new() }
    }

    /// The next frame, or `None` if none arrives within `within`.
    pub async fn next(&mut self, within: Duration) -> Option<SseFrame> {
        use futures_util::StreamExt;
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let frame: String = self.buffer.drain(..end + 2).collect();
                return Some(parse_frame(&frame));
            }
            let chunk = tokio::time::timeout_at(deadline, self.body.next()).await.ok()??;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk.expect("stream chunk")));
        }
    }

    /// The next notification (`job_completed`) event as (id, data), skipping
    /// comments and other events; `None` if none arrives within `within`.
    pub async fn next_event(&mut self, within: Duration) -> Option<(Option<String>, Value)> {
        self.next_event_of("job_completed", within).await
    }

    /// The next event named `name` as (id, data), skipping anything else.
    pub async fn next_event_of(&mut self, name: &str, within: Duration) -> Option<(Option<String>, Value)> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.next(left).await? {
                SseFrame::Event { id, event, data } if event.as_deref() == Some(name) => return Some((id, data)),
                _ => continue,
            }
        }
    }

    /// The next `unread_count` event's count, skipping anything else; `None`
    /// if none arrives within `within`.
    pub async fn next_unread_count(&mut self, within: Duration) -> Option<i64> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.next(left).await? {
                SseFrame::Event { id, event, data } if event.as_deref() == Some("unread_count") => {
                    assert_eq!(id, None, "a count is never replayed: it carries no event id");
                    return Some(data["unread_count"].as_i64().expect("a count"));
                }
                _ => continue,
            }
        }
    }
}

fn parse_frame(frame: &str) -> SseFrame {
    let (mut id, mut event, mut data, mut comment) = (None, None, String::new(), None);
    for line in frame.lines() {
        if let Some(rest) = line.strip_prefix(':') {
            comment = Some(rest.trim().to_owned());
        } else if let Some((field, value)) = line.split_once(':') {
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "id" => id = Some(value.to_owned()),
                "event" => event = Some(value.to_owned()),
                "data" => data.push_str(value),
                _ => {}
            }
        }
    }
    if data.is_empty() {
        SseFrame::Comment(comment.unwrap_or_default())
    } else {
        SseFrame::Event { id, event, data: serde_json::from_str(&data).expect("event data is JSON") }
    }
}

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

    /// Every email received so far.
    pub async fn emails(&self) -> Vec<Value> {
        reqwest::get(format!("{}/email", self.api)).await.unwrap().json().await.unwrap()
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
        s.job_types.get_mut("sleep").unwrap().max_attempts = 3;
    }
}

/// A token whose `email` claim is `email`.
pub fn token_for(tenant: &str, user: &str, email: &str) -> String {
    token_with(UserClaims {
        sub: user.into(),
        tenant: tenant.into(),
        email: Some(email.into()),
        exp: now_secs() + 3600,
    })
}

/// Adds an export job type `name` running `export`, with test-friendly retries.
pub fn add_export_type(settings: &mut Settings, name: &str, export: errand::config::ExportSettings) {
    let mut job_type = job_type("sql_export");
    job_type.export = Some(export);
    settings.job_types.insert(name.into(), job_type);
}

/// A directory removed when the test ends.
pub struct TempDir(PathBuf);

impl std::ops::Deref for TempDir {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Exports into a fresh directory, with the demo tables seeded (`demo-1`, `demo-2`).
pub async fn spawn_exporting_app(configure: impl FnOnce(&mut Settings)) -> (TestApp, TempDir) {
    errand::telemetry::init_with_default("warn");
    let db = TestDb::create().await;
    let store = errand::store::Store::connect(&db.url, 2).unwrap();
    errand::demo::seed(&store, 2, 500).await.unwrap();
    let dir = std::env::temp_dir().join(format!("errand-results-{}", Uuid::new_v4().simple()));
    let results = dir.clone();
    let app = spawn_app_on(
        db,
        move |s| {
            s.storage.local_dir = results;
            configure(s);
        },
        errand::jobs::HandlerRegistry::builtin(),
    )
    .await;
    (app, TempDir(dir))
}

impl TestApp {
    /// GET of a signed URL errand handed out, sent to this instance whatever
    /// public base URL it was signed for.
    pub async fn fetch_signed(&self, url: &str) -> Response {
        let path = url.split_once("/files/").map(|(_, rest)| rest).expect("a /files/ URL");
        self.http.get(format!("{}/files/{path}", self.address)).send().await.unwrap()
    }

    /// Opens an email's link (`/links/…`) on this instance, whatever public
    /// base URL it was made for, without a token or following a redirect.
    pub async fn open_link(&self, link: &str) -> Response {
        let path = link.split_once("/links/").map(|(_, rest)| rest).expect("a /links/ URL");
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        client.get(format!("{}/links/{path}", self.address)).send().await.unwrap()
    }

    /// `GET /jobs/{id}/result` without following the redirect.
    pub async fn result_redirect(&self, token: &str, id: &str) -> Response {
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        client.get(format!("{}/jobs/{id}/result", self.address)).bearer_auth(token).send().await.unwrap()
    }
}

/// Every file under `dir`, recursively.
pub fn files_under(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                found.extend(files_under(&path));
            } else {
                found.push(path);
            }
        }
    }
    found
}

/// An S3-compatible server in this test (s3s + s3s-fs over real TCP, checking
/// SigV4 signatures and presigned-URL expiry like S3), storing into a directory.
pub struct S3Server {
    pub endpoint: String,
    pub root: PathBuf,
    pub bucket: String,
}

pub const S3_ACCESS_KEY: &str = "errand-test-key";
pub const S3_SECRET_KEY: &str = "errand-test-secret";

impl S3Server {
    pub async fn start() -> Self {
        use hyper_util::rt::{TokioExecutor, TokioIo};
        use hyper_util::server::conn::auto::Builder;
        let root = std::env::temp_dir().join(format!("errand-s3-{}", Uuid::new_v4().simple()));
        let bucket = "errand-results".to_owned();
        // s3s-fs keeps a bucket as a directory.
        std::fs::create_dir_all(root.join(&bucket)).unwrap();
        let mut builder = s3s::service::S3ServiceBuilder::new(s3s_fs::FileSystem::new(&root).unwrap());
        builder.set_auth(s3s::auth::SimpleAuth::from_single(S3_ACCESS_KEY, S3_SECRET_KEY));
        let service = builder.build();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let service = service.clone();
                tokio::spawn(async move {
                    let _ = Builder::new(TokioExecutor::new()).serve_connection(TokioIo::new(socket), service).await;
                });
            }
        });
        Self { endpoint, root, bucket }
    }

    /// Storage settings pointing at this server.
    pub fn settings(&self) -> errand::config::S3Settings {
        errand::config::S3Settings {
            endpoint: self.endpoint.clone(),
            public_endpoint: None,
            region: "us-east-1".into(),
            bucket: self.bucket.clone(),
            path_style: true,
            access_key: Some(S3_ACCESS_KEY.into()),
            secret_key: Some(S3_SECRET_KEY.into()),
        }
    }

    /// The objects in the bucket, and anything a multipart upload left behind.
    pub fn objects_and_uploads(&self) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let objects = files_under(&self.root.join(&self.bucket));
        let uploads = files_under(&self.root)
            .into_iter()
            .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.contains("upload")))
            .collect();
        (objects, uploads)
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// errand with the builtin job types and `held`, whose jobs the returned
/// [`Gate`] holds running until the test releases them.
pub async fn spawn_app_with_gate(configure: impl FnOnce(&mut Settings)) -> (TestApp, Gate) {
    let gate = Gate::new();
    let mut handlers = HandlerRegistry::builtin();
    handlers.register("gate", gate.clone());
    let configure = |s: &mut Settings| {
        s.job_types.insert("held".into(), job_type("gate"));
        configure(s);
    };
    (spawn_app_with(configure, handlers).await, gate)
}

/// A handler that holds every job it runs "running" until the test lets it
/// go, and signals each start: tests wait on it instead of polling.
#[derive(Clone)]
pub struct Gate {
    open: Arc<tokio::sync::Semaphore>,
    started: Arc<tokio::sync::Semaphore>,
}

impl Gate {
    pub fn new() -> Self {
        Self { open: Arc::new(tokio::sync::Semaphore::new(0)), started: Arc::new(tokio::sync::Semaphore::new(0)) }
    }

    /// Waits until `n` more attempts have started.
    pub async fn started(&self, n: u32, within: Duration) {
        let started = tokio::time::timeout(within, self.started.acquire_many(n)).await;
        started.expect("attempts started in time").expect("gate open").forget();
    }

    /// Lets `n` held attempts complete.
    pub fn release(&self, n: usize) {
        self.open.add_permits(n);
    }

    /// Signals an attempt's start (for handlers that hold attempts their own way).
    pub fn mark_started(&self) {
        self.started.add_permits(1);
    }
}

impl errand::jobs::JobHandler for Gate {
    fn run(&self, _ctx: errand::jobs::JobContext) -> errand::jobs::HandlerFuture {
        let gate = self.clone();
        Box::pin(async move {
            gate.mark_started();
            gate.open.acquire().await.expect("gate open").forget();
            Ok(errand::jobs::JobOutput::default())
        })
    }
}
