//! How the pool makes a connection: as deadpool-postgres does, except on
//! which runtime.
//!
//! A tokio-postgres connection is a client and a task that does its I/O, on
//! a socket that belongs to the reactor of the runtime that opened it.
//! deadpool opens it, and spawns the task, on whichever runtime first asks
//! the pool for a connection. actix-web runs each HTTP worker on a runtime of
//! its own, so a connection first made for a request lived on that worker's
//! runtime, though the pool lends it to everyone. At shutdown the HTTP
//! workers stop while the drain still runs, and their runtimes take their
//! tasks and sockets with them: the connections made there closed under
//! whoever held them, the Completer writing the last ends, the LeaseKeeper
//! renewing, the dispatcher releasing unstarted jobs (seen as "Connection
//! could not be recycled: Connection closed" after every worker-API drain in
//! `scripts/bench`). A release that fails so leaves its jobs to wait out
//! their leases instead of going to another process at once.
//!
//! So the main pool opens its connections, and runs their tasks, on the
//! runtime it was built on: the actors' runtime, which lives until the
//! process ends and issues most of the statements. The pools only job
//! handlers use (an export's source) keep deadpool's way: the handlers'
//! runtime asks, and lives as long as the process; an export's rows then
//! never pass through the actors' thread.

use deadpool_postgres::Connect;
use futures_util::future::BoxFuture;
use tokio::runtime::Handle;
use tokio::task::JoinHandle;
use tokio_postgres::{Client, Config};
use tokio_postgres_rustls::MakeRustlsConnect;

/// Connects with `tls` on `runtime` (or, `None`, on the runtime that asks),
/// and runs the connection's task there.
pub(in crate::store) struct ConnectOn {
    pub tls: MakeRustlsConnect,
    pub runtime: Option<Handle>,
}

impl Connect for ConnectOn {
    fn connect(&self, config: &Config) -> BoxFuture<'_, Result<(Client, JoinHandle<()>), tokio_postgres::Error>> {
        let (tls, config, runtime) = (self.tls.clone(), config.clone(), self.runtime.clone());
        Box::pin(async move {
            let Some(runtime) = runtime else { return connect(tls, config).await };
            // The socket is made there too: it belongs to the reactor of the
            // runtime that opens it, and fails when that one ends.
            match runtime.spawn(connect(tls.clone(), config.clone())).await {
                Ok(connected) => connected,
                // That runtime is ending (so is the process): connect here.
                Err(_) => connect(tls, config).await,
            }
        })
    }
}

/// Connects, and spawns the connection's task on the current runtime.
async fn connect(tls: MakeRustlsConnect, config: Config) -> Result<(Client, JoinHandle<()>), tokio_postgres::Error> {
    let (client, connection) = config.connect(tls).await?;
    let task = tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::warn!(target: "deadpool.postgres", "Connection error: {error}");
        }
    });
    Ok((client, task))
}
