//! errand's keys: what it signs with ([`signing`]: links, downloads,
//! webhooks) and what it seals with ([`sealing`]: secrets kept at rest).

pub mod sealing;
pub mod signing;
