//! errand's integration tests: one binary, one module per feature. Every test
//! gets a fresh database on a real PostgreSQL, a copy of a migrated template
//! (see `helpers/`).

// Tests unwrap: a panic is the failure message (Cargo.toml denies it elsewhere).
#![allow(clippy::unwrap_used)]

mod admission;
mod attempt_logs;
mod auth;
mod batch_email;
mod batches;
mod bodies;
mod branding;
mod browser;
mod bulk_actions;
mod cancel;
mod config;
mod contract;
mod digests;
mod email;
mod export_formats;
mod export_reads;
mod exports;
mod failover;
mod feed_marks;
mod helpers;
mod job_detail;
mod jwks;
mod languages;
mod lost_replies;
mod notifications;
mod operators;
mod outage;
mod overload;
mod pauses;
mod pgbouncer;
mod preferences;
mod privacy;
mod private_cluster;
mod processes;
mod progress;
mod push;
mod queue;
mod quiet_hours;
mod quotas;
mod ramps;
mod rate_limits;
mod read;
mod release;
mod resumable_exports;
mod s3;
mod schedule_dates;
mod schedules;
mod sealed_params;
mod services;
mod shutdown;
mod submit;
mod tenant_defaults;
mod tls;
mod traces;
mod unsubscribe;
mod upgrade;
mod vacuum;
mod web_push;
mod webhook_deliveries;
mod webhooks;
mod work;
mod worker_api;
