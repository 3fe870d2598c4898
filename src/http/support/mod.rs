//! What the routes share: the problem+json error table (`problem.rs`), reading bodies under a deadline (`body/`), pages
//! of lists (`pagination.rs`), request ids and rate limits.

pub mod body;
pub mod pagination;
pub mod problem;
pub mod rate_limit;
pub mod request_id;
pub mod routing;
