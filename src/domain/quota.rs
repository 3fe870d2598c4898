//! Quotas on unfinished work: how many jobs (waiting or running) one user,
//! one user's jobs of one type, and one tenant may have at once. A new job
//! over any of them is refused; a replay of a job that exists never is.
//!
//! The decision is here, free of I/O; the store counts in the recording
//! transaction, under the tenant's quota lock, and asks [`Usage::admit`]
//! about each new job in turn (see `store/quota.rs`).

use std::collections::HashMap;
use std::time::Duration;

/// A cap on unfinished jobs; `None` is no cap.
pub type Cap = Option<u32>;

/// Which cap a refused job would have passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuotaScope {
    /// The user's unfinished jobs of this job type.
    UserJobType,
    /// The user's unfinished jobs of every type.
    User,
    /// The tenant's unfinished jobs, of all its users.
    Tenant,
}

impl QuotaScope {
    /// The word the API and the metrics use.
    pub fn name(self) -> &'static str {
        match self {
            Self::UserJobType => "user_job_type",
            Self::User => "user",
            Self::Tenant => "tenant",
        }
    }
}

/// A new job refused: the cap it would pass, and how many unfinished jobs
/// count against that cap now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaExceeded {
    pub scope: QuotaScope,
    pub limit: u32,
    pub count: u64,
}

/// The caps of one tenant: the configured ones, or its operator's override.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TenantCaps {
    pub per_user: Cap,
    pub per_tenant: Cap,
}

/// The quotas a process enforces: the configured caps (per user, per
/// tenant, per user and job type), and how long a refused caller is told to wait.
#[derive(Debug, Clone)]
pub struct Quotas {
    pub defaults: TenantCaps,
    /// Per job type, a cap on one user's unfinished jobs of that type.
    pub per_user_of_type: HashMap<String, u32>,
    /// `Retry-After` of a refusal: when a slot may have freed up.
    pub retry_after: Duration,
}

impl Quotas {
    /// No caps at all: nothing is counted and nothing locked.
    pub fn off() -> Self {
        Self { defaults: TenantCaps::default(), per_user_of_type: HashMap::new(), retry_after: Duration::from_secs(30) }
    }

    /// Whether any cap applies: if not, submissions skip the check. A tenant
    /// override (in the database) then has no effect either.
    pub fn enforced(&self) -> bool {
        self.defaults.per_user.is_some() || self.defaults.per_tenant.is_some() || !self.per_user_of_type.is_empty()
    }

    /// A tenant's caps, with its override's fields in place of the defaults.
    pub fn for_tenant(&self, override_: Option<TenantCaps>) -> TenantCaps {
        let o = override_.unwrap_or_default();
        TenantCaps {
            per_user: o.per_user.or(self.defaults.per_user),
            per_tenant: o.per_tenant.or(self.defaults.per_tenant),
        }
    }
}

/// One tenant's unfinished jobs as counted, grown by each job admitted.
#[derive(Debug, Clone, Default)]
pub struct Usage {
    tenant: u64,
    users: HashMap<String, u64>,
    user_types: HashMap<(String, String), u64>,
}

impl Usage {
    /// Counts `jobs` unfinished jobs of `user` of type `job_type`.
    pub fn count(&mut self, user: &str, job_type: &str, jobs: u64) {
        self.tenant += jobs;
        *self.users.entry(user.to_owned()).or_default() += jobs;
        *self.user_types.entry((user.to_owned(), job_type.to_owned())).or_default() += jobs;
    }

