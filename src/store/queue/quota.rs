//! The quota check of a batch of submissions, in the transaction that records
//! them (see `domain::Usage` for the rule, `migrations/V1__baseline.sql` for
//! the schema).
//!
//! Two processes must not both let a cap's next job in. Most batches are
//! far from every cap: `submit.rs`'s `INSERT_OR_FIND_CAPPED` records them
//! in one statement, and the trigger that counts what it queued checks the
//! caps on the counts it has just written, under its tenants' count locks
//! (`errand_count_changed` in `migrations/V3__counts_by_generation.sql`):
//! exact, and no statement of its own. A batch that would go over a cap fails whole
//! ([`is_over_quota`]) and comes here ([`begin_admitting`]), to be decided job
//! by job, in order, so that each submission gets its own answer (which cap,
//! how full).
//!
//! Deciding job by job takes each of the batch's tenants' quota locks
//! (advisory, in tenant order, held until the transaction ends) and only
//! then counts: under READ COMMITTED each statement sees what was committed
//! before it began, so two such checks never decide on the same room. The
//! locks are not the claims' (another key space): recording and claiming
//! never wait for each other. A batch far from the caps records without the
//! locks; if it took the room meanwhile, the trigger refuses the admitted
//! jobs, and the check is made again. A submission whose key already names a
//! job is a replay, answered whatever the quota: it is looked up only when
//! some job of the batch would be refused.

use std::collections::{HashMap, HashSet};

use deadpool_postgres::{Client, GenericClient};
use tokio_postgres::Row;
use tokio_postgres::Statement;

use crate::domain::{QuotaExceeded, Quotas, TenantCaps, Usage};
use crate::store::StoreError;

/// Opens the recording transaction: READ COMMITTED, on which counting after
/// locks relies (the quota's here, the claim's beside submissions in
/// `batch_claim.rs`), whatever the database's default.
pub(in crate::store) const BEGIN: &str = "BEGIN ISOLATION LEVEL READ COMMITTED";
pub(in crate::store) const COMMIT: &str = "COMMIT";
const ROLLBACK: &str = "ROLLBACK";

/// The quota lock of each tenant in $1, in tenant order. Key space
/// 0x65720003: claims use 0x65720001 (tenants) and 0x65720002 (job types),
/// the triggers that count 0x65720004 (tenants).
const LOCK_QUOTAS: &str = "
SELECT count(pg_advisory_xact_lock(1701969923, hashtext(t.tenant_id))) AS locked
FROM (SELECT DISTINCT tenant_id FROM unnest($1::text[]) AS u (tenant_id) ORDER BY tenant_id) t";

/// Unfinished jobs of the tenants in $1, by tenant, user and type, as the
/// queue's triggers count them (`unfinished_counts`: the rows of one user's
/// jobs of one type, not the totals).
const UNFINISHED: &str = "
SELECT tenant_id, user_id, job_type, jobs FROM unfinished_counts
WHERE tenant_id = ANY ($1) AND job_type <> '' AND jobs > 0";

/// The operators' overrides of the tenants in $1.
const OVERRIDES: &str = "
SELECT tenant_id, max_unfinished_per_user, max_unfinished_per_tenant FROM tenant_quotas WHERE tenant_id = ANY ($1)";

/// Which of the keys ($1 tenants, $2 users, $3 keys) already name a job: the
/// 1-based positions in the arrays.
const EXISTING: &str = "
SELECT i.n
FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS i (tenant_id, user_id, idempotency_key, n)
WHERE EXISTS (SELECT 1 FROM jobs j
              WHERE j.tenant_id = i.tenant_id AND j.user_id = i.user_id AND j.idempotency_key = i.idempotency_key)";

/// One submission as the quota check sees it: whose key, and of which type.
#[derive(Debug, Clone, Copy)]
pub(in crate::store) struct Submitter<'a> {
    pub tenant: &'a str,
    pub user: &'a str,
    pub key: &'a str,
    pub job_type: &'a str,
}

