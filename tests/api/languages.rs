//! People are told in their language: the token's locale claim, else their
//! browser's `Accept-Language`, else `[i18n] default_locale`; recorded with
//! the job, so that its feed entry, its email (through a real SMTP server)
//! and its link's page agree, whatever a later request says.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::*;

const WITHIN: Duration = Duration::from_secs(30);

/// A token for `user` of t1 whose `locale` claim is `locale`.
fn token_in(user: &str, locale: &str) -> String {
    let claims = json!({"sub": user, "tenant": "t1", "email": format!("{user}@example.com"), "locale": locale,
                        "exp": now_secs() + 3600});
    errand::domain::tokens::TokenIssuer::new(SECRET).unwrap().issue(&claims).unwrap()
}

/// `noop` is "quick check" in English and "vérification rapide" in French.
fn named_noop(s: &mut errand::config::Settings) {
    let noop = s.job_types.get_mut("noop").unwrap();
    noop.display_name = Some("quick check".into());
    noop.display_names.insert("fr".into(), "vérification rapide".into());
}

#[actix_web::test]
async fn a_person_whose_token_says_french_is_told_in_french_everywhere() {
    let mail = MailServer::start().await;
    let app = TestApp::builder().configure(email_to(mail.smtp_port)).configure(named_noop).spawn().await;
    let french = token_in("amelie", "fr-CA");
    let job = app.create(&french, "noop", json!({"region": "Nord"})).await;
    app.wait_until_finished(&french, &job, WITHIN).await;

    let email = mail.wait_for(1, WITHIN).await.remove(0);
    assert_eq!(email["subject"], "Votre vérification rapide est prêt");
    let (text, html) = (email["text"].as_str().unwrap(), email["html"].as_str().unwrap());
    assert!(text.starts_with("Bonjour,"), "{text}");
    assert!(text.contains("le lien fonctionne jusqu'au"), "{text}");
    assert!(html.contains("<html lang=\"fr\">"), "{html}");

    // Later requests in English change nothing already told.
    let later = token_in("amelie", "en");
    let told = app.notifications_of(&later, "job_completed").await;
    assert_eq!(told[0]["title"], "Votre vérification rapide est prêt", "{told:?}");
    assert_eq!(told[0]["body"], "Votre vérification rapide s'est terminé avec succès.");
    let recorded: String = app.db.scalar("SELECT locale FROM notifications WHERE user_id = 'amelie'", &[]).await;
    assert_eq!(recorded, "fr");

    // The link's page speaks the email's language, whatever the browser's;
    // a link without one (or with one errand does not ship) follows the browser.
    let link = text.split_whitespace().find(|word| word.contains("/links/jobs/")).expect("a link");
    assert!(link.ends_with("&lang=fr"), "{link}");
    let link = format!("{}/links/{}", app.address, link.split_once("/links/").unwrap().1);
    let page = |link: String, accept: &'static str| {
        let request = app.http.get(link).header("Accept-Language", accept);
        async move { request.send().await.unwrap().text().await.unwrap() }
    };
    let french = page(link.clone(), "en-US").await;
    assert!(
        french.contains("<html lang=\"fr\">") && french.contains("Votre vérification rapide est terminé"),
        "{french}"
    );
    let english = page(link.replace("&lang=fr", "&lang=tlh"), "en-US").await;
    assert!(english.contains("<html lang=\"en\">") && english.contains("Your quick check is done"), "{english}");
}

#[actix_web::test]
async fn without_a_claim_the_browser_s_language_then_the_default_decide() {
    let app = TestApp::builder().configure(named_noop).configure(|s| s.i18n.default_locale = "fr".into()).spawn().await;
    let submit = |token: String, accept: Option<&'static str>| {
        let request = app.http.post(format!("{}/jobs/noop", app.address)).bearer_auth(token);
        let request = request.header("Idempotency-Key", Uuid::new_v4().to_string()).json(&json!({}));
        async move {
            let request = match accept {
                Some(accept) => request.header("Accept-Language", accept),
                None => request,
            };
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), StatusCode::ACCEPTED);
            id_of(response).await
        }
    };
    let english_browser = submit(token("t1", "bob"), Some("de-DE, en;q=0.8, fr;q=0.5")).await;
    let no_preference = submit(token("t1", "carl"), None).await;
    let klingon = submit(token_in("dora", "tlh"), Some("en-GB")).await;
    let locale_of = |id: String| {
        let db = &app.db;
        async move {
            let id = Uuid::parse_str(&id).unwrap();
            db.scalar::<String>("SELECT locale FROM jobs WHERE id = $1", &[&id]).await
        }
    };
    assert_eq!(locale_of(english_browser.clone()).await, "en", "the browser's best match, by weight");
    assert_eq!(locale_of(no_preference.clone()).await, "fr", "the default");
    assert_eq!(locale_of(klingon).await, "en", "a claim errand has no catalogue for gives way to the browser");
    app.wait_until_finished(&token("t1", "carl"), &no_preference, WITHIN).await;
    let told = app.notifications_of(&token("t1", "carl"), "job_completed").await;
    assert_eq!(told[0]["title"], "Votre vérification rapide est prêt");
}

