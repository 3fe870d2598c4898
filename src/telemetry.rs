//! Logging (`tracing` to stderr as text or JSON lines, filtered by `RUST_LOG`, default `info`) and
//! metrics (the `metrics` facade, rendered for Prometheus at `GET /metrics`).

use std::sync::OnceLock;

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// Installs the global subscriber once, at `info` unless `RUST_LOG` says otherwise.
pub fn init(format: LogFormat) {
    install(format, "info");
}

/// Text logs at another default level; later calls do nothing (tests call it freely).
pub fn init_with_default(level: &str) {
    install(LogFormat::Text, level);
}

fn install(format: LogFormat, level: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        // Span fields (request id, tenant, job, attempt) go in every line.
        LogFormat::Json => builder.json().with_current_span(true).with_span_list(true).try_init(),
    };
}

/// Records how long a job's attempt waited from when it became due (the
/// database's clock) until a worker took it (this host's clock, which the
/// figure trusts to agree: on one host it does; across hosts NTP keeps them
/// within a millisecond or so): `errand_job_wait_seconds{job_type}`.
pub fn record_job_wait(job_type: &str, due_at: chrono::DateTime<chrono::Utc>) {
    let waited = (chrono::Utc::now() - due_at).to_std().unwrap_or_default();
    metrics::histogram!("errand_job_wait_seconds", "job_type" => job_type.to_owned()).record(waited.as_secs_f64());
}

/// The process's metrics recorder, installed on first use (a process has one,
/// however many errand instances a test starts in it).
pub fn prometheus() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        // Another recorder may already be installed by an embedding program; ours then stays empty.
        let _ = metrics::set_global_recorder(recorder);
        handle
    })
}