impl Submitter<'_> {
    fn key_owner(&self) -> (&str, &str, &str) {
        (self.tenant, self.user, self.key)
    }
}

/// A batch's transaction, begun and past its quota check: which submissions
/// go on to be recorded (or found), and which were refused.
pub(in crate::store) struct Admission {
    /// Per submission, in the batch's order: `Some` if refused.
    pub refused: Vec<Option<QuotaExceeded>>,
}

/// The configured caps as `INSERT_OR_FIND_CAPPED` hands them to the
/// counting trigger (`$10`): `{"user": n, "tenant": n, "types": {type: n}}`,
/// `null` for no cap; a tenant's `tenant_quotas` row overrides the first two.
pub(in crate::store) struct BatchCaps(String);

impl BatchCaps {
    pub fn of(quotas: &Quotas) -> Self {
        Self(
            serde_json::json!({
                "user": quotas.defaults.per_user,
                "tenant": quotas.defaults.per_tenant,
                "types": quotas.per_user_of_type,
            })
            .to_string(),
        )
    }

    pub fn as_param(&self) -> &(dyn tokio_postgres::types::ToSql + Sync) {
        &self.0
    }

    pub fn as_text(&self) -> &str {
        &self.0
    }
}

/// How often a batch is decided job by job before giving up, when each time
/// submissions recorded without the quota locks took the room it was given.
pub(in crate::store) const RECHECKS: usize = 8;

/// Each of `tenants` once, in order (as the quota and claim locks are taken).
pub(in crate::store) fn distinct<'a>(tenants: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut tenants: Vec<&str> = tenants.collect();
    tenants.sort_unstable();
    tenants.dedup();
    tenants
}

/// Whether the counting trigger refused a statement's jobs: over a cap.
pub(in crate::store) fn is_over_quota(error: &tokio_postgres::Error) -> bool {
    error.code().is_some_and(|code| code.code() == "ER019")
}

impl Admission {
    /// Whether the `i`th submission goes on to be recorded (or found).
    pub fn is_admitted(&self, i: usize) -> bool {
        self.refused.get(i).is_some_and(Option::is_none)
    }
}

