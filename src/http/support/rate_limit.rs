//! Rate limits on the user routes: per user, per user's creates, and per
//! tenant, each a GCRA budget of requests a minute (`governor`) whose burst
//! is a few seconds' worth of it (`rate_limits.burst`: a flood gets that
//! much in at once, not a whole minute's), answered with the `RateLimit`
//! and `RateLimit-Policy` headers of the IETF httpapi draft
//! (draft-ietf-httpapi-ratelimit-headers: the policy is the burst over its
//! window, e.g. 600 a minute is `q=100;w=10`), and a 429 `rate_limited` past it.
//!
//! Across processes the budget is divided, not shared: each process allows
//! its share, the budget over the number of errand processes connected to
//! the database (counted every few seconds by their `application_name`, see
//! `Store::live_processes`). When requests spread over the processes (a load
//! balancer's round robin), the whole budget holds to within one process's
//! burst; when one user's requests all reach one process, they get that
//! process's share alone: stricter, never looser. Sharing state through
//! PostgreSQL would cost a write per request on the hot path, to count
//! requests that are meant to be cheap. When the number of processes
//! changes, the limiters start afresh (each key's budget full again).
//!
//! A client that comes back before the `Retry-After` it was given (a
//! runaway script's loop) is answered its next 429 only when that time has
//! come, at most [`HOLD_AT_MOST`] later: the wait is a timer, not work, and
//! a loop that ignores `Retry-After` then sends one request per connection
//! per wait instead of as many as two cores can refuse. A flood of 24 such
//! loops otherwise took the CPU its refusals cost from every other tenant
//! (BENCHMARKS, "Hostile tenants"). At most [`HELD_AT_MOST`] answers are
//! held at once; past that they go out at once. A client that waits as told
//! never meets a hold: its first refusal is answered at once.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, HttpRequest};
use governor::middleware::StateInformationMiddleware;
use governor::{DefaultKeyedRateLimiter, Quota};

use crate::domain::Caller;

/// The window every budget is configured over.
const MINUTE: Duration = Duration::from_secs(60);
/// The longest a refusal of a client that came back too soon is held.
pub const HOLD_AT_MOST: Duration = Duration::from_secs(10);
/// The most refusals one process holds at once.
const HELD_AT_MOST: usize = 10_000;

pub static RATE_LIMIT: HeaderName = HeaderName::from_static("ratelimit");
pub static RATE_LIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");

/// Requests a minute, per key (`None` is no limit), and how many seconds'
/// worth of them may be spent at once.
#[derive(Debug, Clone, Copy)]
pub struct Budgets {
    pub per_user: Option<u32>,
    pub creates_per_user: Option<u32>,
    pub per_tenant: Option<u32>,
    pub burst: Duration,
}

/// Which budget a request draws on besides the user's and the tenant's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spend {
    Request,
    /// `POST /jobs/{type}`, `POST /batches/{type}`: also the user's creates.
    Create,
}

impl Spend {
    /// A POST to the `/jobs/{id_or_type}` or `/batches/{id_or_type}`
    /// resource of `http::routes` is a create (a batch is one create: its
    /// children count against the quotas of unfinished jobs instead).
    pub fn of(req: &HttpRequest) -> Self {
        let creates = matches!(req.match_pattern().as_deref(), Some("/jobs/{id_or_type}" | "/batches/{id_or_type}"));
        if req.method() == actix_web::http::Method::POST && creates { Self::Create } else { Self::Request }
    }
}

/// One budget's standing after a request: what the `RateLimit` headers say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    /// The policy's name: `user`, `user_creates` or `tenant`.
    pub policy: &'static str,
    /// This process's burst: requests per `window` seconds.
    pub quota: u32,
    pub window: u64,
    pub remaining: u32,
    /// Seconds until the budget is whole again (or, refused, until one request passes).
    pub reset: u64,
}

impl Standing {
    /// `RateLimit-Policy: "user";q=100;w=10`
    pub fn policy_header(&self) -> HeaderValue {
        header(format!("\"{}\";q={};w={}", self.policy, self.quota, self.window))
    }

    /// `RateLimit: "user";r=98;t=1`
    pub fn limit_header(&self) -> HeaderValue {
        header(format!("\"{}\";r={};t={}", self.policy, self.remaining, self.reset))
    }
}

