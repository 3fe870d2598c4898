//! Connections, and what their failures mean (`error.rs`): the pool, to
//! where `config::postgres` says (the URL as libpq reads it, TLS); how the
//! pool makes a connection (`connect.rs`),
//! names it (`sessions.rs`) and drops one to a server that no longer takes
//! writes (`writable.rs`); the processes sharing the database
//! (`processes.rs`), and the NOTIFY channels they talk on; what errand
//! needs of the server's autovacuum (`server.rs`); the caller doors'
//! tenant-scoped transactions (`tenant_scope.rs`); each tenant's data key,
//! and which params are kept sealed with it (`keys.rs`).

pub mod connect;
pub mod error;
pub mod keys;
pub mod processes;
pub mod server;
pub mod sessions;
pub mod tenant_scope;
pub mod writable;

use deadpool_postgres::{HookError, Manager, ManagerConfig, Pool, RecyclingMethod};

use crate::config::postgres::{Connection, UrlError};
use crate::store::pool::processes::PROCESS_NAME;

/// The PostgreSQL NOTIFY channel on which processes announce new work.
pub const WORK_CHANNEL: &str = "errand_jobs";
/// The channel on which committed notifications are announced, with the
/// payload of comma-separated [`crate::domain::OwnerTag`]s: who should be
/// woken, not what happened (and no tenant or user names).
pub const NOTIFICATION_CHANNEL: &str = "errand_notifications";
/// The NOTIFY channel of running jobs' progress (payload: owner tags, as for notifications).
pub const PROGRESS_CHANNEL: &str = "errand_progress";
/// The NOTIFY channel of cancels of running jobs (payload: job ids).
pub const CANCEL_CHANNEL: &str = "errand_cancel";

/// How long anything waits for a database connection.
const POOL_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// A pool of up to `size` connections to `url`, and where it connects:
/// `writes` drops a connection to a server that no longer takes writes, and
/// `io_on` is the runtime its connections do their I/O on.
pub(super) fn build(
    url: &str,
    size: usize,
    writes: bool,
    io_on: Option<tokio::runtime::Handle>,
) -> Result<(Pool, Connection), UrlError> {
    let target = Connection::parse(url)?;
    let Connection { config: mut pg_config, tls } = target.clone();
    // errand's statements are short and planned with generic estimates
    // that can look expensive (a claim's were 600k): JIT then compiled
    // for 70-400 ms to run a statement of 2 ms. Set on each new
    // connection, not as a startup option (PgBouncer refuses `options`).
    // A URL's own options win.
    let jit_off = pg_config.get_options().is_none();
    // Names this process's connections, so that processes can count each
    // other (`live_processes`). A URL's own name wins.
    if pg_config.get_application_name().is_none() {
        pg_config.application_name(PROCESS_NAME.as_str());
    }
    let connect = connect::ConnectOn { tls, runtime: io_on };
    let manager = Manager::from_connect(pg_config, connect, ManagerConfig { recycling_method: RecyclingMethod::Fast });
    let mut pool = Pool::builder(manager);
    if jit_off {
        pool = pool.post_create(deadpool_postgres::Hook::async_fn(|client, _| {
            Box::pin(async move { client.batch_execute("SET jit = off").await.map_err(HookError::Backend) })
        }));
    }
    if writes {
        pool = pool.post_recycle(writable::check_on_checkout());
    }
    let pool = pool
        .max_size(size)
        // The connection used last goes out first: the few a steady load
        // needs stay warm, the rest idle. Each PostgreSQL backend keeps its
        // own plan and catalog caches, and errand's long statements are
        // planned five times on each connection before their generic plan
        // settles (about 2 ms each for the end batch); first-in first-out
        // sent every statement round all of the pool's connections.
        .queue_mode(deadpool_postgres::QueueMode::Lifo)
        // A request that cannot get a connection soon gets a 503, rather than hanging.
        .wait_timeout(Some(POOL_WAIT))
        .create_timeout(Some(POOL_WAIT))
        .runtime(deadpool_postgres::Runtime::Tokio1)
        .build()
        .expect("a pool with a runtime always builds");
    Ok((pool, target))
}
