//! Telling people: the Notifier (the in-app feed and its live streams), the
//! Mailer (the email outbox), the PushSender (the Web Push outbox) and the
//! WebhookSender (tenants' endpoints), and how each records what became of a
//! send (`until_recorded.rs`).

pub mod mailer;
pub mod notifier;
pub mod push_sender;
pub mod until_recorded;
pub mod webhook_sender;
