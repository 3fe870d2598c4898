//! Attempts' log lines (`job_attempt_logs` in `migrations/`): written in
//! batches fenced on each attempt's lease, capped per attempt by the
//! statement itself (so a process's buffer and the worker API, in any
//! process, share one cap).

use std::collections::HashSet;

use serde_json::Value;
use uuid::Uuid;

use crate::domain::{JobId, LeaseId, LogLine, MAX_LOG_BYTES, MAX_LOG_LINES};
use crate::store::{Queue, StoreError};

/// Writes lines `$1` (jobs) `$2` (leases) `$3` (times) `$4` (levels) `$5`
/// (messages) `$6` (fields), in order, for each attempt whose lease it is:
/// the one running under it, or the one that ended under it (the job's
/// last end, or the end before its retry). Within the attempt's cap of
/// `$7` lines and `$8` bytes; past it, one `truncated` line. Answers the
/// jobs whose lease held.
const WRITE: &str = "
WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::text[], $5::text[], $6::jsonb[])
        WITH ORDINALITY AS i (job_id, lease_id, at, level, message, fields, n)
), attempts AS (
    -- Each lease's attempt, if the lease is still the attempt's.
    SELECT l.job_id, l.lease_id, j.run,
           CASE WHEN q.lease_id = l.lease_id THEN q.attempt
                -- Ended before a retry, whose attempt may have begun since.
                WHEN q.last_lease_id = l.lease_id THEN q.attempt - (q.state = 'running')::integer
                ELSE j.attempt END AS attempt
    FROM (SELECT DISTINCT job_id, lease_id FROM input) l
    JOIN jobs j ON j.id = l.job_id
    LEFT JOIN job_queue q ON q.job_id = l.job_id
    WHERE q.lease_id = l.lease_id OR q.last_lease_id = l.lease_id OR (q.job_id IS NULL AND j.ended_lease_id = l.lease_id)
), used AS (
    SELECT a.job_id, a.lease_id, a.run, a.attempt, count(g.id) AS lines,
           coalesce(sum(octet_length(g.message) + coalesce(octet_length(g.fields::text), 0)), 0) AS bytes,
           bool_or(g.truncated) AS truncated
    FROM attempts a
    LEFT JOIN job_attempt_logs g ON g.job_id = a.job_id AND g.run = a.run AND g.attempt = a.attempt
    GROUP BY a.job_id, a.lease_id, a.run, a.attempt
), numbered AS (
    SELECT i.*, u.run, u.attempt, coalesce(u.truncated, false) AS truncated_before,
           u.lines + row_number() OVER w AS line,
           u.bytes + sum(octet_length(i.message) + coalesce(octet_length(i.fields::text), 0)) OVER w AS bytes
    FROM input i JOIN used u ON u.job_id = i.job_id AND u.lease_id = i.lease_id
    WINDOW w AS (PARTITION BY i.job_id, i.lease_id ORDER BY i.n)
), kept AS (
    INSERT INTO job_attempt_logs (job_id, run, attempt, at, level, message, fields)
    SELECT job_id, run, attempt, at, level, message, fields FROM numbered
    WHERE NOT truncated_before AND line <= $7 AND bytes <= $8
    ORDER BY n
), cut AS (
    INSERT INTO job_attempt_logs (job_id, run, attempt, at, level, message, truncated)
    SELECT DISTINCT ON (job_id, run, attempt) job_id, run, attempt, now(), 'warn',
           format('truncated: an attempt keeps %s lines or %s KiB of its log', $7, $8 / 1024), true
    FROM numbered WHERE NOT truncated_before AND (line > $7 OR bytes > $8)
    ON CONFLICT DO NOTHING
)
SELECT DISTINCT job_id FROM attempts";

impl Queue<'_> {
    /// Writes `lines`, each with its attempt's job and lease, fenced on the
    /// lease (see [`WRITE`]): answers the jobs whose lease held (the others'
    /// lines were dropped).
    pub async fn write_logs(&self, lines: &[(JobId, LeaseId, LogLine)]) -> Result<HashSet<JobId>, StoreError> {
        if lines.is_empty() {
            return Ok(HashSet::new());
        }
        let jobs: Vec<Uuid> = lines.iter().map(|(job, _, _)| job.0).collect();
        let leases: Vec<Uuid> = lines.iter().map(|(_, lease, _)| lease.0).collect();
        let times: Vec<_> = lines.iter().map(|(_, _, line)| line.at).collect();
        let levels: Vec<&str> = lines.iter().map(|(_, _, line)| line.level.as_str()).collect();
        let messages: Vec<&str> = lines.iter().map(|(_, _, line)| line.message.as_str()).collect();
        let fields: Vec<Option<&Value>> = lines.iter().map(|(_, _, line)| line.fields.as_ref()).collect();
        let (max_lines, max_bytes) = (MAX_LOG_LINES as i64, MAX_LOG_BYTES as i64);
        let client = self.pool.get().await?;
        let statement = client.prepare_cached(WRITE).await?;
        let rows = client
            .query(&statement, &[&jobs, &leases, &times, &levels, &messages, &fields, &max_lines, &max_bytes])
            .await?;
        rows.iter().map(|row| Ok(JobId(row.try_get("job_id")?))).collect()
    }
}
