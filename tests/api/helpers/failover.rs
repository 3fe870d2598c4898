//! A pg_auto_failover formation (a monitor and two data nodes) made by
//! `scripts/failover.sh`, which `scripts/test` makes ready
//! (`ERRAND_TEST_FAILOVER`). Stopped when dropped.

use super::*;

pub struct Formation {
    dir: PathBuf,
    /// The multi-host URL of the formation's `database`, asking for the primary.
    pub url: String,
}

impl Formation {
    /// Builds the formation with `database` made on its primary; waits until it has a healthy secondary.
    pub fn up(database: &str) -> Self {
        std::env::var("ERRAND_TEST_FAILOVER").expect(
            "ERRAND_TEST_FAILOVER is not set: run the tests with scripts/test, which installs pg_auto_failover",
        );
        let dir = std::env::temp_dir().join(format!("errand-failover-{}", Uuid::new_v4().simple()));
        let mut formation = Self { dir, url: String::new() };
        let url = run(&formation.dir, &["up"], &[("ERRAND_FAILOVER_DB", database)]);
        formation.url = url.trim().replacen("/postgres?", &format!("/{database}?"), 1);
        formation
    }

    /// A planned switchover; returns once the new primary takes writes and the old one follows it.
    pub async fn switchover(&self) {
        self.run_aside(&["switchover"]).await;
    }

    /// An unplanned failover: the primary's node stopped at once. Returns the stopped node's name.
    pub async fn kill_primary(&self) -> String {
        self.run_aside(&["kill_primary"]).await.trim().to_owned()
    }

    /// Starts a stopped node again; it rejoins as the secondary.
    pub async fn restart_node(&self, node: &str) {
        self.run_aside(&["restart_node", node]).await;
    }

    /// [`run`] on a thread of its own: the test's runtime goes on (its clients keep submitting).
    async fn run_aside(&self, args: &[&str]) -> String {
        let (dir, args): (PathBuf, Vec<String>) = (self.dir.clone(), args.iter().map(|a| (*a).to_owned()).collect());
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run(&dir, &args, &[])
        })
        .await
        .expect("scripts/failover.sh ran")
    }
}

/// Runs `scripts/failover.sh <args[0]> <dir> <args[1..]>`; its stdout.
fn run(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut command = Command::new("bash");
    command.arg(repo_path("scripts/failover.sh")).arg(args[0]).arg(dir).args(&args[1..]);
    for (key, value) in env {
        command.env(key, value);
    }
    // Its stderr goes into the failure's message: the test's cleanup removes
    // the formation's logs, and a suite's output may keep only the panic.
    let output = command.stderr(Stdio::piped()).output().expect("run scripts/failover.sh");
    let said = String::from_utf8_lossy(&output.stderr);
    eprint!("{said}");
    assert!(output.status.success(), "scripts/failover.sh {args:?} failed ({}); it said:\n{said}", output.status);
    String::from_utf8_lossy(&output.stdout).into_owned()
}

impl Drop for Formation {
    fn drop(&mut self) {
        if self.dir.exists() {
            let _ = Command::new("bash").arg(repo_path("scripts/failover.sh")).arg("down").arg(&self.dir).output();
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
