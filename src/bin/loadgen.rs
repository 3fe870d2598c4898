//! errand-loadgen: drives a running errand with `POST /jobs/noop` and reports
//! throughput and latency. Three phases:
//!
//! * `create`: fresh idempotency keys, `--requests` in all at `--concurrency`
//!   (the jobs run meanwhile, as they would in production);
//! * `wait`: until every job of this run has run;
//! * `replay`: the same keys again (every answer must be a 200 replay);
//! * `drain`:  `--drain` more noop jobs, timed from the first request until
//!   the last job is completed (polled through `GET /jobs`).
//!
//! Each client is its own tenant, so per-tenant limits do not throttle the drain.
//! Build with `--features bench`; `scripts/bench` runs it beside pgbench.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Parser;
use errand::http::{Claims, TokenIssuer};
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
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Phase {
    Create,
    Wait,
    Replay,
    Drain,
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
        let claims = Claims { sub: "bench".into(), tenant: format!("bench-{run}-{i}"), email: None, exp };
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
                let response = http
                    .post(format!("{url}/jobs/noop"))
                    .bearer_auth(&client.token)
                    .header("Idempotency-Key", format!("{prefix}{key}"))
                    .header("Content-Type", "application/json")
                    .body("{}")
                    .send()
                    .await;
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
