//! What errand sends to addresses others chose: completion emails
//! (`mail.rs`) and the signed links they carry (`links.rs`), Web Push
//! messages (`web_push.rs`), webhooks' signatures (`webhook_signature.rs`),
//! and the rule for where a tenant's webhook or a device's push
//! subscription may point (`policy.rs`).

pub mod links;
pub mod mail;
pub mod mail_preview;
pub mod policy;
pub mod web_push;
pub mod webhook_signature;
