//! errand's metrics, one registry per process, rendered at `GET /metrics` in
//! the format the scraper asks for ([`render`]): OpenMetrics, whose
//! histogram samples may carry an exemplar naming the trace of one job
//! they counted (Prometheus asks for it first; it keeps exemplars with
//! `--enable-feature=exemplar-storage`), or else the Prometheus text
//! format. Labels are job types, states and reasons, never a tenant or a
//! user: those are span attributes ([`super::traces`]).

use std::sync::LazyLock;
use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::{EncodeMetric, prometheus_text, text};
use prometheus_client::metrics::TypedMetric;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::exemplar::HistogramWithExemplars;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Metric, Registry};

/// The bounds of `errand_job_wait_seconds`' buckets, in seconds: fine where
/// a quiet process starts jobs (1.5 ms and 5 ms are the aims of issue 7),
/// coarse where a backlog makes jobs wait.
const JOB_WAIT_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0015, 0.002, 0.003, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
    300.0, 900.0, 3600.0,
];

/// The `Content-Type` of each format [`render`] writes.
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// A job type's label, and an exemplar's: the trace it names.
type JobTypeLabel = [(&'static str, String); 1];
type TraceLabel = [(&'static str, String); 1];
type WaitHistogram = HistogramWithExemplars<TraceLabel>;

/// A family of one label whose key is fixed where the family is registered,
/// so no call site can name it differently.
#[derive(Clone, Debug)]
pub struct Labelled<M> {
    key: &'static str,
    family: Family<[(&'static str, &'static str); 1], M>,
}

impl Labelled<Counter> {
    /// Adds `n` to the counter of `value`.
    pub fn add(&self, value: &'static str, n: u64) {
        self.family.get_or_create(&[(self.key, value)]).inc_by(n);
    }
}

impl Labelled<Gauge> {
    /// Sets the gauge of `value`.
    pub fn set(&self, value: &'static str, n: i64) {
        self.family.get_or_create(&[(self.key, value)]).set(n);
    }
}

/// Every metric errand keeps. Counters' names gain `_total` when rendered.
pub struct Metrics {
    registry: Registry,
    /// Submissions by outcome (`created`, `replayed`, `over_quota`, …).
    pub jobs_submitted: Labelled<Counter>,
    pub batches_submitted: Labelled<Counter>,
    /// Submissions the Intake shed, by reason.
    pub submissions_shed: Labelled<Counter>,
    /// Requests answered 429, by the problem's code.
    pub requests_refused: Labelled<Counter>,
    /// Jobs claimed, by who claimed them (`dispatcher`, `submission`, `worker`).
    pub(super) jobs_claimed: Labelled<Counter>,
    /// Leases the Rescuer found expired: `requeued` or `failed`.
    pub jobs_rescued: Labelled<Counter>,
    /// Rows a claim that broke with its connection had taken, given back, by `of` (`jobs`, `emails`, …).
    pub lost_claims_given_back: Labelled<Counter>,
    /// Webhook delivery tries, by result.
    pub webhooks: Labelled<Counter>,
    pub webhook_endpoints_disabled: Counter,
    /// Emails, by result.
    pub emails: Labelled<Counter>,
    /// Web Push messages, by result (`sent`, `deferred`, `refused`, `gone`).
    pub pushes: Labelled<Counter>,
    /// A schedule's occurrences that made no job, by reason.
    pub schedule_occurrences_skipped: Labelled<Counter>,
    pub scheduled_jobs: Counter,
    pub listener_reconnects: Counter,
    pub jobs_pruned: Counter,
    /// Vacuums of the queue errand started itself (`actors::upkeep::vacuum`;
    /// one that found another vacuum at the table skipped it).
    pub queue_vacuums: Counter,
    attempts_ended: Family<[(&'static str, String); 2], Counter>,
    job_wait: Family<JobTypeLabel, WaitHistogram, fn() -> WaitHistogram>,
    /// How many submissions each of the Intake's statements recorded.
    pub submission_batch_size: Histogram,
    pub notification_streams: Gauge,
    /// This process's running jobs, and those it claimed ahead of a free slot.
    pub jobs_running: Gauge,
    pub jobs_claimed_ahead: Gauge,
    pub listener_connected: Gauge,
    /// Read from the database at each scrape: the queue across all processes.
    pub jobs_waiting: Gauge,
    pub jobs_running_all_processes: Gauge,
    pub oldest_due_job_wait_seconds: Gauge<f64, AtomicU64>,
    /// How long the oldest open transaction holding a snapshot of errand's
    /// database has been open (what vacuum may not remove since).
    pub database_oldest_snapshot_seconds: Gauge<f64, AtomicU64>,
    /// Scopes paused, `by` an operator or a breaker.
    pub paused_scopes: Labelled<Gauge>,
}

/// This process's metrics (one registry however many errand instances a test starts in it).
pub fn metrics() -> &'static Metrics {
    static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);
    &METRICS
}

impl Metrics {
    fn new() -> Self {
        let mut r = Registry::default();
        Self {
            jobs_submitted: labelled(&mut r, "errand_jobs_submitted", "Job submissions, by outcome", "outcome"),
            batches_submitted: labelled(&mut r, "errand_batches_submitted", "Batch submissions, by outcome", "outcome"),
            submissions_shed: labelled(&mut r, "errand_submissions_shed", "Submissions shed under load", "reason"),
            requests_refused: labelled(&mut r, "errand_requests_refused", "Requests answered 429", "reason"),
            jobs_claimed: labelled(&mut r, "errand_jobs_claimed", "Jobs claimed, by claimer", "by"),
            jobs_rescued: labelled(&mut r, "errand_jobs_rescued", "Jobs whose lease expired", "outcome"),
            lost_claims_given_back: labelled(
                &mut r,
                "errand_lost_claims_given_back",
                "Rows of claims lost with their connection, given back",
                "of",
            ),
            webhooks: labelled(&mut r, "errand_webhooks", "Webhook delivery tries, by result", "result"),
            webhook_endpoints_disabled: registered(&mut r, "errand_webhook_endpoints_disabled", "Endpoints disabled"),
            emails: labelled(&mut r, "errand_emails", "Emails, by result", "result"),
            pushes: labelled(&mut r, "errand_pushes", "Web Push messages, by result", "result"),
            schedule_occurrences_skipped: labelled(
                &mut r,
                "errand_schedule_occurrences_skipped",
                "Schedule occurrences that made no job",
                "reason",
            ),
            scheduled_jobs: registered(&mut r, "errand_scheduled_jobs", "Jobs schedules made"),
            listener_reconnects: registered(&mut r, "errand_listener_reconnects", "Reconnections of the listener"),
            jobs_pruned: registered(&mut r, "errand_jobs_pruned", "Finished jobs pruned"),
            queue_vacuums: registered(
                &mut r,
                "errand_queue_vacuums",
                "Vacuums of the queue table errand started itself",
            ),
            attempts_ended: registered(&mut r, "errand_job_attempts_ended", "Attempts ended, by job type and state"),
            job_wait: with(
                &mut r,
                "errand_job_wait_seconds",
                "How long an attempt waited from due to started, by job type",
                Family::new_with_constructor(|| WaitHistogram::new(JOB_WAIT_BUCKETS.iter().copied())),
            ),
            submission_batch_size: with(
                &mut r,
                "errand_submission_batch_size",
                "Submissions recorded by one statement",
                Histogram::new(exponential_buckets(1.0, 2.0, 11)),
            ),
            notification_streams: registered(&mut r, "errand_notification_streams", "Open notification streams"),
            jobs_running: registered(&mut r, "errand_jobs_running", "Jobs running in this process"),
            jobs_claimed_ahead: registered(&mut r, "errand_jobs_claimed_ahead", "Jobs claimed ahead of a free slot"),
            listener_connected: registered(&mut r, "errand_listener_connected", "1 while listening to the database"),
            jobs_waiting: registered(&mut r, "errand_jobs_waiting", "Jobs waiting, all processes"),
            jobs_running_all_processes: registered(&mut r, "errand_jobs_running_all_processes", "Jobs running"),
            oldest_due_job_wait_seconds: registered(
                &mut r,
                "errand_oldest_due_job_wait_seconds",
                "How long the oldest due job has waited",
            ),
            database_oldest_snapshot_seconds: registered(
                &mut r,
                "errand_database_oldest_snapshot_seconds",
                "How long the oldest transaction holding a snapshot of errand's database has been open",
            ),
            paused_scopes: labelled(&mut r, "errand_paused_scopes", "Scopes paused", "by"),
            registry: r,
        }
    }
}

/// Registers a family of one label, `key`.
fn labelled<M: EncodeMetric + TypedMetric + Default + Send + Sync + std::fmt::Debug + 'static>(
    registry: &mut Registry,
    name: &str,
    help: &str,
    key: &'static str,
) -> Labelled<M> {
    let family = Family::default();
    registry.register(name, help, family.clone());
    Labelled { key, family }
}

/// Registers a metric made by `Default`.
fn registered<M: Metric + Clone + Default>(registry: &mut Registry, name: &str, help: &str) -> M {
    with(registry, name, help, M::default())
}

/// Registers `metric`.
fn with<M: Metric + Clone>(registry: &mut Registry, name: &str, help: &str, metric: M) -> M {
    registry.register(name, help, metric.clone());
    metric
}

impl Metrics {
    /// One attempt of a job of `job_type` ended in `state`.
    pub(super) fn attempt_ended(&self, job_type: &str, state: &'static str) {
        self.attempts_ended.get_or_create(&[("job_type", job_type.to_owned()), ("state", state.to_owned())]).inc();
    }

    /// An attempt of a job of `job_type` waited `seconds` for a worker; its
    /// trace (32 hex digits), when it has a recorded one, is the bucket's
    /// exemplar until a later sample with a trace replaces it.
    pub(super) fn job_waited(&self, job_type: &str, seconds: f64, trace_id: Option<String>) {
        let exemplar = trace_id.map(|id| [("trace_id", id)]);
        let now = exemplar.is_some().then(std::time::SystemTime::now);
        self.job_wait.get_or_create(&[("job_type", job_type.to_owned())]).observe(seconds, exemplar, now);
    }
}

/// Every metric, as `accept` (the scrape's `Accept` header) prefers:
/// OpenMetrics when it names `application/openmetrics-text` at all (with a
/// weight above 0), else the Prometheus text format. Answers the
/// `Content-Type` and the body.
pub fn render(accept: Option<&str>) -> (&'static str, String) {
    let mut body = String::new();
    let metrics = metrics();
    let (content_type, written) = if accept.is_some_and(asks_for_openmetrics) {
        (OPENMETRICS, text::encode(&mut body, &metrics.registry))
    } else {
        (prometheus_text::CONTENT_TYPE, prometheus_text::encode(&mut body, &metrics.registry))
    };
    // Writing to a String fails only if a metric's own encoding does, which none of errand's can.
    if let Err(error) = written {
        tracing::error!(%error, "metrics could not be rendered");
    }
    (content_type, body)
}

/// Whether an `Accept` header lists OpenMetrics with a weight above 0.
fn asks_for_openmetrics(accept: &str) -> bool {
    accept.split(',').any(|range| {
        let mut parts = range.split(';').map(str::trim);
        let media_type = parts.next().unwrap_or_default();
        let weight = parts
            .filter_map(|param| param.split_once('='))
            .find(|(name, _)| name.trim().eq_ignore_ascii_case("q"))
            .map_or(1.0, |(_, q)| q.trim().parse::<f64>().unwrap_or(0.0));
        media_type.eq_ignore_ascii_case("application/openmetrics-text") && weight > 0.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_s_own_accept_header_gets_openmetrics_and_anything_else_the_text_format() {
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,\
                          text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert!(asks_for_openmetrics(prometheus));
        assert!(asks_for_openmetrics("Application/OpenMetrics-Text"));
        assert!(!asks_for_openmetrics("application/openmetrics-text;q=0"));
        assert!(!asks_for_openmetrics("text/plain;version=0.0.4"));
        assert!(!asks_for_openmetrics("*/*"));
        assert_eq!(render(None).0, prometheus_text::CONTENT_TYPE);
        assert_eq!(render(Some(prometheus)).0, OPENMETRICS);
    }

    #[test]
    fn a_wait_with_a_trace_is_its_bucket_s_exemplar_in_openmetrics_only() {
        let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
        metrics().job_waited("exemplar_probe", 0.0007, Some(trace.to_owned()));
        metrics().job_waited("exemplar_probe", 0.0008, None);
        let (_, open) = render(Some("application/openmetrics-text"));
        let bucket = open
            .lines()
            .find(|l| {
                l.starts_with("errand_job_wait_seconds_bucket{")
                    && l.contains("exemplar_probe")
                    && l.contains("le=\"0.001\"")
            })
            .unwrap_or_else(|| panic!("no bucket in:\n{open}"));
        assert!(
            bucket.contains(&format!("# {{trace_id=\"{trace}\"}} 0.0007")),
            "the later sample without a trace keeps it: {bucket}"
        );
        assert!(open.ends_with("# EOF\n"));
        let (_, plain) = render(None);
        let counted =
            plain.lines().find(|l| l.starts_with("errand_job_wait_seconds_count{") && l.contains("exemplar_probe"));
        assert_eq!(counted.and_then(|l| l.rsplit(' ').next()), Some("2"));
        assert!(!plain.contains(trace), "the text format has no exemplars");
    }
}