fn header(text: String) -> HeaderValue {
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// A request past a budget: the budget's standing (none remaining) and when to try again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("too many requests ({} in {} s at most, {}); try again in {} s", .standing.quota, .standing.window, policy_text(.standing.policy), .retry_after.as_secs().max(1))]
pub struct RateLimited {
    pub standing: Standing,
    /// From when the answer is sent (after `hold`).
    pub retry_after: Duration,
    /// How long the answer waits before it is sent: the caller came back
    /// before an earlier refusal's `Retry-After` (see the module doc).
    pub hold: Duration,
}

fn policy_text(policy: &str) -> &'static str {
    match policy {
        "user_creates" => "new jobs of one user",
        "tenant" => "of one organisation",
        _ => "of one user",
    }
}

type Keyed = DefaultKeyedRateLimiter<String, StateInformationMiddleware>;

/// One budget's limiter: its per-process rate, and its burst.
struct Limiter {
    policy: &'static str,
    /// Requests a minute.
    rate: u32,
    /// Requests at once: `rate` over the burst's `window` seconds.
    burst: u32,
    window: u64,
    keyed: Keyed,
    /// Refused keys, with when their `Retry-After` ends.
    refused: Mutex<HashMap<String, Instant>>,
}

impl Limiter {
    fn new(policy: &'static str, per_minute: Option<u32>, processes: u32, burst: Duration) -> Option<Self> {
        let rate = per_minute?.div_ceil(processes.max(1)).max(1);
        let window = burst.as_secs().clamp(1, MINUTE.as_secs());
        let at_once = u32::try_from((u64::from(rate) * window).div_ceil(MINUTE.as_secs())).unwrap_or(rate).max(1);
        let quota =
            Quota::per_minute(std::num::NonZeroU32::new(rate)?).allow_burst(std::num::NonZeroU32::new(at_once)?);
        let keyed = DefaultKeyedRateLimiter::keyed(quota).with_middleware::<StateInformationMiddleware>();
        Some(Self { policy, rate, burst: at_once, window, keyed, refused: Mutex::default() })
    }

    fn check(&self, key: &String) -> Result<Standing, RateLimited> {
        let per_request = MINUTE / self.rate;
        let standing = |remaining: u32, reset: u64| Standing {
            policy: self.policy,
            quota: self.burst,
            window: self.window,
            remaining,
            reset,
        };
        match self.keyed.check_key(key) {
            Ok(state) => {
                let remaining = state.remaining_burst_capacity();
                let reset = (per_request * (self.burst - remaining)).as_secs_f64().ceil() as u64;
                Ok(standing(remaining, reset))
            }
            Err(not_until) => {
                let retry_after =
                    not_until.wait_time_from(governor::clock::Clock::now(&governor::clock::DefaultClock::default()));
                let hold = self.came_back_too_soon(key, retry_after);
                let retry_after = retry_after.saturating_sub(hold);
                let reset = retry_after.as_secs_f64().ceil().max(1.0) as u64;
                Err(RateLimited { standing: standing(0, reset), retry_after, hold })
            }
        }
    }

    /// Records that `key` is told to wait `retry_after`; answers how long
    /// this refusal is held: until the end of an earlier refusal's wait, if
    /// the key came back before it (at most [`HOLD_AT_MOST`]).
    fn came_back_too_soon(&self, key: &str, retry_after: Duration) -> Duration {
        let now = Instant::now();
        let mut refused = self.refused.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match refused.insert(key.to_owned(), now + retry_after) {
            Some(told) if told > now => (told - now).min(HOLD_AT_MOST),
            _ => Duration::ZERO,
        }
    }

    fn forget_idle(&self) {
        self.keyed.retain_recent();
        self.keyed.shrink_to_fit();
        let now = Instant::now();
        let mut refused = self.refused.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        refused.retain(|_, until| *until > now);
        refused.shrink_to_fit();
    }
}

/// This process's limiters, for the processes it shares the budgets with.
struct Limiters {
    processes: u32,
    user: Option<Limiter>,
    creates: Option<Limiter>,
    tenant: Option<Limiter>,
}

