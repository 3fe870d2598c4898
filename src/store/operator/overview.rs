//! The operators' overview: how the queue stands, in one statement whose
//! every part reads an index or a counter table, so that it answers as fast
//! with millions of finished jobs as with none. Finished jobs are counted
//! up to a cap (the caller shows "10,000+"); unfinished ones come from the
//! queue table and the counters the queue's triggers keep.

use deadpool_postgres::Pool;
use serde_json::Value;

use crate::domain::Operator;
use crate::store::StoreError;

/// How far finished jobs are counted, per state.
pub const FINISHED_COUNT_CAP: i64 = 10_000;

/// `$1`: the cap of finished counts; `$2`: errand's `application_name` prefix.
const OVERVIEW: &str = "
SELECT
    (SELECT coalesce(jsonb_object_agg(state, n), '{}')
     FROM (SELECT state::text AS state, count(*) AS n FROM job_queue GROUP BY state) q) AS unfinished,
    (SELECT extract(epoch FROM now() - min(run_at))::float8 FROM job_queue
     WHERE state IN ('available', 'retryable') AND run_at <= now()) AS oldest_due_seconds,
    (SELECT count(*) FROM (SELECT 1 FROM jobs WHERE state = 'completed' LIMIT $1::bigint + 1) c) AS completed,
    (SELECT count(*) FROM (SELECT 1 FROM jobs WHERE unsuccessful_state = 'failed' LIMIT $1 + 1) f) AS failed,
    (SELECT count(*) FROM (SELECT 1 FROM jobs WHERE unsuccessful_state = 'cancelled' LIMIT $1 + 1) x) AS cancelled,
    -- Which types fail: the newest failed jobs (up to the cap, through the
    -- unsuccessful jobs' index), by type.
    (SELECT coalesce(jsonb_agg(jsonb_build_object('job_type', job_type, 'failed', n) ORDER BY n DESC, job_type), '[]')
     FROM (SELECT job_type, count(*) AS n
           FROM (SELECT job_type FROM jobs WHERE unsuccessful_state = 'failed' ORDER BY id DESC LIMIT $1) newest
           GROUP BY job_type) t) AS recent_failures_by_type,
    (SELECT count(*) FROM email_outbox WHERE state IN ('pending', 'sending')) AS emails_waiting,
    (SELECT count(*) FROM webhook_deliveries WHERE state IN ('pending', 'sending')) AS webhooks_waiting,
    (SELECT coalesce(jsonb_agg(jsonb_build_object('tenant', tenant_id, 'unfinished', jobs) ORDER BY jobs DESC), '[]')
     FROM (SELECT tenant_id, jobs FROM unfinished_counts WHERE user_id = '' AND jobs > 0 ORDER BY jobs DESC LIMIT 10) t)
        AS largest_backlogs,
    (SELECT count(*) FROM job_queue WHERE state = 'running') AS running,
    (SELECT coalesce(jsonb_agg(p ORDER BY p.since), '[]')
     FROM (SELECT application_name AS name, min(host(client_addr)) AS address, min(backend_start) AS since,
                  count(*) AS connections
           FROM pg_stat_activity
           WHERE datname = current_database() AND starts_with(application_name, $2)
           GROUP BY application_name) p) AS process_list,
    -- Running jobs per lease owner (an errand process's dispatcher, or an
    -- external worker): read from the running rows alone, a few hundred.
    (SELECT coalesce(jsonb_agg(o ORDER BY o.running DESC), '[]')
     FROM (SELECT lease_owner AS owner, count(*) AS running, min(started_at) AS oldest_started_at
           FROM job_queue WHERE state = 'running' GROUP BY lease_owner) o) AS running_by_owner,
    NOT pg_is_in_recovery() AS writable,
    -- Cumulative totals, cluster-wide: a page samples them and shows the
    -- rates. Claims and attempt ends as every errand process last published
    -- them (`process_totals`, every few seconds); the rest kept by
    -- PostgreSQL's statistics (no write of errand's): every job is one insert
    -- into jobs, every end of a job one delete from the queue, every failed
    -- attempt one error row.
    (SELECT jsonb_build_object(
         'claimed', (SELECT coalesce(sum(claimed), 0) FROM process_totals),
         'attempts_ended', (SELECT coalesce(sum(attempts_ended), 0) FROM process_totals),
         'created', (SELECT n_tup_ins FROM pg_stat_user_tables WHERE relid = 'jobs'::regclass),
         'ended', (SELECT n_tup_del FROM pg_stat_user_tables WHERE relid = 'job_queue'::regclass),
         'attempts_failed', (SELECT n_tup_ins FROM pg_stat_user_tables WHERE relid = 'job_attempt_errors'::regclass),
         'at', to_jsonb(clock_timestamp()))) AS totals,
    -- The server this process reached (with several hosts in the URL, the one now primary).
    coalesce(host(inet_server_addr()) || ':' || inet_server_port(), 'local socket') || '/' || current_database()
        AS database";

