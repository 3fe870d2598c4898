//! What the routes share: the problem+json error table (`error.rs`), reading bodies under a deadline (`body/`), pages
//! of lists (`pagination.rs`), request ids and rate limits.

pub mod body;
pub mod error;
pub mod pagination;
pub mod rate_limit;
pub mod request_id;
pub mod routing;
