//! The test harness: a fresh database per test, errand started in-process
//! (`spawn_app`, `TestApp::builder()`) or as real processes
//! (`ErrandProcess`), and a client that speaks the API, so a new test is a
//! few lines long. One module per concern; tests `use crate::helpers::*`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use errand::config::{JobTypeSettings, Settings};
use errand::domain::tokens::{TokenIssuer, UserClaims};
use errand::jobs::HandlerRegistry;
use errand::startup::Application;
use reqwest::{Response, StatusCode};
use serde_json::{Value, json};
use tokio_postgres::NoTls;
use uuid::Uuid;

mod api;
mod app;
mod cutter;
mod db;
mod failover;
mod gate;
mod mail;
mod pgbouncer;
mod process;
mod push;
mod receiver;
mod s3;
mod sse;

pub use api::*;
pub use app::*;
pub use cutter::*;
pub use db::*;
pub use failover::*;
pub use gate::*;
pub use mail::*;
pub use pgbouncer::*;
pub use process::*;
pub use push::*;
pub use receiver::*;
pub use s3::*;
pub use sse::*;
