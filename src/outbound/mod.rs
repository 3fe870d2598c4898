//! What errand sends to addresses others chose: completion emails
//! (`mail.rs`) and the signed links they carry (`links.rs`), webhooks'
//! signatures (`webhook_signature.rs`), and the rule for where a tenant's
//! webhook may point (`policy.rs`).

pub mod links;
pub mod mail;
pub mod policy;
pub mod webhook_signature;
