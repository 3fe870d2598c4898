//! Connections: how errand reaches PostgreSQL (`postgres.rs`: the URL as
//! libpq reads it, TLS), how the pool makes a connection (`connect.rs`),
//! names it (`sessions.rs`) and drops one to a server that no longer takes
//! writes (`writable.rs`).

pub mod connect;
pub mod postgres;
pub mod sessions;
pub mod writable;
