//! A tenant's branding: its admins set it (audited); its users' emails
//! carry its sender name, name, colour and footer, through a real SMTP
//! server, with tenant copy shown as text, never as markup; other tenants'
//! emails stay errand's own.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(30);
const BRANDING: &str = "/tenant/branding";

#[actix_web::test]
async fn a_tenant_s_emails_carry_its_branding_as_text_and_another_tenant_s_do_not() {
    let mail = MailServer::start().await;
    let app = TestApp::builder().configure(email_to(mail.smtp_port)).spawn().await;
    let admin = tenant_admin_token("acme", "ada");
    let branding = json!({
        "name": "Acme <b>Corp</b>",
        "primary_color": "#AA0000",
        "from_name": "Acme Reports",
        "footer": "Sent for {name}. <script>alert(1)</script>",
    });
    let set = app.put_json(&admin, BRANDING, branding).await;
    assert_eq!(set.status(), StatusCode::OK);
    let read: Value = app.get(&admin, BRANDING).await.json().await.unwrap();
    assert_eq!(read["primary_color"], "#aa0000");
    assert_eq!(read["logo_url"], Value::Null);
    // Its users read it too (their elements take its colour); another tenant's see their own.
    let users: Value = app.get(&token("acme", "bob"), BRANDING).await.json().await.unwrap();
    assert_eq!(users, read);
    let others: Value = app.get(&token("globex", "gus"), BRANDING).await.json().await.unwrap();
    assert_eq!(others["primary_color"], Value::Null);

    let alice = token_for("acme", "alice", "alice@example.com");
    let job = app.create(&alice, "noop", json!({})).await;
    app.wait_until_finished(&alice, &job, WITHIN).await;
    let email = mail.wait_for(1, WITHIN).await.remove(0);
    assert_eq!(email["from"][0]["name"], "Acme Reports");
    assert_eq!(email["from"][0]["address"], "errand@example.com", "errand's address, the tenant's name");
    let html = email["html"].as_str().unwrap();
    assert!(html.contains("#aa0000"), "the button in its colour: {html}");
    assert!(html.contains("Acme &lt;b&gt;Corp&lt;&#x2f;b&gt;"), "the name as text: {html}");
    assert!(!html.contains("<script>") && !html.contains("<b>Corp"), "no markup of the tenant's: {html}");
    let text = email["text"].as_str().unwrap();
    assert!(
        text.contains("Sent for Acme <b>Corp</b>. <script>alert(1)</script>"),
        "the footer, {{name}} filled: {text}"
    );
    // The page its link opens is the tenant's too.
    let link = text.split_whitespace().find(|word| word.contains("/links/jobs/")).expect("a link").to_owned();
    let page = app.open_link(&link).await;
    assert_eq!(page.status(), StatusCode::OK);
    let page = page.text().await.unwrap();
    assert!(page.contains("Acme &lt;b&gt;Corp&lt;&#x2f;b&gt;") && page.contains("#aa0000"), "{page}");
    assert!(!page.contains("<b>Corp"), "{page}");
    let unsubscribe = text.split_whitespace().find(|word| word.contains("/unsubscribe/")).expect("an unsubscribe link");
    let path = unsubscribe.split_once("/unsubscribe/").map(|(_, token)| token).unwrap();
    let asked = app.http.get(format!("{}/unsubscribe/{path}", app.address)).send().await.unwrap();
    assert_eq!(asked.status(), StatusCode::OK);
    let asked = asked.text().await.unwrap();
    assert!(asked.contains("Acme &lt;b&gt;Corp") && asked.contains("#aa0000"), "the unsubscribe page too: {asked}");

    let bob = token_for("globex", "bob", "bob@example.com");
    let theirs = app.create(&bob, "noop", json!({})).await;
    app.wait_until_finished(&bob, &theirs, WITHIN).await;
    let emails = mail.wait_for(2, WITHIN).await;
    let other = emails.iter().find(|e| e["to"][0]["address"] == "bob@example.com").unwrap();
    assert_ne!(other["from"][0]["name"], "Acme Reports");
    assert!(!other["html"].as_str().unwrap().contains("Acme"));

    let audited =
        "SELECT count(*) FROM operator_actions WHERE action = 'set_branding' AND operator = 'tenant_admin:acme:ada'";
    assert_eq!(app.db.scalar::<i64>(audited, &[]).await, 1);
}

