//! Logging (`tracing` to stderr as text or JSON lines, filtered by `RUST_LOG`, default `info`),
//! traces (the same spans, exported with OTLP where configured: [`traces`]) and
//! metrics (one registry, rendered for Prometheus at `GET /metrics`: [`metrics`]).

pub mod metrics;
pub mod traces;

use std::sync::atomic::{AtomicU64, Ordering};

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use crate::config::LogFormat;
pub use metrics::metrics;

/// Installs the global subscriber once, at `info` unless `RUST_LOG` says
/// otherwise, with the trace exporter where the environment asks for one
/// ([`traces::Exporter::from_env`]). Keep the answer until the process ends:
/// dropping it sends the spans still buffered.
pub fn init(format: LogFormat) -> Result<Option<traces::Exporter>, traces::ExporterError> {
    let exporter = traces::Exporter::from_env()?;
    install(format, "info", exporter.as_ref());
    Ok(exporter)
}

/// Text logs at another default level, no traces; later calls do nothing (tests call it freely).
pub fn init_with_default(level: &str) {
    install(LogFormat::Text, level, None);
}

fn install(format: LogFormat, level: &str, exporter: Option<&traces::Exporter>) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    let Some(exporter) = exporter else {
        // Without traces, one global filter: spans and events it leaves out cost nothing.
        let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
        let _ = match format {
            LogFormat::Text => builder.try_init(),
            // Span fields (request id, tenant, job, attempt) go in every line.
            LogFormat::Json => builder.json().with_current_span(true).with_span_list(true).try_init(),
        };
        return;
    };
    let logs = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let logs = match format {
        LogFormat::Text => logs.boxed(),
        LogFormat::Json => logs.json().with_current_span(true).with_span_list(true).boxed(),
    };
    // Each its own filter: `RUST_LOG` quietens the logs, never the traces.
    let _ = tracing_subscriber::registry().with(logs.with_filter(filter)).with(exporter.layer()).try_init();
}

/// Records how long a job's attempt waited from when it became due (the
/// database's clock) until a worker took it (this host's clock, which the
/// figure trusts to agree: on one host it does; across hosts NTP keeps them
/// within a millisecond or so): `errand_job_wait_seconds{job_type}`, a
/// histogram, so that the waits of several processes add up in Prometheus.
/// `trace_id` is the attempt's trace, where errand knows one
/// ([`traces::attempt_trace_id`]): the bucket's exemplar.
pub fn record_job_wait(job_type: &str, due_at: chrono::DateTime<chrono::Utc>, trace_id: Option<String>) {
    let waited = (chrono::Utc::now() - due_at).to_std().unwrap_or_default();
    metrics().job_waited(job_type, waited.as_secs_f64(), trace_id);
}

/// This process's claims and attempt ends so far. Prometheus counters
/// cannot be read back, so these are kept beside them, for the totals each
/// process publishes to the database (`actors::TotalsPublisher`).
static CLAIMED: AtomicU64 = AtomicU64::new(0);
static ATTEMPTS_ENDED: AtomicU64 = AtomicU64::new(0);

/// `jobs` (each its type and trace) claimed by the dispatcher, beside
/// submissions or for an external worker, in a claim that began at
/// `started`: counted, and the claim's span where spans are exported
/// ([`traces::record_claim`]).
pub fn record_claimed<'a>(
    by: &'static str,
    started: std::time::SystemTime,
    jobs: impl ExactSizeIterator<Item = (&'a str, Option<&'a crate::domain::JobTrace>)>,
) {
    let n = jobs.len() as u64;
    metrics().jobs_claimed.add(by, n);
    CLAIMED.fetch_add(n, Ordering::Relaxed);
    traces::record_claim(by, started, jobs);
}

/// One attempt of a job of `job_type` ended in `state`.
pub fn record_attempt_ended(job_type: &str, state: &'static str) {
    metrics().attempt_ended(job_type, state);
    ATTEMPTS_ENDED.fetch_add(1, Ordering::Relaxed);
}

/// (claims, attempt ends) of this process so far.
pub fn totals() -> (u64, u64) {
    (CLAIMED.load(Ordering::Relaxed), ATTEMPTS_ENDED.load(Ordering::Relaxed))
}
