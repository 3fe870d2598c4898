//! The `noisy` phase: what a flooding tenant costs a quiet one.
//!
//! Tenant B submits one short (`noop`) job every 100 ms, spread over ten
//! users (one a second each, within a person's rate limits), first alone,
//! then while tenant A floods: `--flooders` clients, each a user of A,
//! sending long `sleep` jobs back to back and ignoring every `Retry-After`,
//! as a runaway script would (or, with `--flood-obeys-retry-after`, waiting
//! as errand asks, as errand's clients do). For B, per round: each create's latency, and
//! each job's time from its submission (B's clock) to its `completed_at`
//! (the database's clock, on the same machine). For A: what its requests
//! were answered.
//!
//! The flood is sent by a child process (this binary's `flood` phase) at a
//! low CPU priority (`--flood-niceness`): a real flood's client runs on
//! another machine, but here both share two cores with errand and
//! PostgreSQL, and a flood sent from this process took more CPU than errand
//! itself (110 % against 74 %) while B's requests queued behind its tasks.
//! errand's own work for the flood (every refusal) is measured as it is.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use errand::domain::tokens::{TokenIssuer, UserClaims};
use serde_json::Value;

use super::{TICKS_PER_SECOND, cpu_ticks, percentile};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// B's submissions a second, and how many users share them.
const QUIET_EVERY: Duration = Duration::from_millis(100);
const QUIET_USERS: usize = 10;
/// How long each of A's jobs runs.
const FLOOD_JOB_MS: u64 = 5_000;

pub struct Noisy {
    pub seconds: u64,
    pub flooders: usize,
    /// The flooders wait out each `Retry-After`.
    pub obey_retry_after: bool,
    /// The flooding process's `nice` value.
    pub flood_niceness: i32,
    /// The server's JWT secret, for the flooding process's tokens.
    pub secret: String,
    /// errand's process, whose CPU time each round is measured by.
    pub server_pid: Option<u32>,
}

/// B's figures in one round.
struct Quiet {
    creates: Vec<Duration>,
    completions: Vec<Duration>,
}

impl Noisy {
    pub async fn run(
        &self,
        http: &reqwest::Client,
        url: &str,
        issuer: &TokenIssuer,
        run: &str,
        exp: u64,
    ) -> Result<(), Error> {
        let token = |tenant: String, user: String| {
            issuer.issue(&UserClaims { sub: user, tenant, email: None, scope: None, exp }).map_err(|e| e.to_string())
        };
        let quiet: Vec<String> =
            (0..QUIET_USERS).map(|i| token(format!("quiet-{run}"), format!("b{i}"))).collect::<Result<_, _>>()?;
        let cpu = || self.server_pid.and_then(cpu_ticks);
        let before = cpu();
        let idle = self.quiet_round(http, url, &quiet, "idle").await?;
        let idle_cpu = cpu().zip(before).map(|(after, before)| after - before);
        report("idle", &idle);

        let before = cpu();
        let flood = self.start_flood(url, run)?;
        let noisy = self.quiet_round(http, url, &quiet, "noisy").await;
        let answers = tokio::task::spawn_blocking(move || stop_flood(flood)).await??;
        let noisy_cpu = cpu().zip(before).map(|(after, before)| after - before);
        let noisy = noisy?;
        report("noisy", &noisy);
        let flood_requests: u64 =
            answers.split_whitespace().filter_map(|a| a.split_once(':')?.1.parse::<u64>().ok()).sum();
        if let (Some(idle_cpu), Some(noisy_cpu)) = (idle_cpu, noisy_cpu) {
            // errand's CPU beside the flood, less what the quiet tenant's own
            // requests cost it alone, over the flood's requests.
            let quiet = idle_cpu as f64 * noisy.creates.len() as f64 / idle.creates.len().max(1) as f64;
            let flood_us = (noisy_cpu as f64 - quiet).max(0.0) * 1e6 / TICKS_PER_SECOND;
            println!(
                "noisy   errand's CPU: idle round {:.2} s, noisy round {:.2} s; per flood request {:.0} µs ({flood_requests} requests, {:.0} a second)",
                idle_cpu as f64 / TICKS_PER_SECOND,
                noisy_cpu as f64 / TICKS_PER_SECOND,
                flood_us / flood_requests.max(1) as f64,
                flood_requests as f64 / self.seconds.max(1) as f64,
            );
        }
        println!(
            "noisy   flooders={} obeying_retry_after={} niceness={} their answers {}",
            self.flooders,
            self.obey_retry_after,
            self.flood_niceness,
            answers.trim()
        );
        let p95 = |q: &Quiet| percentile(&q.completions, 95.0).as_secs_f64();
        println!("noisy   quiet tenant's p95 submit-to-completion, noisy/idle = {:.2}", p95(&noisy) / p95(&idle));
        Ok(())
    }