impl Limiters {
    fn new(budgets: Budgets, processes: u32) -> Self {
        Self {
            processes,
            user: Limiter::new("user", budgets.per_user, processes, budgets.burst),
            creates: Limiter::new("user_creates", budgets.creates_per_user, processes, budgets.burst),
            tenant: Limiter::new("tenant", budgets.per_tenant, processes, budgets.burst),
        }
    }
}

/// The rate limits of one process: cheap to clone.
#[derive(Clone)]
pub struct RateLimits {
    budgets: Budgets,
    limiters: Arc<RwLock<Limiters>>,
    /// Refusals being held now (see the module doc).
    held: Arc<AtomicUsize>,
}

impl RateLimits {
    pub fn new(budgets: Budgets) -> Self {
        Self { budgets, limiters: Arc::new(RwLock::new(Limiters::new(budgets, 1))), held: Arc::default() }
    }

    /// Whether any budget is kept (else nothing is counted or shared).
    pub fn any(&self) -> bool {
        let b = &self.budgets;
        b.per_user.is_some() || b.creates_per_user.is_some() || b.per_tenant.is_some()
    }

    /// Divides the budgets among `processes` processes from now on.
    pub fn share_among(&self, processes: u32) {
        let processes = processes.max(1);
        let mut limiters = self.limiters.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        if limiters.processes != processes {
            tracing::info!(processes, "rate limits: budgets now divided among this many processes");
            *limiters = Limiters::new(self.budgets, processes);
        }
    }

    /// Forgets keys whose budgets are whole again (memory stays bounded by recent callers).
    pub fn forget_idle(&self) {
        let limiters = self.limiters.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        for limiter in [&limiters.user, &limiters.creates, &limiters.tenant].into_iter().flatten() {
            limiter.forget_idle();
        }
    }

    /// How long the answer to `refusal` waits (see the module doc), to be
    /// left on its request for [`headers`] to wait out.
    pub fn hold_for(&self, refusal: &RateLimited) -> Option<Hold> {
        (!refusal.hold.is_zero()).then(|| Hold { wait: refusal.hold, held: self.held.clone() })
    }

    /// Spends one request of `caller`'s budgets: the standing of the one
    /// nearest to its end, or the first one past it.
    pub fn spend(&self, caller: &Caller, spend: Spend) -> Result<Option<Standing>, RateLimited> {
        let limiters = self.limiters.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        let user_key = format!("{}\u{0}{}", caller.tenant, caller.user);
        let tenant_key = caller.tenant.to_string();
        let creates = if spend == Spend::Create { limiters.creates.as_ref() } else { None };
        let mut nearest: Option<Standing> = None;
        for (limiter, key) in
            [(limiters.user.as_ref(), &user_key), (creates, &user_key), (limiters.tenant.as_ref(), &tenant_key)]
        {
            let Some(limiter) = limiter else { continue };
            let standing = limiter.check(key)?;
            let fraction = |s: &Standing| f64::from(s.remaining) / f64::from(s.quota);
            if nearest.is_none_or(|n| fraction(&standing) < fraction(&n)) {
                nearest = Some(standing);
            }
        }
        Ok(nearest)
    }
}

/// A refusal's answer that waits before it is sent (see the module doc).
pub struct Hold {
    wait: Duration,
    held: Arc<AtomicUsize>,
}

impl Hold {
    /// Waits, unless [`HELD_AT_MOST`] answers are waiting already.
    async fn wait(self) {
        struct Slot(Arc<AtomicUsize>);
        impl Drop for Slot {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::Relaxed);
            }
        }
        let waiting = self.held.fetch_add(1, Ordering::Relaxed);
        let _slot = Slot(self.held);
        if waiting < HELD_AT_MOST {
            actix_web::rt::time::sleep(self.wait).await;
        }
    }
}

