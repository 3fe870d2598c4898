//! A PostgreSQL cluster of the test's own, made with the system's `initdb` and
//! `pg_ctl`, that the test can stop and start (a shared server cannot be
//! restarted under other tests). Removed when dropped.

use std::path::PathBuf;
use std::process::Command;

use crate::helpers::{TestDb, free_port};

pub struct PrivateCluster {
    dir: PathBuf,
    bin: PathBuf,
    pub port: u16,
    /// initdb and postgres refuse to run as root: then they run as `postgres`.
    as_root: bool,
    /// Server settings beyond the test defaults, as `-c` options.
    settings: Vec<String>,
}

impl PrivateCluster {
    /// Initialises and starts a throw-away cluster; `None` where the server
    /// binaries are not installed (the test then says so and passes nothing).
    pub fn start() -> Option<Self> {
        Self::start_with(|_| Vec::new())
    }

    /// [`Self::start`] with TLS on: `cert` and `key` (PEM) are the server's.
    pub fn start_with_tls(cert: &str, key: &str) -> Option<Self> {
        Self::start_with(|cluster| {
            let (cert_file, key_file) = (cluster.dir.join("server.crt"), cluster.dir.join("server.key"));
            std::fs::write(&cert_file, cert).expect("server certificate");
            std::fs::write(&key_file, key).expect("server key");
            // PostgreSQL refuses a key others may read.
            run(Command::new("chmod").arg("600").arg(&key_file));
            if cluster.as_root {
                run(Command::new("chown").arg("postgres:").arg(&cert_file).arg(&key_file));
            }
            vec![
                "ssl=on".into(),
                format!("ssl_cert_file={}", cert_file.display()),
                format!("ssl_key_file={}", key_file.display()),
            ]
        })
    }

    /// Starts a cluster with the settings `settings` makes (given the cluster's directory).
    fn start_with(settings: impl FnOnce(&Self) -> Vec<String>) -> Option<Self> {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|entry| Some(entry.ok()?.path().join("bin")))
            .filter(|bin| bin.join("pg_ctl").exists())
            // The newest major version (by number: 9 is older than 16).
            .max_by_key(|bin| bin.parent()?.file_name()?.to_str()?.parse::<u32>().ok())?;
        let dir = std::env::temp_dir().join(format!("errand-test-pg-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).expect("cluster directory");
        let mut cluster = Self { dir, bin, port: free_port(), as_root: as_root(), settings: Vec::new() };
        if cluster.as_root {
            run(Command::new("chown").arg("postgres:").arg(&cluster.dir));
        }
        cluster.settings = settings(&cluster);
        let data = cluster.dir.join("data");
        run(cluster.command("initdb").arg("-D").arg(&data).args([
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
        ]));
        cluster.pg_ctl("start");
        Some(cluster)
    }

    /// A new database on this cluster.
    pub async fn database(&self) -> TestDb {
        TestDb::create_on(&format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)).await
    }

    /// Stops the server (fast shutdown: connections are cut).
    pub fn stop(&self) {
        self.pg_ctl("stop");
    }

    /// Starts the server again on the same port and data.
    pub fn restart(&self) {
        self.pg_ctl("start");
    }

    fn pg_ctl(&self, action: &str) {
        let mut options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off",
            self.port,
            self.dir.display()
        );
        for setting in &self.settings {
            options.push_str(&format!(" -c {setting}"));
        }
        let data = self.dir.join("data");
        let log = self.dir.join("server.log");
        let mut command = self.command("pg_ctl");
        command.arg("-D").arg(&data).arg("-l").arg(&log).args(["-w", "-t", "60", "-m", "fast", action]);
        if action == "start" {
            command.args(["-o", &options]);
        }
        run(&mut command);
    }

    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if self.as_root {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(path);
            command
        } else {
            Command::new(path)
        }
    }
}

impl Drop for PrivateCluster {
    fn drop(&mut self) {
        let _ = self.command("pg_ctl").arg("-D").arg(self.dir.join("data")).args(["-m", "immediate", "stop"]).output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn as_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

fn run(command: &mut Command) {
    let output = command.output().expect("run a PostgreSQL tool");
    assert!(output.status.success(), "{command:?}: {}", String::from_utf8_lossy(&output.stderr));
}