    /// Starts the flood: this binary's `flood` phase, as tenant A of `run`,
    /// under `nice`. It floods until its stdin closes ([`stop_flood`]).
    fn start_flood(&self, url: &str, run: &str) -> Result<std::process::Child, Error> {
        let mut command = Command::new("nice");
        command
            .arg("-n")
            .arg(self.flood_niceness.to_string())
            .arg(std::env::current_exe()?)
            .args(["--phases", "flood", "--url", url, "--run-id", run, "--flooders"])
            .arg(self.flooders.to_string());
        if self.obey_retry_after {
            command.arg("--flood-obeys-retry-after");
        }
        // In its environment, not on its command line (where `ps` shows it).
        command.env("ERRAND_AUTH__JWT_SECRET", &self.secret);
        Ok(command.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?)
    }

    /// B's jobs for `self.seconds`, one each [`QUIET_EVERY`], then waits for them all.
    async fn quiet_round(
        &self,
        http: &reqwest::Client,
        url: &str,
        users: &[String],
        round: &str,
    ) -> Result<Quiet, Error> {
        let mut tick = tokio::time::interval(QUIET_EVERY);
        let deadline = Instant::now() + Duration::from_secs(self.seconds);
        let mut submitted = Vec::new();
        let mut creates = Vec::new();
        let mut n = 0;
        while Instant::now() < deadline {
            tick.tick().await;
            let token = &users[n % users.len()];
            let (at, started) = (SystemTime::now(), Instant::now());
            let response = super::post_noop(http, url, token, &format!("{round}-{n}")).await?;
            creates.push(started.elapsed());
            if response.status() != reqwest::StatusCode::ACCEPTED {
                return Err(format!("the quiet tenant's create got {}", response.status()).into());
            }
            let job: Value = response.json().await?;
            submitted.push((token.clone(), job["id"].as_str().unwrap_or_default().to_owned(), at));
            n += 1;
        }
        let mut completions = Vec::with_capacity(submitted.len());
        for (token, id, at) in submitted {
            let completed_at = completed_at(http, url, &token, &id).await?;
            completions.push(completed_at.duration_since(at).unwrap_or_default());
        }
        creates.sort();
        completions.sort();
        Ok(Quiet { creates, completions })
    }
}

/// Ends the flood started by [`Noisy::start_flood`]: closes its stdin and
/// answers what it printed (its answers by status).
fn stop_flood(mut flood: std::process::Child) -> Result<String, Error> {
    drop(flood.stdin.take());
    let mut answers = String::new();
    flood.stdout.take().ok_or("the flood's stdout")?.read_to_string(&mut answers)?;
    let status = flood.wait()?;
    if !status.success() {
        return Err(format!("the flood ended with {status}").into());
    }
    Ok(answers)
}

