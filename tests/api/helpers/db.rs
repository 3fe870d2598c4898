//! Test databases: each test gets its own, a copy of a template migrated
//! once per schema, dropped when the test ends; and a store on one for
//! tests that drive the store directly.

use super::*;

/// The server that test databases are created on: `DATABASE_URL` (any
/// database on it), else the local default.
pub fn admin_url() -> String {
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
    /// Dropped with this handle (not a [`TestDb::shared`] one).
    owns: bool,
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
        Self { url: with_database(admin, &name), name, admin: admin.to_owned(), owns: true }
    }

    /// Another handle on this database, for a second app on it: the
    /// database goes with the first handle only.
    pub fn shared(&self) -> Self {
        Self { name: self.name.clone(), url: self.url.clone(), admin: self.admin.clone(), owns: false }
    }

    /// A fresh connection to this database.
    pub async fn client(&self) -> tokio_postgres::Client {
        connect(&self.url).await
    }

    /// Locks the queue row of the job `id` in a transaction of its own, held
    /// until [`QueueRowLock::release`]: the job's end waits on it.
    pub async fn lock_queue_row(&self, id: &str) -> QueueRowLock {
        let client = self.client().await;
        client.batch_execute("BEGIN").await.unwrap();
        let id = uuid::Uuid::parse_str(id).unwrap();
        client.execute("SELECT 1 FROM job_queue WHERE job_id = $1 FOR UPDATE", &[&id]).await.unwrap();
        QueueRowLock(client)
    }

    /// Runs a query expecting one row and returns its first column.
    pub async fn scalar<T: for<'a> tokio_postgres::types::FromSql<'a>>(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> T {
        self.client().await.query_one(sql, params).await.expect(sql).get(0)
    }

    /// The first column of every row `sql` answers.
    pub async fn column<T: for<'a> tokio_postgres::types::FromSql<'a>>(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Vec<T> {
        self.client().await.query(sql, params).await.expect(sql).iter().map(|row| row.get(0)).collect()
    }

    /// Ends the running lease of `job` long ago, as if its time and the
    /// rescuer's grace had run out: tests of what follows an expired lease
    /// need not wait them out.
    pub async fn expire_lease(&self, job: &str) {
        let id = Uuid::parse_str(job).unwrap();
        let expire = "UPDATE job_queue SET lease_expires_at = now() - interval '1 hour' \
                      WHERE job_id = $1 AND state = 'running'";
        assert_eq!(self.client().await.execute(expire, &[&id]).await.expect(expire), 1, "a running lease");
    }

    /// How many notifications exist for a job.
    pub async fn notifications_for(&self, job: &str) -> i64 {
        let id = Uuid::parse_str(job).unwrap();
        self.scalar("SELECT count(*) FROM notifications WHERE job_id = $1", &[&id]).await
    }

    /// The state of the outbox email of a job's end (`held`, `pending`, `sent`, …).
    pub async fn email_state(&self, job: &str) -> String {
        let id = Uuid::parse_str(job).unwrap();
        self.scalar("SELECT state::text FROM email_outbox WHERE job_id = $1", &[&id]).await
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if !self.owns {
            return;
        }
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
                errand::store::migrations::migrate(&store).await.expect("migrate the template");
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
    errand::store::migrations::migrate(&store).await.unwrap();
    (db, store)
}

/// A claim by `owner` of up to 10 jobs, 10 a tenant, from the first of 10
/// tenants, under a 30 s lease: for tests that claim through the store.
pub fn claim_request(owner: Uuid, limits: &errand::store::TypeLimits) -> errand::store::ClaimRequest<'_> {
    errand::store::ClaimRequest {
        owner,
        limit: 10,
        tenant_limit: 10,
        user_limit: 10,
        lease: std::time::Duration::from_secs(30),
        after_tenant: "",
        tenants: 10,
        type_limits: limits,
        only_types: None,
    }
}

/// A job for the store to record: `user` of `tenant` asks for `job_type` under `key`.
pub fn new_job(tenant: &str, user: &str, key: &str, job_type: &str, params: Value) -> errand::store::NewJob {
    use errand::domain::{Caller, IdempotencyKey, TenantId, UserId};
    let caller = Caller {
        tenant: TenantId::parse(tenant).unwrap(),
        user: UserId::parse(user).unwrap(),
        email: None,
        zoneinfo: None,
        locale: errand::domain::Locale::default(),
        acted_by: None,
    };
    errand::store::NewJob {
        caller,
        key: IdempotencyKey::parse(key).unwrap(),
        job_type: job_type.into(),
        params,
        sealed_params: None,
        max_attempts: 3,
        priority: 0,
        format: None,
        admission_key: None,
        start_after: None,
        trace: None,
    }
}

pub async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, NoTls).await.expect("connect to PostgreSQL");
    tokio::spawn(conn);
    client
}

/// A lock on a job's queue row (see [`TestDb::lock_queue_row`]).
pub struct QueueRowLock(tokio_postgres::Client);

impl QueueRowLock {
    pub async fn release(self) {
        self.0.batch_execute("ROLLBACK").await.unwrap();
    }
}
