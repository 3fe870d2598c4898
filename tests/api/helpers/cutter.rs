//! A TCP proxy in front of PostgreSQL that loses one answer on purpose: once
//! armed, it cuts the next connection whose server answers with rows, once
//! the transaction of those rows has committed, and before any of that
//! transaction's answers past the rows' start reaches errand. Tests of commits whose outcome errand cannot know
//! use it. URLs through it must say `sslmode=disable`: the proxy reads the
//! protocol's messages, which TLS would hide.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::*;

/// PostgreSQL's backend message types this proxy looks for.
const DATA_ROW: u8 = b'D';
const READY_FOR_QUERY: u8 = b'Z';
/// ReadyForQuery's status outside a transaction.
const IDLE: u8 = b'I';

pub struct ReplyCutter {
    /// `target` reached through the proxy.
    pub url: String,
    armed: Arc<AtomicBool>,
    cuts: Arc<AtomicUsize>,
    accepting: tokio::task::JoinHandle<()>,
}

impl ReplyCutter {
    /// A proxy to the server of `target` (a URL), answering on a local port.
    pub async fn start(target: &str) -> Self {
        let parsed = reqwest::Url::parse(target).expect("a database URL");
        let upstream = format!("{}:{}", parsed.host_str().unwrap(), parsed.port().unwrap_or(5432));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut url = parsed.clone();
        url.set_port(Some(listener.local_addr().unwrap().port())).unwrap();
        url.query_pairs_mut().append_pair("sslmode", "disable");
        let (armed, cuts) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
        let (armed_, cuts_) = (armed.clone(), cuts.clone());
        let accepting = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(&upstream).await else { continue };
                tokio::spawn(relay(client, server, armed_.clone(), cuts_.clone()));
            }
        });
        Self { url: url.to_string(), armed, cuts, accepting }
    }

    /// Cut the next answer with rows (one only).
    pub fn arm(&self) {
        self.armed.store(true, Ordering::SeqCst);
    }

    /// How many answers were cut so far.
    pub fn cuts(&self) -> usize {
        self.cuts.load(Ordering::SeqCst)
    }
}

impl Drop for ReplyCutter {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

/// Copies one connection both ways, reading the server's side message by
/// message. Once armed, from the first answer with rows on, holds back
/// everything until the server is ready for a query outside a transaction
/// (the rows' transaction committed, or rolled back), and cuts both sides there.
async fn relay(client: TcpStream, server: TcpStream, armed: Arc<AtomicBool>, cuts: Arc<AtomicUsize>) {
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let upstream = tokio::spawn(async move { tokio::io::copy(&mut client_read, &mut server_write).await });
    let mut cutting = false;
    loop {
        let mut header = [0u8; 5];
        if server_read.read_exact(&mut header).await.is_err() {
            break;
        }
        let length = u32::from_be_bytes(header[1..5].try_into().unwrap()) as usize;
        let mut body = vec![0u8; length.saturating_sub(4)];
        if server_read.read_exact(&mut body).await.is_err() {
            break;
        }
        if header[0] == DATA_ROW && !cutting && armed.swap(false, Ordering::SeqCst) {
            cutting = true;
        }
        if cutting {
            if header[0] == READY_FOR_QUERY && body == [IDLE] {
                cuts.fetch_add(1, Ordering::SeqCst);
                break;
            }
            continue;
        }
        if client_write.write_all(&header).await.is_err() || client_write.write_all(&body).await.is_err() {
            break;
        }
    }
    upstream.abort();
}
