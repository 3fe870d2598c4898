//! PgBouncer (`ERRAND_TEST_PGBOUNCER`, installed by `scripts/test`) in front
//! of the test server, in one pool mode. Stopped when dropped.

use super::*;

pub struct Bouncer {
    child: Child,
    dir: PathBuf,
    pub port: u16,
    user: String,
}

impl Bouncer {
    /// Starts PgBouncer with `pool_mode = mode`, and waits until it listens.
    pub fn start(mode: &str) -> Self {
        let bin = std::env::var("ERRAND_TEST_PGBOUNCER")
            .expect("ERRAND_TEST_PGBOUNCER is not set: run the tests with scripts/test, which installs PgBouncer");
        let server = reqwest::Url::parse(&admin_url()).expect("DATABASE_URL must be a URL");
        let (host, server_port, user) =
            (server.host_str().unwrap_or("127.0.0.1").to_owned(), server.port().unwrap_or(5432), server.username());
        let user = if user.is_empty() { "postgres".to_owned() } else { user.to_owned() };
        let dir = std::env::temp_dir().join(format!("errand-pgbouncer-{}", Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let port = free_port();
        let ini = dir.join("pgbouncer.ini");
        std::fs::write(
            &ini,
            format!(
                "[databases]\n* = host={host} port={server_port}\n[pgbouncer]\nlisten_addr = 127.0.0.1\n\
                 listen_port = {port}\nunix_socket_dir =\nauth_type = trust\nauth_file = {users}\n\
                 pool_mode = {mode}\nlogfile = {log}\npidfile = {pid}\n",
                users = dir.join("users.txt").display(),
                log = dir.join("pgbouncer.log").display(),
                pid = dir.join("pgbouncer.pid").display(),
            ),
        )
        .unwrap();
        // Trust, but PgBouncer still wants the user listed.
        std::fs::write(dir.join("users.txt"), format!("\"{user}\" \"\"\n")).unwrap();
        // PgBouncer refuses to run as root.
        let as_root = Command::new("id").arg("-u").output().is_ok_and(|out| out.stdout.starts_with(b"0\n"));
        let mut command = if as_root {
            Command::new("chown").args(["-R", "postgres:"]).arg(&dir).status().expect("chown");
            let mut runuser = Command::new("runuser");
            runuser.args(["-u", "postgres", "--", &bin]);
            runuser
        } else {
            Command::new(&bin)
        };
        let child = command.arg(&ini).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("start pgbouncer");
        let bouncer = Self { child, dir, port, user };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "pgbouncer did not listen: {:?}", bouncer.log());
            std::thread::sleep(Duration::from_millis(20));
        }
        bouncer
    }

    /// The URL of `db` through this PgBouncer.
    pub fn url(&self, db: &TestDb) -> String {
        format!("postgres://{}@127.0.0.1:{}/{}", self.user, self.port, db.name)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("pgbouncer.log")).unwrap_or_default()
    }
}

impl Drop for Bouncer {
    fn drop(&mut self) {
        // PgBouncer itself (by the pid it wrote), then the runuser around it.
        if let Ok(pid) = std::fs::read_to_string(self.dir.join("pgbouncer.pid")) {
            let _ = Command::new("kill").args(["-TERM", pid.trim()]).status();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
