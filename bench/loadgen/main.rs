//! errand-loadgen: drives a running errand with `POST /jobs/noop` and reports
//! throughput and latency. Its phases:
//!
//! * `create`: fresh idempotency keys, `--requests` in all at `--concurrency`
//!   (the jobs run meanwhile, as they would in production);
//! * `wait`: until every job of this run has run;
//! * `replay`: the same keys again (every answer must be a 200 replay);
//! * `drain`:  `--drain` more noop jobs, timed from the first request until
//!   the last job is completed (polled through `GET /jobs`);
//! * `noisy`: a quiet tenant's latencies alone and beside a flooding one
//!   (`noisy.rs`), whose flood a child process sends (the `flood` phase);
//! * `paced`: `--rate` submissions a second for `--seconds`, open loop (each
//!   sent on its tick, whatever the ones before it are doing), over the
//!   clients in turn: a producer at a given share of errand's capacity.
//!
//! Each client is its own tenant, so per-tenant limits do not throttle the drain.
//! Build with `--features bench`; `scripts/bench` runs it beside pgbench.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

mod noisy;

use clap::Parser;
use errand::domain::tokens::{TokenIssuer, UserClaims};
use serde_json::Value;

#[derive(Parser)]
struct Args {
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    url: String,
    /// The server's `auth.jwt_secret`.
    #[arg(long, env = "ERRAND_AUTH__JWT_SECRET")]
    secret: String,
    #[arg(long, default_value_t = 32)]
    concurrency: usize,
    #[arg(long, default_value_t = 20_000)]
    requests: usize,
    #[arg(long, default_value_t = 5_000)]
    drain: usize,
    /// Which phases to run, in order: create, wait (until every job ran), replay, drain.
    #[arg(long, value_delimiter = ',', default_value = "create,wait,replay,drain")]
    phases: Vec<Phase>,
    /// Names this run's tenants; give the same id to a later run to replay its keys.
    #[arg(long)]
    run_id: Option<String>,
    /// `streams` phase: open streams, one user each.
    #[arg(long, default_value_t = 1_000)]
    streams: usize,
    /// `streams` phase: jobs whose notifications are timed.
    #[arg(long, default_value_t = 500)]
    stream_jobs: usize,
    /// `streams` and `export` phases: the server's pid, to read its memory.
    #[arg(long)]
    server_pid: Option<u32>,
    /// `export` phase: the tenant whose rows are exported.
    #[arg(long, default_value = "demo-1")]
    export_tenant: String,
    /// `export` phase: the job type and its params.
    #[arg(long, default_value = "export_sales_report")]
    export_type: String,
    #[arg(long, default_value = r#"{"from": "2000-01-01", "to": "2100-01-01"}"#)]
    export_params: String,
    /// `export` phase: the file format asked for (the type's default when absent).
    #[arg(long)]
    export_format: Option<String>,
    /// `noisy` phase: seconds of each round (the quiet tenant alone, then beside the flood).
    #[arg(long, default_value_t = 10)]
    noisy_seconds: u64,
    /// `noisy` phase: the flooding tenant's clients.
    #[arg(long, default_value_t = 64)]
    flooders: usize,
    /// `noisy` phase: the flooders wait out each `Retry-After`.
    #[arg(long)]
    flood_obeys_retry_after: bool,
    /// `noisy` phase: the flooding process's `nice` value (19: it gets the CPU errand leaves).
    #[arg(long, default_value_t = 19)]
    flood_niceness: i32,
    /// `paced` phase: submissions a second.
    #[arg(long, default_value_t = 1_000)]
    rate: u32,
    /// `paced` phase: for how long.
    #[arg(long, default_value_t = 20)]
    seconds: u64,
    /// `paced` phase: a CSV of each submission's key and when its tick sent
    /// it (epoch seconds), so a job's latency can be read from its click,
    /// as the peers' producers record theirs (bench/sustained.sh).
    #[arg(long)]
    paced_log: Option<std::path::PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Phase {
    Create,
    Wait,
    Replay,
    Drain,
    Streams,
    Export,
    Noisy,
    /// The noisy phase's flood, in a process of its own (see `noisy.rs`).
    Flood,
    Paced,
}

/// One client: a tenant of its own and the keys it used.
struct Client {
    token: String,
    keys: Vec<String>,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let http = reqwest::Client::builder().pool_max_idle_per_host(args.concurrency).build()?;
    let issuer = TokenIssuer::new(&args.secret)?;
    let exp = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs() + 3600;
    let run = match args.run_id {
        Some(id) => id,
        None => SystemTime::now().duration_since(UNIX_EPOCH)?.as_millis().to_string(),
    };
    let mut clients = Vec::new();
    for i in 0..args.concurrency {
        let claims =
            UserClaims { sub: "bench".into(), tenant: format!("bench-{run}-{i}"), email: None, scope: None, exp };
        clients.push(Client { token: issuer.issue(&claims)?, keys: Vec::new() });
    }
    let per_client = args.requests / args.concurrency;
    for (i, client) in clients.iter_mut().enumerate() {
        client.keys = (0..per_client).map(|n| format!("c{i}-{n}")).collect();
    }
    let clients = Arc::new(clients);

