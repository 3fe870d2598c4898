//! TLS to PostgreSQL: a cluster of the test's own with `ssl = on` and a
//! certificate of a test CA (for `localhost` only), reached with each
//! `sslmode` as libpq would: the certificate verified as far as the mode
//! asks, and errand itself working end to end over TLS.

use std::path::{Path, PathBuf};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use serde_json::json;

use crate::helpers::*;
use crate::private_cluster::PrivateCluster;
use errand::config::PostgresUrl;
use errand::store::Store;

/// A CA of the test's own, written as a PEM file in `dir`.
struct TestCa {
    cert: rcgen::Certificate,
    key: KeyPair,
    file: PathBuf,
}

impl TestCa {
    fn new(dir: &Path, name: &str) -> Self {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let cert = params.self_signed(&key).unwrap();
        let file = dir.join(format!("{name}.pem"));
        std::fs::write(&file, cert.pem()).unwrap();
        Self { cert, key, file }
    }

    /// A server certificate for `host` and its key, as PEM.
    fn issue(&self, host: &str) -> (String, String) {
        let key = KeyPair::generate().unwrap();
        let cert =
            CertificateParams::new(vec![host.to_owned()]).unwrap().signed_by(&key, &self.cert, &self.key).unwrap();
        (cert.pem(), key.serialize_pem())
    }
}

/// Whether the pool's connection to `url` is encrypted, or why it failed.
async fn encrypted(url: &str) -> Result<bool, String> {
    let store = Store::connect(url, 1).map_err(|e| e.to_string())?;
    // As errand reports it: with every cause.
    let client = store.pool().get().await.map_err(|e| errand::store::StoreError::from(e).to_string())?;
    let row = client
        .query_one("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", &[])
        .await
        .map_err(|e| e.to_string())?;
    Ok(row.get(0))
}

#[actix_web::test]
async fn each_sslmode_verifies_what_it_says_and_errand_runs_over_tls() {
    let dir = TempDir::named("tls");
    std::fs::create_dir_all(&*dir).unwrap();
    let (ca, stranger) = (TestCa::new(&dir, "errand-test-ca"), TestCa::new(&dir, "another-ca"));
    let (cert, key) = ca.issue("localhost");
    let Some(cluster) = PrivateCluster::start_with_tls(&cert, &key) else {
        eprintln!("skipped: no PostgreSQL server binaries under /usr/lib/postgresql");
        return;
    };
    let port = cluster.port;
    let url = |host: &str, options: &str| format!("postgres://postgres@{host}:{port}/postgres?{options}");
    let root = |ca: &TestCa| format!("sslrootcert={}", ca.file.display());

    assert_eq!(encrypted(&url("127.0.0.1", "sslmode=disable")).await, Ok(false));
    // libpq's default: TLS when the server offers it, the certificate not verified.
    assert_eq!(encrypted(&format!("postgres://postgres@127.0.0.1:{port}/postgres")).await, Ok(true));
    assert_eq!(encrypted(&url("127.0.0.1", "sslmode=require")).await, Ok(true));
    // The certificate names localhost: verify-full holds it to the host's name, verify-ca does not.
    assert_eq!(encrypted(&url("localhost", &format!("sslmode=verify-full&{}", root(&ca)))).await, Ok(true));
    assert_eq!(encrypted(&url("127.0.0.1", &format!("sslmode=verify-ca&{}", root(&ca)))).await, Ok(true));
    let wrong_name = encrypted(&url("127.0.0.1", &format!("sslmode=verify-full&{}", root(&ca)))).await.unwrap_err();
    assert!(wrong_name.contains("certificate"), "{wrong_name}");
    // A certificate of a CA not trusted fails every verifying mode, require with a root too (as libpq).
    for mode in ["verify-full", "verify-ca", "require"] {
        let untrusted = encrypted(&url("localhost", &format!("sslmode={mode}&{}", root(&stranger)))).await.unwrap_err();
        assert!(untrusted.contains("UnknownIssuer"), "{mode}: {untrusted}");
    }

    // errand end to end: its pool and its listener over verify-full.
    let db = cluster.database().await;
    let verified = format!("postgres://postgres@localhost:{port}/{}?sslmode=verify-full&{}", db.name, root(&ca));
    let app = TestApp::builder()
        .on(db)
        .configure(|s| s.database.url = PostgresUrl::try_from(verified).unwrap())
        .spawn()
        .await;
    let alice = token("acme", "alice");
    let job = app.create(&alice, "noop", json!({})).await;
    let finished = app.wait_until_finished(&alice, &job, std::time::Duration::from_secs(30)).await;
    assert_eq!(finished["status"], "completed");
    let over_tls: i64 = app
        .db
        .scalar("SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE s.ssl AND a.application_name LIKE 'errand/%'", &[])
        .await;
    assert!(over_tls >= 2, "the pool's connections and the listener's: {over_tls}");
}
