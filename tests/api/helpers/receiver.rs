//! An HTTP endpoint of the test's own: records every request (headers and
//! body) and answers with the statuses it was given, then 200 for good; or,
//! holding, answers each only once the test releases it.

use std::collections::VecDeque;
use std::sync::Mutex;

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};

use super::*;

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    pub headers: std::collections::HashMap<String, String>,
    pub body: Vec<u8>,
}

struct Script {
    answers: Mutex<VecDeque<u16>>,
    received: Mutex<Vec<Received>>,
    /// Holding: each request waits for a permit before it is answered.
    hold: Option<Arc<tokio::sync::Semaphore>>,
    /// A permit per request received.
    arrived: Arc<tokio::sync::Semaphore>,
}

impl Default for Script {
    fn default() -> Self {
        Self {
            answers: Mutex::default(),
            received: Mutex::default(),
            hold: None,
            arrived: Arc::new(tokio::sync::Semaphore::new(0)),
        }
    }
}

pub struct Receiver {
    /// Where it listens: `http://127.0.0.1:<port>/hooks`.
    pub url: String,
    script: Arc<Script>,
    server: actix_web::dev::ServerHandle,
}

impl Receiver {
    /// A receiver answering `answers` in turn, then 200.
    pub fn start(answers: impl IntoIterator<Item = u16>) -> Self {
        Self::with(Script { answers: Mutex::new(answers.into_iter().collect()), ..Script::default() })
    }

    /// A receiver that answers 200 to each request only once [`Self::release`] lets it.
    pub fn holding() -> Self {
        Self::with(Script { hold: Some(Arc::new(tokio::sync::Semaphore::new(0))), ..Script::default() })
    }

    /// Lets `n` held requests be answered.
    pub fn release(&self, n: usize) {
        if let Some(hold) = &self.script.hold {
            hold.add_permits(n);
        }
    }

    /// Waits until one more request has arrived.
    pub async fn arrived(&self, within: Duration) {
        let arrived = tokio::time::timeout(within, self.script.arrived.acquire()).await;
        arrived.expect("a request arrived in time").expect("receiving").forget();
    }

    fn with(script: Script) -> Self {
        let script = Arc::new(script);
        let shared = web::Data::from(script.clone());
        let server = HttpServer::new(move || App::new().app_data(shared.clone()).default_service(web::to(receive)))
            .workers(1)
            .bind(("127.0.0.1", 0))
            .expect("bind the receiver");
        let port = server.addrs()[0].port();
        let server = server.run();
        let handle = server.handle();
        actix_web::rt::spawn(server);
        Self { url: format!("http://127.0.0.1:{port}/hooks"), script, server: handle }
    }

    /// Every request so far, in order.
    pub fn received(&self) -> Vec<Received> {
        self.script.received.lock().unwrap().clone()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let server = self.server.clone();
        actix_web::rt::spawn(async move { server.stop(false).await });
    }
}

async fn receive(req: HttpRequest, body: web::Bytes, script: web::Data<Script>) -> HttpResponse {
    let headers = req
        .headers()
        .iter()
        .map(|(name, value)| (name.as_str().to_owned(), value.to_str().unwrap_or_default().to_owned()))
        .collect();
    script.received.lock().unwrap().push(Received { headers, body: body.to_vec() });
    script.arrived.add_permits(1);
    if let Some(hold) = &script.hold {
        hold.acquire().await.expect("holding").forget();
    }
    let status = script.answers.lock().unwrap().pop_front().unwrap_or(200);
    HttpResponse::build(actix_web::http::StatusCode::from_u16(status).unwrap()).finish()
}
