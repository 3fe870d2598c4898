//! errand's keys: what it signs with ([`signing`]: links, downloads,
//! webhooks), what it seals with ([`sealing`]: secrets kept at rest), and
//! what identifies it to push services ([`vapid`]).

pub mod sealing;
pub mod signing;
pub mod vapid;