/// Adds the `RateLimit` and `RateLimit-Policy` headers of the budget a
/// request spent (the Caller extractor leaves its [`Standing`] on the
/// request), and holds a refusal's answer as its [`Hold`] says.
pub async fn headers(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let mut response = next.call(req).await?;
    let hold = response.request().extensions_mut().remove::<Hold>();
    if let Some(hold) = hold {
        hold.wait().await;
    }
    let standing = response.request().extensions().get::<Standing>().copied();
    if let Some(standing) = standing {
        let headers = response.headers_mut();
        headers.insert(RATE_LIMIT_POLICY.clone(), standing.policy_header());
        headers.insert(RATE_LIMIT.clone(), standing.limit_header());
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{TenantId, UserId};

    fn caller(tenant: &str, user: &str) -> Caller {
        Caller {
            tenant: TenantId::parse(tenant).unwrap(),
            user: UserId::parse(user).unwrap(),
            email: None,
            zoneinfo: None,
            locale: crate::domain::Locale::default(),
            acted_by: None,
        }
    }

    #[test]
    fn a_budget_counts_down_then_refuses_and_others_are_untouched() {
        let limits = RateLimits::new(Budgets {
            per_user: Some(3),
            creates_per_user: Some(2),
            per_tenant: Some(100),
            burst: MINUTE,
        });
        let alice = caller("acme", "alice");
        let remaining: Vec<u32> =
            (0..3).map(|_| limits.spend(&alice, Spend::Request).unwrap().unwrap().remaining).collect();
        assert_eq!(remaining, [2, 1, 0]);
        let refused = limits.spend(&alice, Spend::Request).unwrap_err();
        assert_eq!((refused.standing.policy, refused.standing.remaining), ("user", 0));
        assert!(refused.retry_after > Duration::ZERO && refused.retry_after <= Duration::from_secs(20));
        let bob = caller("acme", "bob");
        assert_eq!(limits.spend(&bob, Spend::Create).unwrap().unwrap().policy, "user_creates");
    }

    #[test]
    fn a_caller_back_before_its_retry_after_is_held_until_then_and_no_one_else_is() {
        let burst = Duration::from_secs(1);
        let limits = RateLimits::new(Budgets { per_user: Some(60), creates_per_user: None, per_tenant: None, burst });
        let alice = caller("acme", "alice");
        limits.spend(&alice, Spend::Request).unwrap();
        let first = limits.spend(&alice, Spend::Request).unwrap_err();
        assert_eq!(first.hold, Duration::ZERO, "a first refusal is answered at once");
        let again = limits.spend(&alice, Spend::Request).unwrap_err();
        assert!(again.hold > Duration::ZERO && again.hold <= first.retry_after, "{again:?} after {first:?}");
        assert!(again.retry_after < first.retry_after, "told from when it is answered: {again:?}");
        limits.spend(&caller("acme", "bob"), Spend::Request).unwrap();
        // Once the wait told has passed, a refusal is a first one again.
        std::thread::sleep(first.retry_after);
        limits.spend(&alice, Spend::Request).unwrap();
        assert_eq!(limits.spend(&alice, Spend::Request).unwrap_err().hold, Duration::ZERO);
    }

    #[test]
    fn the_budget_is_divided_among_processes() {
        let limits =
            RateLimits::new(Budgets { per_user: Some(10), creates_per_user: None, per_tenant: None, burst: MINUTE });
        limits.share_among(4);
        let standing = limits.spend(&caller("acme", "alice"), Spend::Request).unwrap().unwrap();
        assert_eq!((standing.quota, standing.remaining), (3, 2));
        assert_eq!(standing.policy_header(), "\"user\";q=3;w=60");
    }

    #[test]
    fn a_burst_is_its_seconds_worth_of_the_budget() {
        let burst = Duration::from_secs(10);
        let limits = RateLimits::new(Budgets { per_user: Some(600), creates_per_user: None, per_tenant: None, burst });
        let alice = caller("acme", "alice");
        let first = limits.spend(&alice, Spend::Request).unwrap().unwrap();
        assert_eq!((first.quota, first.window, first.remaining), (100, 10, 99));
        assert_eq!(first.policy_header(), "\"user\";q=100;w=10");
        let passed = (0..200).filter(|_| limits.spend(&alice, Spend::Request).is_ok()).count();
        assert!((99..=101).contains(&passed), "a burst of 100, give or take the time the loop took: {passed}");
    }

    #[test]
    fn no_budget_no_headers() {
        let limits =
            RateLimits::new(Budgets { per_user: None, creates_per_user: None, per_tenant: None, burst: MINUTE });
        assert_eq!(limits.spend(&caller("acme", "alice"), Spend::Create), Ok(None));
    }
}