#[actix_web::test]
async fn only_a_tenant_admin_sets_branding_and_only_plain_text_a_colour_and_a_public_https_logo() {
    let app = spawn_app().await;
    let admin = tenant_admin_token("acme", "ada");
    let forbidden = app.put_json(&token("acme", "alice"), BRANDING, json!({"name": "Mine"})).await;
    assert_problem(forbidden, StatusCode::FORBIDDEN, "forbidden").await;
    for (body, field) in [
        (json!({"logo_url": "http://cdn.example.com/logo.png"}), "logo_url"),
        (json!({"logo_url": "https://127.0.0.1/logo.png"}), "logo_url"),
        (json!({"primary_color": "red"}), "primary_color"),
        (json!({"footer": "Hello {user_email}"}), "footer"),
        (json!({"from_name": "Acme\r\nBcc: everyone@example.com"}), "from_name"),
        (json!({"name": "x".repeat(101)}), "name"),
    ] {
        let refused = app.put_json(&admin, BRANDING, body).await;
        let problem = assert_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "invalid_branding").await;
        assert!(problem["detail"].as_str().unwrap().starts_with(field), "{problem}");
    }
    let unknown = app.put_json(&admin, BRANDING, json!({"colour": "#ffffff"})).await;
    assert_eq!(unknown.status(), StatusCode::BAD_REQUEST, "an unknown field");
    let read: Value = app.get(&admin, BRANDING).await.json().await.unwrap();
    assert_eq!(read, json!({"name": null, "logo_url": null, "primary_color": null, "from_name": null, "footer": null}));
}

#[actix_web::test]
async fn a_tenant_admin_and_an_operator_preview_every_email_in_the_tenant_s_branding() {
    let app = TestApp::builder().configure(email_to(free_port())).spawn().await;
    let admin = tenant_admin_token("acme", "ada");
    let branding = json!({"name": "Acme", "primary_color": "#aa0000", "from_name": "Acme Reports"});
    assert_eq!(app.put_json(&admin, BRANDING, branding).await.status(), StatusCode::OK);
    for (kind, says) in [
        ("job_completed", "is ready"),
        ("job_failed", "the reporting database did not answer"),
        ("batch_completed", "3 completed, 2 failed"),
        ("digest", "since your last digest"),
    ] {
        let shown = app.get(&admin, &format!("/tenant/templates/preview?kind={kind}")).await;
        assert_eq!(shown.status(), StatusCode::OK, "{kind}");
        let shown: Value = shown.json().await.unwrap();
        assert_eq!(shown["from"], "Acme Reports <errand@example.com>", "{kind}");
        assert!(shown["subject"].as_str().is_some_and(|s| !s.is_empty()), "{kind}: {shown}");
        assert!(shown["text"].as_str().unwrap().contains(says), "{kind}: {shown}");
        let html = shown["html"].as_str().unwrap();
        assert!(html.contains("Acme"), "{kind}: the tenant's name: {html}");
        // Its colour on what the reader is asked to click (a failure's button stays grey; a batch's has none).
        assert_eq!(html.contains("#aa0000"), ["job_completed", "digest"].contains(&kind), "{kind}: {html}");
    }
    let operator = operator_viewer_token("olga");
    let theirs: Value =
        app.get(&operator, "/admin/templates/preview?tenant=acme&kind=digest").await.json().await.unwrap();
    assert_eq!(theirs["from"], "Acme Reports <errand@example.com>");
    let plain: Value =
        app.get(&operator, "/admin/templates/preview?tenant=globex&kind=digest").await.json().await.unwrap();
    assert!(!plain["html"].as_str().unwrap().contains("Acme"), "another tenant's: errand's own");

    let unknown = app.get(&admin, "/tenant/templates/preview?kind=welcome").await;
    assert_problem(unknown, StatusCode::BAD_REQUEST, "bad_request").await;
    let user = app.get(&token("acme", "alice"), "/tenant/templates/preview?kind=digest").await;
    assert_problem(user, StatusCode::FORBIDDEN, "forbidden").await;
    let no_email = spawn_app().await;
    let off = no_email.get(&admin, "/tenant/templates/preview?kind=digest").await;
    assert_problem(off, StatusCode::NOT_FOUND, "email_not_enabled").await;
}
