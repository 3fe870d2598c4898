//! What errand serves about itself: the browser client and its pages
//! (`client.rs`), the API's description (`openapi.rs`, `docs.rs`), health
//! and metrics (`health.rs`), the elements' words in people's languages
//! (`words.rs`).

pub mod client;
pub mod docs;
pub mod health;
pub mod openapi;
pub mod words;

use crate::http::support::routing::Routes;

/// The pages, the client's files, the API's description, health and metrics.
pub fn routes(r: &mut Routes) {
    r.get_or_head("/", client::demo_page)
        .get_or_head("/admin", client::admin_page)
        .get_or_head("/client/{path:.*}", client::file)
        .get_or_head("/openapi.json", openapi::json)
        .get_or_head("/docs", docs::page)
        .get_or_head(&format!("/docs/{}", docs::REDOC_BUNDLE), docs::redoc)
        .get_or_head("/healthz", health::healthz)
        .get_or_head("/readyz", health::readyz)
        .get("/metrics", health::metrics)
        .get_or_head("/i18n/elements", words::elements);
}