    /// Admits one new job of `user` of type `job_type` (and counts it), or
    /// says which cap it would pass: the user's of its type first, then the
    /// user's, then the tenant's, so a person is told of their own cap
    /// before their tenant's.
    pub fn admit(&mut self, user: &str, job_type: &str, caps: TenantCaps, type_cap: Cap) -> Result<(), QuotaExceeded> {
        let of_type = self.user_types.get(&(user.to_owned(), job_type.to_owned())).copied().unwrap_or(0);
        let of_user = self.users.get(user).copied().unwrap_or(0);
        for (scope, cap, count) in [
            (QuotaScope::UserJobType, type_cap, of_type),
            (QuotaScope::User, caps.per_user, of_user),
            (QuotaScope::Tenant, caps.per_tenant, self.tenant),
        ] {
            if let Some(limit) = cap
                && count >= u64::from(limit)
            {
                return Err(QuotaExceeded { scope, limit, count });
            }
        }
        self.count(user, job_type, 1);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn caps(per_user: Cap, per_tenant: Cap) -> TenantCaps {
        TenantCaps { per_user, per_tenant }
    }

    #[test]
    fn the_narrowest_cap_is_named_first() {
        let mut usage = Usage::default();
        usage.count("alice", "export", 2);
        let refused = usage.admit("alice", "export", caps(Some(2), Some(2)), Some(2)).unwrap_err();
        assert_eq!(refused, QuotaExceeded { scope: QuotaScope::UserJobType, limit: 2, count: 2 });
        let refused = usage.admit("alice", "noop", caps(Some(2), Some(2)), None).unwrap_err();
        assert_eq!(refused, QuotaExceeded { scope: QuotaScope::User, limit: 2, count: 2 });
        let refused = usage.admit("bob", "noop", caps(Some(2), Some(2)), None).unwrap_err();
        assert_eq!(refused, QuotaExceeded { scope: QuotaScope::Tenant, limit: 2, count: 2 });
        assert_eq!(usage.admit("bob", "noop", caps(Some(2), None), None), Ok(()));
    }

    #[test]
    fn an_override_replaces_only_the_caps_it_sets() {
        let quotas = Quotas { defaults: caps(Some(10), Some(100)), ..Quotas::off() };
        assert_eq!(quotas.for_tenant(None), caps(Some(10), Some(100)));
        assert_eq!(quotas.for_tenant(Some(caps(Some(0), None))), caps(Some(0), Some(100)));
        assert!(quotas.enforced());
        assert!(!Quotas::off().enforced());
    }

    proptest! {
        /// Whatever arrives, no cap is ever passed, and a job is refused only
        /// when one of its caps is reached.
        #[test]
        fn admitting_never_passes_a_cap(
            start in proptest::collection::vec((0..3usize, 0..2usize, 0..4u64), 0..6),
            arrivals in proptest::collection::vec((0..3usize, 0..2usize), 0..60),
            per_user in proptest::option::of(0..8u32),
            per_tenant in proptest::option::of(0..20u32),
            type_cap in proptest::option::of(0..5u32),
        ) {
            let (users, types) = (["a", "b", "c"], ["x", "y"]);
            let mut usage = Usage::default();
            let mut counts: HashMap<(usize, usize), u64> = HashMap::new();
            for (u, t, n) in start {
                usage.count(users[u], types[t], n);
                *counts.entry((u, t)).or_default() += n;
            }
            let before: u64 = counts.values().sum();
            let mut admitted_total = 0u64;
            for (u, t) in arrivals {
                let of_type = counts.get(&(u, t)).copied().unwrap_or(0);
                let of_user: u64 = counts.iter().filter(|((cu, _), _)| *cu == u).map(|(_, n)| n).sum();
                let of_tenant: u64 = counts.values().sum();
                // Only x has a cap per type.
                let cap_of_type = if t == 0 { type_cap } else { None };
                let full = |cap: Cap, n: u64| cap.is_some_and(|c| n >= u64::from(c));
                let should_refuse = full(cap_of_type, of_type) || full(per_user, of_user) || full(per_tenant, of_tenant);
                match usage.admit(users[u], types[t], caps(per_user, per_tenant), cap_of_type) {
                    Ok(()) => {
                        prop_assert!(!should_refuse);
                        *counts.entry((u, t)).or_default() += 1;
                        admitted_total += 1;
                    }
                    Err(refused) => {
                        prop_assert!(should_refuse);
                        prop_assert!(refused.count >= u64::from(refused.limit));
                    }
                }
            }
            // What was admitted stays within every cap that a job was admitted under.
            if let Some(cap) = per_tenant && admitted_total > 0 {
                prop_assert!(before + admitted_total <= u64::from(cap).max(before));
            }
        }
    }
}
