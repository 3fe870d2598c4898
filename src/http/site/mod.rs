//! What errand serves about itself: the browser client and its pages
//! (`client.rs`), the API's description (`openapi.rs`, `docs.rs`), health
//! and metrics (`health.rs`).

pub mod client;
pub mod docs;
pub mod health;
pub mod openapi;