/// The `flood` phase (the child [`Noisy::start_flood`] starts): tenant A's
/// `flooders` clients until stdin closes, then prints their answers by
/// status (`429:1234 202:56`).
pub async fn flood(
    url: &str,
    issuer: &TokenIssuer,
    run: &str,
    exp: u64,
    flooders: usize,
    obey: bool,
) -> Result<(), Error> {
    let http = reqwest::Client::builder().pool_max_idle_per_host(flooders).build()?;
    let stop = Arc::new(AtomicBool::new(false));
    let stdin_closed = stop.clone();
    std::thread::spawn(move || {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        stdin_closed.store(true, Ordering::Relaxed);
    });
    let mut clients = Vec::new();
    for i in 0..flooders {
        let (http, url, stop) = (http.clone(), url.to_owned(), stop.clone());
        let token = issuer
            .issue(&UserClaims { sub: format!("a{i}"), tenant: format!("noisy-{run}"), email: None, scope: None, exp })
            .map_err(|e| e.to_string())?;
        clients.push(tokio::spawn(async move { flood_client(&http, &url, &token, i, obey, &stop).await }));
    }
    let mut answers: BTreeMap<u16, u64> = BTreeMap::new();
    for client in clients {
        for (status, count) in client.await? {
            *answers.entry(status).or_default() += count;
        }
    }
    let answers: Vec<String> = answers.iter().map(|(status, n)| format!("{status}:{n}")).collect();
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", answers.join(" "))?;
    Ok(())
}

/// One of A's clients: long jobs back to back until `stop` (waiting out
/// each `Retry-After` if it `obeys`); its answers by status.
async fn flood_client(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    client: usize,
    obeys: bool,
    stop: &AtomicBool,
) -> BTreeMap<u16, u64> {
    let mut answers = BTreeMap::new();
    let body = format!("{{\"ms\": {FLOOD_JOB_MS}}}");
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let response = http
            .post(format!("{url}/jobs/sleep"))
            .bearer_auth(token)
            .header("Idempotency-Key", format!("flood-{client}-{n}"))
            .header("Content-Type", "application/json")
            .body(body.clone())
            .send()
            .await;
        let (status, wait) = match response {
            Ok(response) => {
                let status = response.status().as_u16();
                let wait = response
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
                    // A refusal's Retry-After; a 202's is only a polling hint.
                    .filter(|_| obeys && matches!(status, 429 | 503));
                let _ = response.bytes().await;
                (status, wait)
            }
            Err(_) => (0, None),
        };
        *answers.entry(status).or_default() += 1;
        n += 1;
        if let Some(seconds) = wait {
            // In slices, so that the round's end stops a waiting flooder too.
            let until = Instant::now() + Duration::from_secs(seconds);
            while Instant::now() < until && !stop.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    answers
}

/// When job `id` completed, by the database's clock (polled until it has).
async fn completed_at(http: &reqwest::Client, url: &str, token: &str, id: &str) -> Result<SystemTime, Error> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let job: Value = http.get(format!("{url}/jobs/{id}")).bearer_auth(token).send().await?.json().await?;
        if let Some(at) = job["completed_at"].as_str() {
            let at = chrono::DateTime::parse_from_rfc3339(at)?;
            return Ok(SystemTime::from(at));
        }
        if Instant::now() > deadline {
            return Err(format!("the quiet tenant's job {id} did not complete within 2 minutes").into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn report(round: &str, quiet: &Quiet) {
    let ms = |sorted: &[Duration], p: f64| percentile(sorted, p).as_secs_f64() * 1000.0;
    println!(
        "noisy   round={round} quiet_jobs={} create p50={:.1}ms p95={:.1}ms p99={:.1}ms; submit-to-completion p50={:.1}ms p95={:.1}ms p99={:.1}ms",
        quiet.completions.len(),
        ms(&quiet.creates, 50.0),
        ms(&quiet.creates, 95.0),
        ms(&quiet.creates, 99.0),
        ms(&quiet.completions, 50.0),
        ms(&quiet.completions, 95.0),
        ms(&quiet.completions, 99.0),
    );
}
