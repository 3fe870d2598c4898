//! Logging: `tracing` to stderr, filtered by `RUST_LOG` (default `info`).

use tracing_subscriber::EnvFilter;

/// Installs the global subscriber once, at `info` unless `RUST_LOG` says otherwise.
pub fn init() {
    init_with_default("info");
}

/// Like [`init`] with another default level; later calls do nothing (tests call it freely).
pub fn init_with_default(level: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
}
