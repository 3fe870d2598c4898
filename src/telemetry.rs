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