#[actix_web::test]
async fn previews_and_the_elements_words_come_in_the_language_asked_for() {
    let mail = MailServer::start().await;
    let app = TestApp::builder().configure(email_to(mail.smtp_port)).spawn().await;
    let admin = tenant_admin_token("acme", "ada");
    let preview: Value =
        app.get(&admin, "/tenant/templates/preview?kind=batch_completed&locale=fr").await.json().await.unwrap();
    assert_eq!(preview["subject"], "Votre lot de 5 tâches Sales report est terminé", "{preview}");
    assert!(preview["text"].as_str().unwrap().contains("3 terminées, 2 en échec"), "{preview}");
    let unknown = app.get(&admin, "/tenant/templates/preview?kind=digest&locale=tlh").await;
    assert_problem(unknown, StatusCode::BAD_REQUEST, "bad_request").await;

    let words = |query: &'static str, accept: &'static str| {
        let request = app.http.get(format!("{}/i18n/elements{query}", app.address)).header("Accept-Language", accept);
        async move { request.send().await.unwrap().json::<Value>().await.unwrap() }
    };
    let french = words("?locale=fr", "en").await;
    assert_eq!(french["locale"], "fr");
    let english = words("", "en-US").await;
    assert_eq!(english["locale"], "en");
    assert_eq!(words("?locale=tlh", "fr-CH").await["locale"], "fr", "an unknown locale: the browser's");
    let (fr, en) = (french["messages"].as_object().unwrap(), english["messages"].as_object().unwrap());
    assert_eq!(fr.keys().collect::<Vec<_>>(), en.keys().collect::<Vec<_>>(), "the same words in both");
    assert!(fr.iter().any(|(id, text)| en[id] != *text), "and they are translated");
    assert!(fr.values().all(|text| !text.as_str().unwrap().contains('$')), "variables written {{name}}");
}

#[actix_web::test]
async fn an_admin_hears_of_a_disabled_endpoint_in_the_language_they_registered_it_in() {
    let app = TestApp::builder()
        .configure(|s| {
            s.webhooks.allow_hosts = vec!["127.0.0.1".into()];
            s.webhooks.poll_interval = Duration::from_millis(50);
            s.webhooks.max_attempts = std::num::NonZeroU32::new(1).unwrap();
            s.webhooks.disable_after = std::num::NonZeroU32::new(1).unwrap();
        })
        .spawn()
        .await;
    let receiver = Receiver::start([500; 4]);
    let claims =
        json!({"sub": "ada", "tenant": "t1", "scope": "tenant_admin", "locale": "fr", "exp": now_secs() + 3600});
    let admin = errand::domain::tokens::TokenIssuer::new(SECRET).unwrap().issue(&claims).unwrap();
    let registered =
        app.post_json(&admin, "/webhooks", json!({"url": receiver.url, "events": ["job.completed"]})).await;
    assert_eq!(registered.status(), StatusCode::CREATED);
    app.create(&token("t1", "bob"), "noop", json!({})).await;
    // Read back in English: the notice keeps the language it was written in.
    let english_admin = tenant_admin_token("t1", "ada");
    eventually(WITHIN, "the notice", || async {
        !app.notifications_of(&english_admin, "webhook_disabled").await.is_empty()
    })
    .await;
    let notice = app.notifications_of(&english_admin, "webhook_disabled").await.remove(0);
    assert_eq!(notice["title"], "Un point de terminaison de webhook a été désactivé", "{notice}");
}
