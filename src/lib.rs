//! errand: user-initiated heavy operations (exports, reports, bulk actions) as
//! durable, idempotent, tenant-scoped jobs on PostgreSQL.
//!
//! A request records a job (or finds the one its idempotency key names) and
//! returns at once; a worker does the work off the request cycle, with
//! retries, and its end is written together with a notification for the user.
//!
//! The map:
//! * [`domain`]: ids, states, idempotency keys and fingerprints; no I/O.
//! * [`store`]: every SQL statement; caller-scoped reads, fenced worker writes.
//! * [`jobs`]: what job types do: the [`jobs::JobHandler`] trait, built-ins, retry policy.
//! * [`actors`]: who moves jobs: registry, per-tenant supervisors, dispatcher, workers, notifier.
//! * [`http`]: the API; handlers ask a tenant's supervisor.
//! * [`mail`]: completion emails (templates, SMTP).
//! * [`storage`]: where results live (local directory; signed download URLs).
//! * [`demo`]: the demo tables the shipped export types read.
//! * [`config`], [`error`], [`db`] (migrations), [`startup`] ([`startup::Application`]).

pub mod actors;
pub mod config;
pub mod db;
pub mod demo;
pub mod domain;
pub mod http;
pub mod jobs;
pub mod links;
pub mod mail;
pub mod startup;
pub mod storage;
pub mod store;
pub mod telemetry;
pub mod tokens;