/// Sends `BEGIN`, takes the batch's quota locks and decides job by job
/// which of `jobs` may be recorded, leaving the transaction open on `client`
/// for the caller to record in and commit (if this fails, it is rolled back).
/// For a batch that `INSERT_OR_FIND_IF_FITS` found near a cap.
pub(in crate::store) async fn begin_admitting(
    client: &Client,
    jobs: &[Submitter<'_>],
    quotas: &Quotas,
) -> Result<Admission, StoreError> {
    let admitted = async {
        let begin = client.prepare_cached(BEGIN).await?;
        admit(client, Some(&begin), jobs, quotas).await
    }
    .await;
    if admitted.is_err() {
        // Best effort: a connection that fails here is discarded by the pool.
        let _ = client.batch_execute(ROLLBACK).await;
    }
    admitted
}

/// The same check in a transaction the caller has begun (a scheduler's
/// pass): the tenants' quota locks are held until it ends.
pub(in crate::store) async fn admit_in(
    tx: &impl GenericClient,
    jobs: &[Submitter<'_>],
    quotas: &Quotas,
) -> Result<Admission, StoreError> {
    admit(tx, None, jobs, quotas).await
}

/// Takes the quota locks of `jobs`' tenants (after `begin`, if given, in the
/// same pipeline), counts, and decides job by job.
async fn admit(
    client: &impl GenericClient,
    begin: Option<&Statement>,
    jobs: &[Submitter<'_>],
    quotas: &Quotas,
) -> Result<Admission, StoreError> {
    let (lock, unfinished, overrides) = (
        client.prepare_cached(LOCK_QUOTAS).await?,
        client.prepare_cached(UNFINISHED).await?,
        client.prepare_cached(OVERRIDES).await?,
    );
    let tenants = distinct(jobs.iter().map(|job| job.tenant));
    let begun = async {
        match begin {
            Some(begin) => client.execute(begin, &[]).await.map(drop),
            None => Ok(()),
        }
    };
    // Pipelined, in this order: the count's snapshot is taken after the locks are granted.
    let (begun, locked, counted, overridden) = futures_util::future::join4(
        begun,
        client.query(&lock, &[&tenants]),
        client.query(&unfinished, &[&tenants]),
        client.query(&overrides, &[&tenants]),
    )
    .await;
    begun?;
    locked?;
    let mut usage: HashMap<String, Usage> = HashMap::new();
    for row in counted? {
        let (tenant, user, job_type): (String, &str, &str) =
            (row.try_get("tenant_id")?, row.try_get("user_id")?, row.try_get("job_type")?);
        let jobs: i64 = row.try_get("jobs")?;
        usage.entry(tenant).or_default().count(user, job_type, u64::try_from(jobs).unwrap_or(0));
    }
    let mut caps: HashMap<String, TenantCaps> = HashMap::new();
    for row in overridden? {
        caps.insert(row.try_get("tenant_id")?, quotas.for_tenant(Some(caps_from_row(&row)?)));
    }
    let decide = |replays: &HashSet<usize>| decide(jobs, quotas, &caps, usage.clone(), replays);
    let refused = decide(&HashSet::new());
    if refused.iter().all(Option::is_none) {
        return Ok(Admission { refused });
    }
    // Some would be refused: replays among them (or among those admitted
    // before them) take no room. Decide again knowing which they are.
    let replays = existing_keys(client, jobs).await?;
    Ok(Admission { refused: decide(&replays) })
}

/// Admits `jobs` in their order against `usage`: a replay (its position in
/// `replays`) is admitted and takes no room, and a key repeated in the batch
/// gets its first submission's answer (the statement records it once).
fn decide(
    jobs: &[Submitter<'_>],
    quotas: &Quotas,
    caps: &HashMap<String, TenantCaps>,
    mut usage: HashMap<String, Usage>,
    replays: &HashSet<usize>,
) -> Vec<Option<QuotaExceeded>> {
    let mut decided = HashMap::new();
    jobs.iter()
        .enumerate()
        .map(|(i, job)| {
            if replays.contains(&i) {
                return None;
            }
            *decided.entry(job.key_owner()).or_insert_with(|| {
                let caps = caps.get(job.tenant).copied().unwrap_or_else(|| quotas.for_tenant(None));
                let type_cap = quotas.per_user_of_type.get(job.job_type).copied();
                let usage = usage.entry(job.tenant.to_owned()).or_default();
                usage.admit(job.user, job.job_type, caps, type_cap).err()
            })
        })
        .collect()
}

/// The positions in `jobs` of those whose key already names a job.
async fn existing_keys(client: &impl GenericClient, jobs: &[Submitter<'_>]) -> Result<HashSet<usize>, StoreError> {
    let (tenants, users, keys): (Vec<&str>, Vec<&str>, Vec<&str>) =
        jobs.iter().map(Submitter::key_owner).fold((vec![], vec![], vec![]), |(mut t, mut u, mut k), (a, b, c)| {
            t.push(a);
            u.push(b);
            k.push(c);
            (t, u, k)
        });
    let rows = client.query(&client.prepare_cached(EXISTING).await?, &[&tenants, &users, &keys]).await?;
    rows.iter().map(|row| Ok(usize::try_from(row.try_get::<_, i64>("n")? - 1).unwrap_or(usize::MAX))).collect()
}

/// A `tenant_quotas` row's caps (`NULL`: none set).
pub(in crate::store) fn caps_from_row(row: &Row) -> Result<TenantCaps, StoreError> {
    let cap = |column: &str| -> Result<Option<u32>, StoreError> {
        Ok(row.try_get::<_, Option<i32>>(column)?.map(|n| u32::try_from(n).unwrap_or(0)))
    };
    Ok(TenantCaps { per_user: cap("max_unfinished_per_user")?, per_tenant: cap("max_unfinished_per_tenant")? })
}