    for phase_name in &args.phases {
        match phase_name {
            Phase::Create => {
                // Warm up connections and the server's caches first.
                phase(&http, &args.url, &clients, 202, "warmup-", 50.min(per_client)).await?;
                report("create", &phase(&http, &args.url, &clients, 202, "", per_client).await?);
            }
            Phase::Wait => wait_until_drained(&http, &args.url, &clients).await?,
            Phase::Replay => report("replay", &phase(&http, &args.url, &clients, 200, "", per_client).await?),
            Phase::Streams => {
                let streams =
                    StreamBench { streams: args.streams, jobs: args.stream_jobs, server_pid: args.server_pid };
                streams.run(&http, &args.url, &issuer, &run, exp).await?;
            }
            Phase::Noisy => {
                let noisy = noisy::Noisy {
                    seconds: args.noisy_seconds,
                    flooders: args.flooders,
                    obey_retry_after: args.flood_obeys_retry_after,
                    flood_niceness: args.flood_niceness,
                    server_pid: args.server_pid,
                    secret: args.secret.clone(),
                };
                noisy.run(&http, &args.url, &issuer, &run, exp).await.map_err(|e| e.to_string())?;
            }
            Phase::Flood => {
                noisy::flood(&args.url, &issuer, &run, exp, args.flooders, args.flood_obeys_retry_after)
                    .await
                    .map_err(|e| e.to_string())?;
            }
            Phase::Export => {
                let claims = UserClaims {
                    sub: "bench".into(),
                    tenant: args.export_tenant.clone(),
                    email: None,
                    scope: None,
                    exp,
                };
                let token = issuer.issue(&claims)?;
                let params: Value = serde_json::from_str(&args.export_params)?;
                let asked =
                    ExportAsked { job_type: &args.export_type, params: &params, format: args.export_format.as_deref() };
                run_export(&http, &args.url, &token, &asked, &run, args.server_pid).await?;
            }
            Phase::Paced => {
                paced(&http, &args.url, &clients, args.rate, args.seconds, args.paced_log.as_deref()).await?
            }
            Phase::Drain => {
                let drain_per_client = args.drain / args.concurrency;
                let start = Instant::now();
                let submitted = phase(&http, &args.url, &clients, 202, "drain-", drain_per_client).await?;
                let submit_time = start.elapsed();
                wait_until_drained(&http, &args.url, &clients).await?;
                let total = start.elapsed();
                let jobs = submitted.latencies.len();
                println!(
                    "drain   jobs={jobs} submitted_in={:.2}s all_completed_in={:.2}s end_to_end={:.0} jobs/s",
                    submit_time.as_secs_f64(),
                    total.as_secs_f64(),
                    jobs as f64 / total.as_secs_f64()
                );
            }
        }
    }
    Ok(())
}

/// Sends `rate` submissions a second for `seconds`, each on its own tick
/// (open loop: a slow answer does not delay the next submission), the
/// clients taking turns; then waits for the answers and reports them.
async fn paced(
    http: &reqwest::Client,
    url: &str,
    clients: &Arc<Vec<Client>>,
    rate: u32,
    seconds: u64,
    log: Option<&std::path::Path>,
) -> Result<(), Box<dyn std::error::Error>> {
    let total = u64::from(rate) * seconds;
    let mut sent_at = Vec::with_capacity(if log.is_some() { usize::try_from(total).unwrap_or(0) } else { 0 });
    let mut ticks = tokio::time::interval(Duration::from_secs(1) / rate.max(1));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let start = Instant::now();
    let mut sent = Vec::with_capacity(usize::try_from(total).unwrap_or(0));
    for n in 0..total {
        ticks.tick().await;
        if log.is_some() {
            sent_at.push(SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs_f64());
        }
        let index = usize::try_from(n).unwrap_or(0) % clients.len();
        let (http, url, clients) = (http.clone(), url.to_owned(), clients.clone());
        sent.push(tokio::spawn(async move {
            let client = &clients[index];
            let began = Instant::now();
            let response = post_noop(&http, &url, &client.token, &format!("paced-{n}")).await;
            // The status of a refusal (0: no answer), to tell a quota's 429 from an overload's 503.
            let status = response.map_or(0, |r| r.status().as_u16());
            (began.elapsed(), status)
        }));
    }
    let sending = start.elapsed();
    let mut latencies = Vec::with_capacity(sent.len());
    let mut refused: std::collections::BTreeMap<u16, usize> = std::collections::BTreeMap::new();
    for task in sent {
        let (latency, status) = task.await?;
        latencies.push(latency);
        if status != 202 {
            *refused.entry(status).or_default() += 1;
        }
    }
    if let Some(log) = log {
        let lines: String = sent_at.iter().enumerate().map(|(n, at)| format!("paced-{n},{at:.6}\n")).collect();
        std::fs::write(log, format!("key,sent\n{lines}"))?;
    }
    latencies.sort();
    let refused: Vec<String> = refused.iter().map(|(status, n)| format!("{status}:{n}")).collect();
    println!(
        "paced   rate={rate} sent={} in={:.2}s refused={} p50={:.2}ms p99={:.2}ms p99.9={:.2}ms",
        latencies.len(),
        sending.as_secs_f64(),
        if refused.is_empty() { "0".to_owned() } else { refused.join(",") },
        percentile(&latencies, 50.0).as_secs_f64() * 1000.0,
        percentile(&latencies, 99.0).as_secs_f64() * 1000.0,
        percentile(&latencies, 99.9).as_secs_f64() * 1000.0,
    );
    Ok(())
}

/// `POST /jobs/noop` with an empty params object, under `key`.
fn post_noop(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    key: &str,
) -> impl std::future::Future<Output = reqwest::Result<reqwest::Response>> {
    http.post(format!("{url}/jobs/noop"))
        .bearer_auth(token)
        .header("Idempotency-Key", key)
        .header("Content-Type", "application/json")
        .body("{}")
        .send()
}

struct PhaseResult {
    latencies: Vec<Duration>,
    elapsed: Duration,
}

/// Every client sends its keys (with `prefix`) one after another; all clients at once.
async fn phase(
    http: &reqwest::Client,
    url: &str,
    clients: &Arc<Vec<Client>>,
    expected: u16,
    prefix: &str,
    per_client: usize,
) -> Result<PhaseResult, Box<dyn std::error::Error>> {
    let failures = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for index in 0..clients.len() {
        let (http, url, clients, prefix, failures) =
            (http.clone(), url.to_owned(), clients.clone(), prefix.to_owned(), failures.clone());
        tasks.push(tokio::spawn(async move {
            let client = &clients[index];
            let mut latencies = Vec::with_capacity(per_client);
            for key in client.keys.iter().take(per_client) {
                let sent = Instant::now();
                let response = post_noop(&http, &url, &client.token, &format!("{prefix}{key}")).await;
                let ok = matches!(&response, Ok(r) if r.status().as_u16() == expected);
                if let Ok(r) = response {
                    let _ = r.bytes().await;
                }
                latencies.push(sent.elapsed());
                if !ok {
                    failures.fetch_add(1, Ordering::Relaxed);
                }
            }
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await?);
    }
    let elapsed = start.elapsed();
    let failed = failures.load(Ordering::Relaxed);
    if failed > 0 {
        return Err(format!("{failed} requests did not answer {expected}").into());
    }
    latencies.sort();
    Ok(PhaseResult { latencies, elapsed })
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn report(name: &str, result: &PhaseResult) {
    let n = result.latencies.len();
    println!(
        "{name:7} requests={n} throughput={:.0} req/s p50={:.2}ms p99={:.2}ms max={:.2}ms",
        n as f64 / result.elapsed.as_secs_f64(),
        percentile(&result.latencies, 50.0).as_secs_f64() * 1000.0,
        percentile(&result.latencies, 99.0).as_secs_f64() * 1000.0,
        result.latencies.last().copied().unwrap_or_default().as_secs_f64() * 1000.0,
    );
}

/// Polls each client's `processing` jobs until none is left.
async fn wait_until_drained(
    http: &reqwest::Client,
    url: &str,
    clients: &[Client],
) -> Result<(), Box<dyn std::error::Error>> {
    let deadline = Instant::now() + Duration::from_secs(600);
    for client in clients {
        loop {
            let page: Value = http
                .get(format!("{url}/jobs?status=processing&limit=1"))
                .bearer_auth(&client.token)
                .send()
                .await?
                .json()
                .await?;
            if page["jobs"].as_array().is_some_and(|jobs| jobs.is_empty()) {
                break;
            }
            if Instant::now() > deadline {
                return Err("jobs did not drain within 10 minutes".into());
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    Ok(())
}

/// Latency from a job's end to its notification arriving on an open stream,
/// with many streams open, and the server's memory per open stream.
struct StreamBench {
    streams: usize,
    jobs: usize,
    server_pid: Option<u32>,
}

impl StreamBench {
    async fn run(
        &self,
        http: &reqwest::Client,
        url: &str,
        issuer: &TokenIssuer,
        run: &str,
        exp: u64,
    ) -> Result<(), Box<dyn std::error::Error>> {
        use futures_util::StreamExt;

        let tokens: Vec<String> = (0..self.streams)
            .map(|i| {
                let claims = UserClaims {
                    sub: format!("viewer-{i}"),
                    tenant: format!("streams-{run}"),
                    email: None,
                    scope: None,
                    exp,
                };
                issuer.issue(&claims)
            })
            .collect::<Result<_, _>>()?;
        let rss_before = self.server_pid.and_then(rss_kib);
        // A client of its own: the streams must not take the pool's connections.
        let stream_client = reqwest::Client::builder().pool_max_idle_per_host(0).build()?;
        let (latencies_tx, mut latencies) = tokio::sync::mpsc::unbounded_channel::<Duration>();
        let mut opened = Vec::new();
        for token in &tokens {
            let response = stream_client.get(format!("{url}/notifications/stream")).bearer_auth(token).send().await?;
            if !response.status().is_success() {
                return Err(format!("stream refused: {}", response.status()).into());
            }
            let tx = latencies_tx.clone();
            opened.push(tokio::spawn(async move {
                let mut body = response.bytes_stream();
                let mut buffer = String::new();
                while let Some(Ok(chunk)) = body.next().await {
                    buffer.push_str(&String::from_utf8_lossy(&chunk));
                    while let Some(end) = buffer.find("\n\n") {
                        let frame: String = buffer.drain(..end + 2).collect();
                        let Some(data) = frame.lines().find_map(|line| line.strip_prefix("data: ")) else { continue };
                        let event: Value = serde_json::from_str(data).unwrap_or_default();
                        let created =
                            event["created_at"].as_str().and_then(|t| t.parse::<chrono::DateTime<chrono::Utc>>().ok());
                        if let Some(created) = created {
                            let latency = (chrono::Utc::now() - created).to_std().unwrap_or_default();
                            let _ = tx.send(latency);
                        }
                    }
                }
            }));
        }
        // Let the server settle its buffers before reading its memory.
        tokio::time::sleep(Duration::from_secs(1)).await;
        let rss_after = self.server_pid.and_then(rss_kib);

        // Jobs one after another, each for the next viewer, so each notification is timed alone.
        for n in 0..self.jobs {
            let token = &tokens[n % tokens.len()];
            post_noop(http, url, token, &format!("stream-job-{n}")).await?.error_for_status()?;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let mut measured = Vec::with_capacity(self.jobs);
        let deadline = Instant::now() + Duration::from_secs(60);
        while measured.len() < self.jobs && Instant::now() < deadline {
            if let Ok(Some(latency)) = tokio::time::timeout(Duration::from_secs(5), latencies.recv()).await {
                measured.push(latency);
            }
        }
        measured.sort();
        println!(
            "streams open={} events={}/{} latency p50={:.1}ms p99={:.1}ms max={:.1}ms",
            self.streams,
            measured.len(),
            self.jobs,
            percentile(&measured, 50.0).as_secs_f64() * 1000.0,
            percentile(&measured, 99.0).as_secs_f64() * 1000.0,
            measured.last().copied().unwrap_or_default().as_secs_f64() * 1000.0,
        );
        if let (Some(before), Some(after)) = (rss_before, rss_after) {
            println!(
                "streams server_rss_before={before}KiB after={after}KiB per_stream={:.1}KiB",
                after.saturating_sub(before) as f64 / self.streams as f64
            );
        }
        opened.iter().for_each(|task| task.abort());
        Ok(())
    }
}

/// Resident memory of a process, from /proc.
fn rss_kib(pid: u32) -> Option<u64> {
    proc_status_kib(pid, "VmRSS:")
}

/// Clock ticks a second of /proc's CPU times (`getconf CLK_TCK`: 100 on Linux).
pub(crate) const TICKS_PER_SECOND: f64 = 100.0;

/// A process's CPU time so far (user and system), in clock ticks, from /proc.
pub(crate) fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command (in parentheses, which may hold spaces).
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// A kB field of /proc/<pid>/status (`VmRSS:` now, `VmHWM:` the peak).
fn proc_status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
}

/// The export a run asks for.
struct ExportAsked<'a> {
    job_type: &'a str,
    params: &'a Value,
    format: Option<&'a str>,
}

/// One export, timed from request to completion, with the server's peak memory.
async fn run_export(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    asked: &ExportAsked<'_>,
    run: &str,
    server_pid: Option<u32>,
) -> Result<(), Box<dyn std::error::Error>> {
    let start = Instant::now();
    let query = asked.format.map(|f| format!("?format={f}")).unwrap_or_default();
    let job: Value = http
        .post(format!("{url}/jobs/{}{query}", asked.job_type))
        .bearer_auth(token)
        .header("Idempotency-Key", format!("export-{run}-{}", start.elapsed().as_nanos()))
        .json(asked.params)
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let id = job["id"].as_str().ok_or("no job id")?.to_owned();
    let job = loop {
        let job: Value = http.get(format!("{url}/jobs/{id}")).bearer_auth(token).send().await?.json().await?;
        if job["status"] == "completed" || job["status"] == "failed" {
            break job;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let elapsed = start.elapsed().as_secs_f64();
    if job["status"] != "completed" {
        return Err(format!("the export failed: {}", job["error_message"]).into());
    }
    let rows = job["result"]["row_count"].as_u64().unwrap_or(0);
    let peak = server_pid.and_then(|pid| proc_status_kib(pid, "VmHWM:"));
    println!(
        "export  format={} rows={rows} bytes={} seconds={elapsed:.2} rows_per_s={:.0} server_peak_rss={}",
        job["format"].as_str().unwrap_or("?"),
        job["result"]["size_bytes"],
        rows as f64 / elapsed,
        peak.map_or("?".to_owned(), |kib| format!("{:.1}MiB", kib as f64 / 1024.0))
    );
    Ok(())
}
