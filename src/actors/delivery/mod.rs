//! Telling people: the Notifier (the in-app feed and its live streams), the
//! Mailer (the email outbox), the PushSender (the Web Push outbox) and the
//! WebhookSender (tenants' endpoints), how each records what became of a
//! send (`until_recorded.rs`), and the rounds the outboxes' senders go
//! through them in (`rounds.rs`).

pub mod mailer;
pub mod notifier;
pub mod push_sender;
pub mod rounds;
pub mod until_recorded;
pub mod webhook_sender;
