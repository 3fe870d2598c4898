//! Logging (`tracing` to stderr as text or JSON lines, filtered by `RUST_LOG`, default `info`),
//! traces (the same spans, exported with OTLP where configured: [`traces`]) and
//! metrics (the `metrics` facade, rendered for Prometheus at `GET /metrics`).

pub mod traces;

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use crate::config::LogFormat;

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

/// The bounds of `errand_job_wait_seconds`' buckets, in seconds: fine where
/// a quiet process starts jobs (1.5 ms and 5 ms are the aims of issue 7),
/// coarse where a backlog makes jobs wait.
const JOB_WAIT_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0015, 0.002, 0.003, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
    300.0, 900.0, 3600.0,
];

/// Records how long a job's attempt waited from when it became due (the
/// database's clock) until a worker took it (this host's clock, which the
/// figure trusts to agree: on one host it does; across hosts NTP keeps them
/// within a millisecond or so): `errand_job_wait_seconds{job_type}`, a
/// histogram, so that the waits of several processes add up in Prometheus
/// (the other distributions are per-process summaries).
pub fn record_job_wait(job_type: &str, due_at: chrono::DateTime<chrono::Utc>) {
    let waited = (chrono::Utc::now() - due_at).to_std().unwrap_or_default();
    metrics::histogram!("errand_job_wait_seconds", "job_type" => job_type.to_owned()).record(waited.as_secs_f64());
}

/// The process's metrics recorder, installed on first use (a process has one,
/// however many errand instances a test starts in it).
pub fn prometheus() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Full("errand_job_wait_seconds".into()), JOB_WAIT_BUCKETS)
            .expect("the bucket list is not empty")
            .build_recorder();
        let handle = recorder.handle();
        // Another recorder may already be installed by an embedding program; ours then stays empty.
        let _ = metrics::set_global_recorder(recorder);
        handle
    })
}

/// This process's claims and attempt ends so far. Prometheus counters
/// cannot be read back, so these are kept beside them, for the totals each
/// process publishes to the database (`actors::TotalsPublisher`).
static CLAIMED: AtomicU64 = AtomicU64::new(0);
static ATTEMPTS_ENDED: AtomicU64 = AtomicU64::new(0);

/// `n` jobs claimed, by the dispatcher, beside a submission or for an external worker.
pub fn record_claimed(by: &'static str, n: usize) {
    metrics::counter!("errand_jobs_claimed_total", "by" => by).increment(n as u64);
    CLAIMED.fetch_add(n as u64, Ordering::Relaxed);
}

/// One attempt of a job of `job_type` ended in `state`.
pub fn record_attempt_ended(job_type: &str, state: &'static str) {
    let labels = [("job_type", job_type.to_owned()), ("state", state.to_owned())];
    metrics::counter!("errand_job_attempts_ended_total", &labels).increment(1);
    ATTEMPTS_ENDED.fetch_add(1, Ordering::Relaxed);
}

/// (claims, attempt ends) of this process so far.
pub fn totals() -> (u64, u64) {
    (CLAIMED.load(Ordering::Relaxed), ATTEMPTS_ENDED.load(Ordering::Relaxed))
}
