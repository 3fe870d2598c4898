//! errand: user-initiated heavy operations (exports, reports, bulk actions) as
//! durable, idempotent, tenant-scoped jobs on PostgreSQL.
//!
//! A request records a job (or finds the one its idempotency key names) and
//! returns at once; a worker does the work off the request cycle, with
//! retries, and its end is written together with a notification for the user.
//!
//! The map, lowest layer first (each layer's folders are its features):
//! * [`domain`]: ids, states, idempotency keys and fingerprints, how an
//!   attempt ends ([`domain::Outcome`]) and the one retry decision
//!   ([`domain::RetryPolicy::outcome`]), the quota rule
//!   ([`domain::Usage::admit`]), export formats, schedules, token claims; no I/O.
//! * [`store`]: every SQL statement, behind doors on [`store::Store`] named
//!   for whose rows they touch; one claim spec ([`store::ClaimSpec`]) for
//!   every claimer, fenced worker writes, quotas checked in the transaction
//!   that records a job; the pool, migrations and the demo tables.
//! * [`config`], [`telemetry`], [`storage`] (where results live),
//!   [`outbound`] (emails, their signed links, webhook signatures, where a
//!   tenant's webhook may point).
//! * [`jobs`]: what job types do: the [`jobs::JobHandler`] trait, built-ins, exports, HTTP push.
//! * [`actors`]: who moves jobs: the per-tenant supervisors and what runs
//!   jobs (`running/`), the completer (the one door every attempt's end goes
//!   through), the broker (external workers), who tells people
//!   (`delivery/`) and who keeps the engine going (`upkeep/`).
//! * [`http`]: the API; handlers authenticate, parse, ask an actor or a
//!   store door and map the answer (the problem table is
//!   [`http::support::problem`]); the caller's extractor spends their rate limits.
//! * [`startup`] ([`startup::Application`]): one process, for `errand serve` and the tests.
//!
//! Imports point one way, as messages flow: down the layers above, and down
//! the actors' tree. A command going down is declared by the actor that
//! handles it; a report or request going up is declared by its sender (and
//! received through a `Recipient`); a signal with many senders lives in the
//! leaf `actors::signals`. The store hands a transaction down rather than
//! one store module calling into another. `tests/module_tree.rs` checks
//! that no two modules, at any level, depend on each other.

pub mod actors;
pub mod config;
pub mod domain;
pub mod http;
pub mod jobs;
pub mod outbound;
pub mod startup;
pub mod storage;
pub mod store;
pub mod telemetry;