/// How the queue stands (see [`OVERVIEW`]).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Overview {
    /// Unfinished jobs by queue state (`available`, `retryable`, `running`).
    pub unfinished: Value,
    /// How long the oldest due job has waited.
    pub oldest_due_seconds: Option<f64>,
    /// Finished jobs by state, each counted up to [`FINISHED_COUNT_CAP`] + 1.
    pub finished: FinishedCounts,
    pub finished_count_cap: i64,
    /// The newest failed jobs (at most [`FINISHED_COUNT_CAP`]) by type: `{job_type, failed}`.
    pub recent_failures_by_type: Value,
    pub emails_waiting: i64,
    pub webhooks_waiting: i64,
    /// The ten tenants with the most unfinished jobs: `{tenant, unfinished}`.
    pub largest_backlogs: Value,
    /// errand processes connected to the database now.
    pub processes: i64,
    pub running: i64,
    /// Each errand process connected: `{name, address, since, connections}`.
    pub process_list: Value,
    /// Running jobs per lease owner: `{owner, running, oldest_started_at}`.
    pub running_by_owner: Value,
    /// The database takes writes (a standby does not).
    pub writable: bool,
    /// `address:port/database` of the server this process reached.
    pub database: String,
    /// Jobs `claimed` and `attempts_ended` (as the processes publish them),
    /// `created`, `ended` and `attempts_failed` (as PostgreSQL's statistics
    /// count them) so far, read `at`: rates are their differences.
    pub totals: Value,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct FinishedCounts {
    pub completed: i64,
    pub failed: i64,
    pub cancelled: i64,
}

/// The overview's door, for an operator.
pub struct OperatorOverview<'a> {
    pub(in crate::store) pool: &'a Pool,
    /// Proof that an operator asked.
    pub(in crate::store) _operator: &'a Operator,
}

impl OperatorOverview<'_> {
    pub async fn read(&self) -> Result<Overview, StoreError> {
        let client = self.pool.get().await?;
        let statement = client.prepare_cached(OVERVIEW).await?;
        let row = client
            .query_one(&statement, &[&FINISHED_COUNT_CAP, &crate::store::pool::processes::PROCESS_NAME_PREFIX])
            .await?;
        let process_list: Value = row.try_get("process_list")?;
        Ok(Overview {
            unfinished: row.try_get("unfinished")?,
            oldest_due_seconds: row.try_get("oldest_due_seconds")?,
            finished: FinishedCounts {
                completed: row.try_get("completed")?,
                failed: row.try_get("failed")?,
                cancelled: row.try_get("cancelled")?,
            },
            finished_count_cap: FINISHED_COUNT_CAP,
            recent_failures_by_type: row.try_get("recent_failures_by_type")?,
            emails_waiting: row.try_get("emails_waiting")?,
            webhooks_waiting: row.try_get("webhooks_waiting")?,
            largest_backlogs: row.try_get("largest_backlogs")?,
            // Derived from the list, not counted again.
            processes: i64::try_from(process_list.as_array().map_or(0, Vec::len)).unwrap_or(i64::MAX),
            running: row.try_get("running")?,
            process_list,
            running_by_owner: row.try_get("running_by_owner")?,
            writable: row.try_get("writable")?,
            database: row.try_get("database")?,
            totals: row.try_get("totals")?,
        })
    }
}
