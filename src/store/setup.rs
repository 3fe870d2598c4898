//! Making a [`Store`]: its pool (see `pool/`), and what the statements
//! that record and end jobs keep to (quotas, the email outbox, the
//! notification rules), set once at start-up.

use std::sync::Arc;

use deadpool_postgres::Pool;

use crate::config::postgres::{Connection, UrlError};
use crate::domain::{NotificationRules, Quotas};
use crate::store::queue::quota::BatchCaps;
use crate::store::{Endings, Store, pool};

impl Store {
    /// A pool of up to `size` connections to `url`, the database errand
    /// writes to: a connection to a server that no longer takes writes is
    /// discarded (`writable.rs`). Connects lazily; the connections do their
    /// I/O on the runtime this is called on (see `connect.rs`).
    pub fn connect(url: &str, size: usize) -> Result<Self, UrlError> {
        Self::new(url, size, true, tokio::runtime::Handle::try_current().ok())
    }

    /// [`Self::connect`] for a pool that only job handlers use (an export's
    /// source): its connections do their I/O on the handlers' runtime, which
    /// first asks for them, not on the actors' (an export streams its rows
    /// through it).
    pub fn connect_for_handlers(url: &str, size: usize) -> Result<Self, UrlError> {
        Self::new(url, size, true, None)
    }

    /// [`Self::connect_for_handlers`] for a database errand only reads (an
    /// export's source, which may be a standby).
    pub fn connect_for_reads(url: &str, size: usize) -> Result<Self, UrlError> {
        Self::new(url, size, false, None)
    }

    fn new(url: &str, size: usize, writes: bool, io_on: Option<tokio::runtime::Handle>) -> Result<Self, UrlError> {
        let (pool, target) = pool::build(url, size, writes, io_on)?;
        let quotas = Quotas::off();
        let sealer = crate::store::Sealer { pool: pool.clone(), keys: None, types: Arc::default() };
        Ok(Self {
            pool,
            endings: Arc::new(Endings::default()),
            batch_caps: Arc::new(BatchCaps::of(&quotas)),
            quotas: Arc::new(quotas),
            target: Arc::new(target),
            keys: None,
            sealer,
        })
    }

    /// Where this store's pool connects: for a connection outside the pool (the listener's).
    pub fn connection(&self) -> Arc<Connection> {
        self.target.clone()
    }

    /// Makes the statements that end jobs also queue their completion emails.
    pub fn with_email_outbox(mut self, enabled: bool) -> Self {
        Arc::make_mut(&mut self.endings).email_outbox = enabled;
        self
    }

    /// Makes the statements that end jobs also queue Web Push messages to
    /// their owners' subscribed devices.
    pub fn with_push_outbox(mut self, enabled: bool) -> Self {
        Arc::make_mut(&mut self.endings).push_outbox = enabled;
        self
    }

    /// Makes the statements that end jobs keep to `rules` and each owner's
    /// preferences (every channel on for everyone otherwise).
    pub fn with_notification_rules(mut self, rules: NotificationRules) -> Self {
        Arc::make_mut(&mut self.endings).rules = rules;
        self
    }

    /// Makes the statements that end attempts keep each type's breaker: its
    /// name and `breaker_after` (see `job_breakers` in the migrations).
    pub fn with_breakers(mut self, breakers: Vec<(String, u32)>) -> Self {
        let endings = Arc::make_mut(&mut self.endings);
        (endings.breaker_types, endings.breaker_after) =
            breakers.into_iter().map(|(name, after)| (name, i32::try_from(after).unwrap_or(i32::MAX))).unzip();
        self
    }

    /// The notification preferences' rules that job ends keep to.
    pub fn notification_rules(&self) -> &NotificationRules {
        &self.endings.rules
    }

    /// Makes the store seal secrets at rest with `ring` (see `webhooks/sealed.rs`).
    pub fn with_keyring(mut self, ring: crate::domain::sealing::Keyring) -> Self {
        self.keys = Some(Arc::new(crate::store::TenantKeys::new(ring)));
        self.sealer.keys = self.keys.clone();
        self
    }

    /// What seals secrets at rest, if this store was given a keyring.
    pub fn tenant_keys(&self) -> Option<&crate::store::TenantKeys> {
        self.keys.as_deref()
    }

    /// Makes the store keep the params and results of `types` sealed (`encrypt = true`).
    pub fn with_sealed_types(mut self, types: std::collections::HashSet<String>) -> Self {
        self.sealer.types = Arc::new(types);
        self
    }

    /// Which params and results are kept sealed, and with what keys.
    pub fn sealer(&self) -> &crate::store::Sealer {
        &self.sealer
    }

    /// Rewraps every data key under the current key-encryption key, and
    /// seals every webhook secret still in clear: `errand keys rotate`.
    /// Answers (data keys rewrapped, secrets sealed).
    pub async fn rotate_keys(&self) -> Result<(u64, u64), crate::store::StoreError> {
        let keys = self.keys.as_deref().ok_or_else(|| crate::store::StoreError::Corrupt("no keyring".into()))?;
        let rewrapped = keys.rewrap_all(&self.pool).await?;
        let sealed = crate::store::webhooks::sealed::seal_secrets_in_clear(keys, &self.pool).await?;
        Ok((rewrapped, sealed))
    }

    /// Makes every submission keep to `quotas` (none are kept otherwise).
    pub fn with_quotas(mut self, quotas: Quotas) -> Self {
        self.batch_caps = Arc::new(BatchCaps::of(&quotas));
        self.quotas = Arc::new(quotas);
        self
    }

    /// The quotas submissions keep to.
    pub fn quotas(&self) -> &Quotas {
        &self.quotas
    }

    /// The pool, for migrations and health checks.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }
}
