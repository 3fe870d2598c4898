//! Real `errand serve` processes, for tests across processes, `SIGKILL` and `SIGTERM`.

use super::*;

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
        Self::start_on(&db.url, env)
    }

    /// [`Self::start`] on the database of `url`.
    pub fn start_on(url: &str, env: &[(&str, &str)]) -> Self {
        Self::start_build(Path::new(env!("CARGO_BIN_EXE_errand")), &repo_path("config.toml"), url, env)
    }

    /// [`Self::start_on`] with another build of errand (`binary`, with its own `config`).
    pub fn start_build(binary: &Path, config: &Path, url: &str, env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(binary);
        command
            .arg("serve")
            .arg("--config")
            .arg(config)
            .env_remove("DATABASE_URL")
            .env("ERRAND_DATABASE__URL", url)
            .env("ERRAND_DATABASE__POOL_SIZE", "8")
            .env("ERRAND_HTTP__BIND", "127.0.0.1:0")
            .env("ERRAND_HTTP__WORKERS", "2")
            .env("ERRAND_AUTH__JWT_SECRET", SECRET)
            .env("ERRAND_WORKERS__POLL_INTERVAL", "200ms")
            // As in test_settings: tests poll far past a person's pace.
            .env("ERRAND_RATE_LIMITS__PER_USER", "unlimited")
            .env("ERRAND_RATE_LIMITS__CREATES_PER_USER", "unlimited")
            .env("ERRAND_RATE_LIMITS__PER_TENANT", "unlimited")
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
        // Idle connections are dropped before errand's keep-alive (5 s) could
        // close one as a request goes out on it.
        let http = reqwest::Client::builder().pool_idle_timeout(Duration::from_secs(2)).build().unwrap();
        Self { child, address, listening: listening.to_owned(), http }
    }

    /// SIGKILL: no chance to clean up.
    pub fn kill_hard(&mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reap");
    }

    /// SIGTERM, then wait for the process to exit.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        self.ask_to_stop();
        self.child.wait().expect("reap")
    }

    /// SIGTERM, without waiting: the process shuts down gracefully meanwhile.
    pub fn ask_to_stop(&self) {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().expect("kill -TERM");
    }

    /// Waits until the process has exited.
    pub fn wait(&mut self) -> std::process::ExitStatus {
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

/// The previous release's build, for the upgrade test: a folder holding its
/// `errand` and its `config.toml`, which `scripts/test` builds once per
/// release from its tag (`errand_build_previous_release` in `scripts/lib.sh`)
/// and names in `ERRAND_TEST_PREVIOUS_RELEASE`.
pub struct PreviousRelease {
    dir: PathBuf,
}

impl PreviousRelease {
    pub fn from_env() -> Self {
        let dir = std::env::var("ERRAND_TEST_PREVIOUS_RELEASE").expect(
            "ERRAND_TEST_PREVIOUS_RELEASE is not set: run the tests with scripts/test, which builds the previous release",
        );
        Self { dir: PathBuf::from(dir) }
    }

    /// `errand <args>` of the release on the database of `url`.
    pub fn run(&self, args: &[&str], url: &str) -> std::process::Output {
        run_build(&self.dir.join("errand"), &self.dir.join("config.toml"), args, &[("ERRAND_DATABASE__URL", url)])
    }

    /// `errand serve` of the release, as [`ErrandProcess::start_on`].
    pub fn start(&self, url: &str, env: &[(&str, &str)]) -> ErrandProcess {
        ErrandProcess::start_build(&self.dir.join("errand"), &self.dir.join("config.toml"), url, env)
    }
}

/// `errand <args>` of `binary` with its `config` and `env` (the test's own
/// `DATABASE_URL` left out), to its end.
pub fn run_build(binary: &Path, config: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut command = Command::new(binary);
    command.arg("--config").arg(config).args(args).env_remove("DATABASE_URL");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("run errand")
}

/// [`run_build`] of this build, with the repository's `config.toml`.
pub fn run_errand(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    run_build(Path::new(env!("CARGO_BIN_EXE_errand")), &repo_path("config.toml"), args, env)
}
