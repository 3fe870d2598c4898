//! errand started in this test's actix system (`TestApp`, or its builder),
//! with the shipped configuration made quick for tests; and the helpers of
//! tests whose app stores files.

use super::*;

pub(super) fn repo_path(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// The shipped `config.toml`, pointed at `db`, on a free port, with fast loops for tests.
pub fn test_settings(db: &TestDb) -> Settings {
    let mut settings = Settings::load(&repo_path("config.toml")).expect("shipped config.toml loads");
    settings.database.url = db.url.clone().try_into().unwrap();
    settings.database.pool_size = 8;
    settings.http.bind = "127.0.0.1:0".parse().unwrap();
    settings.http.workers = std::num::NonZeroUsize::new(2);
    settings.auth.jwt_secret = SECRET.to_owned().try_into().unwrap();
    settings.workers.poll_interval = Duration::from_millis(200);
    settings.workers.lease = Duration::from_secs(3);
    settings.workers.shutdown_grace = Duration::from_secs(2);
    // Tests poll and burst far past a person's pace; the rate limit tests turn budgets on.
    settings.rate_limits.per_user = errand::config::CountCap(None);
    settings.rate_limits.creates_per_user = errand::config::CountCap(None);
    settings.rate_limits.per_tenant = errand::config::CountCap(None);
    for job_type in settings.job_types.values_mut() {
        job_type.backoff_base = Duration::from_millis(20);
        job_type.backoff_max = Duration::from_millis(100);
    }
    settings
}

/// A count that is not zero, for settings typed so (`NonZeroU32`).
pub fn nonzero(n: u32) -> std::num::NonZeroU32 {
    std::num::NonZeroU32::new(n).expect("not zero")
}

/// A job type running `handler` with test-friendly retry settings.
pub fn job_type(handler: &str) -> JobTypeSettings {
    let mut settings = JobTypeSettings::new(handler.to_owned().into());
    settings.max_attempts = nonzero(3);
    settings.backoff_base = Duration::from_millis(20);
    settings.backoff_max = Duration::from_millis(100);
    settings.timeout = Duration::from_secs(30);
    settings
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
    TestApp::builder().spawn().await
}

/// errand with settings changed by `configure` and the given handlers.
pub async fn spawn_app_with(configure: impl FnOnce(&mut Settings), handlers: HandlerRegistry) -> TestApp {
    TestApp::builder().handlers(handlers).configure(configure).spawn().await
}

/// errand on an existing test database.
pub async fn spawn_app_on(db: TestDb, configure: impl FnOnce(&mut Settings), handlers: HandlerRegistry) -> TestApp {
    TestApp::builder().on(db).handlers(handlers).configure(configure).spawn().await
}

/// A change to the test settings.
type Configure<'a> = Box<dyn FnOnce(&mut Settings) + 'a>;

/// A [`TestApp`] to be: `TestApp::builder().job_type("flaky", Flaky).spawn().await`.
pub struct TestAppBuilder<'a> {
    db: Option<TestDb>,
    handlers: HandlerRegistry,
    configure: Vec<Configure<'a>>,
}

impl<'a> TestAppBuilder<'a> {
    /// Changes the test settings (several calls apply in order).
    pub fn configure(mut self, configure: impl FnOnce(&mut Settings) + 'a) -> Self {
        self.configure.push(Box::new(configure));
        self
    }

    /// A job type `name` run by `handler`, with test-friendly retries.
    pub fn job_type(mut self, name: &str, handler: impl errand::jobs::JobHandler) -> Self {
        self.handlers.register(name, handler);
        let name = name.to_owned();
        self.configure(move |s| _ = s.job_types.insert(name.clone(), job_type(&name)))
    }

    /// Instead of the built-in handlers alone.
    pub fn handlers(mut self, handlers: HandlerRegistry) -> Self {
        self.handlers = handlers;
        self
    }

    /// On this database instead of a fresh copy of the template.
    pub fn on(mut self, db: TestDb) -> Self {
        self.db = Some(db);
        self
    }

    pub async fn spawn(self) -> TestApp {
        errand::telemetry::init_with_default("warn");
        let db = match self.db {
            Some(db) => db,
            None => TestDb::create().await,
        };
        let mut settings = test_settings(&db);
        for configure in self.configure {
            configure(&mut settings);
        }
        settings.validate().expect("test settings are valid");
        let app = Application::build(settings, self.handlers).await.expect("errand starts");
        let address = format!("http://127.0.0.1:{}", app.port());
        let registry = app.registry();
        let ticks = app.ticks();
        let (stop, stopped_rx) = tokio::sync::oneshot::channel::<()>();
        let stopped = actix_web::rt::spawn(app.run_until(async move {
            let _ = stopped_rx.await;
        }));
        let http = reqwest::Client::new();
        TestApp { address, registry, ticks, db, http, stop: Some(stop), stopped: Some(stopped) }
    }
}

impl TestApp {
    pub fn builder<'a>() -> TestAppBuilder<'a> {
        TestAppBuilder { db: None, handlers: HandlerRegistry::builtin(), configure: Vec::new() }
    }

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

/// Adds an export job type `name` running `export`, with test-friendly retries.
/// An export of `query` in `format`: formulas defused, read from errand's own
/// database, not resumable (struct update syntax for the rest).
pub fn export_settings(query: &str, format: errand::domain::ExportFormat) -> errand::config::ExportSettings {
    errand::config::ExportSettings {
        query: query.into(),
        formats: vec![format],
        source_database_url: None,
        defuse_formulas: true,
        resume_key: Vec::new(),
        tenant_setting: None,
        max_transaction: Some(std::time::Duration::from_secs(60)),
    }
}

pub fn add_export_type(settings: &mut Settings, name: &str, export: errand::config::ExportSettings) {
    let mut job_type = job_type("sql_export");
    job_type.export = Some(export);
    settings.job_types.insert(name.into(), job_type);
}

/// A directory removed when the test ends.
pub struct TempDir(PathBuf);

impl TempDir {
    /// A fresh directory named after `what`, not yet made.
    pub fn named(what: &str) -> Self {
        Self(std::env::temp_dir().join(format!("errand-{what}-{}", Uuid::new_v4().simple())))
    }
}

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
    errand::store::demo::seed(&store, 2, 500).await.unwrap();
    let dir = TempDir::named("results");
    let results = dir.to_path_buf();
    let app = spawn_app_on(
        db,
        move |s| {
            s.storage.local_dir = results;
            configure(s);
        },
        errand::jobs::HandlerRegistry::builtin(),
    )
    .await;
    (app, dir)
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

/// The directories of uploads in parts under `dir` (`….upload-<id>`).
pub fn uploads_under(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for path in entries.flatten().map(|entry| entry.path()).filter(|path| path.is_dir()) {
            if path.extension().is_some_and(|e| e.to_string_lossy().starts_with("upload-")) {
                found.push(path);
            } else {
                found.extend(uploads_under(&path));
            }
        }
    }
    found
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
