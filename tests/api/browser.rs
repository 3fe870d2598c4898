//! The browser side in a real browser: `tests/browser/*.test.mjs` drive
//! Debian's headless Chromium with playwright-core (both installed by
//! `scripts/test`) through the demo page, the client and its components,
//! and the operators' console (`admin.test.mjs`),
//! against errand processes, a maildev and a Web Push service stub that the
//! scripts start themselves
//! (they restart errand mid-test), on a database made here. Node's test
//! runner reports each scenario; this test passes when all of them do.

use crate::helpers::*;

#[actix_web::test]
async fn the_client_its_components_and_the_demo_page_work_in_chromium() {
    let playwright = std::env::var("ERRAND_TEST_PLAYWRIGHT")
        .expect("ERRAND_TEST_PLAYWRIGHT is not set: run the tests with scripts/test, which installs playwright-core");
    let maildev = std::env::var("ERRAND_TEST_MAILDEV")
        .expect("ERRAND_TEST_MAILDEV is not set: run the tests with scripts/test, which installs maildev");
    let db = TestDb::create().await;
    let tests = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser");
    let mut node = std::process::Command::new("node");
    node.arg("--test")
        .arg("--test-concurrency=1")
        .arg(&tests)
        .env("ERRAND_BIN", env!("CARGO_BIN_EXE_errand"))
        .env("DATABASE_URL", &db.url)
        .env("ERRAND_TEST_PLAYWRIGHT", playwright)
        .env("ERRAND_TEST_MAILDEV", maildev);
    let status = tokio::task::spawn_blocking(move || node.status())
        .await
        .unwrap()
        .expect("run node: the browser tests need Node.js 20 or later");
    assert!(status.success(), "the browser tests failed (their report is above): {status}");
}
