//! `[push]`: Web Push to the devices people subscribe (`POST
//! /me/push-subscriptions`), identified to push services by errand's VAPID
//! key pair (`errand push keys` makes one).

use std::num::{NonZeroU32, NonZeroUsize};
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use serde_inline_default::serde_inline_default;

use super::values::duration_text;
use super::{ConfigError, invalid};
use crate::domain::RetryPolicy;
use crate::domain::keys::vapid::{VapidError, VapidKey};
use url::Url;

/// The browsers' push services (Chrome and other Chromium browsers, Firefox,
/// Safari, Edge): where endpoints may point unless `allow_hosts` says otherwise.
const PUSH_SERVICES: [&str; 5] = [
    "fcm.googleapis.com",
    "updates.push.services.mozilla.com",
    "web.push.apple.com",
    "*.push.apple.com",
    "*.notify.windows.com",
];

#[serde_inline_default]
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebPushSettings {
    /// Off: no subscriptions are taken, no messages written or sent.
    #[serde(default)]
    pub enabled: bool,
    /// errand's VAPID public key (base64url, 65 bytes): browsers subscribe with it.
    #[serde(default)]
    pub vapid_public_key: Option<String>,
    /// Its private key (base64url, 32 bytes). Changing the pair orphans
    /// every subscription: browsers must subscribe again.
    #[serde(default)]
    pub vapid_private_key: Option<SecretString>,
    /// Who push services may contact about errand's messages: `mailto:` or `https:`.
    #[serde(default)]
    pub subject: Option<String>,
    /// Push services' hosts endpoints may point at (`*.domain`: any host
    /// below it). The browsers' own by default.
    #[serde_inline_default(PUSH_SERVICES.iter().map(|host| (*host).to_owned()).collect())]
    pub allow_hosts: Vec<String>,
    /// Hosts of `allow_hosts` exempt from the outbound rules (HTTPS only,
    /// public addresses only): a push service on your own network, tests.
    #[serde(default)]
    pub private_hosts: Vec<String>,
    /// Devices one person may subscribe.
    #[serde_inline_default(NonZeroUsize::new(10).expect("not zero"))]
    pub max_subscriptions_per_user: NonZeroUsize,
    /// How long a push service keeps a message for a device that is offline.
    #[serde_inline_default(Duration::from_secs(24 * 3600))]
    #[serde(with = "duration_text")]
    pub ttl: Duration,
    /// How long one delivery attempt may take.
    #[serde_inline_default(Duration::from_secs(10))]
    #[serde(with = "duration_text")]
    pub timeout: Duration,
    /// Attempts of one message, the first included.
    #[serde_inline_default(NonZeroU32::new(8).expect("not zero"))]
    pub max_attempts: NonZeroU32,
    #[serde_inline_default(Duration::from_secs(5))]
    #[serde(with = "duration_text")]
    pub backoff_base: Duration,
    #[serde_inline_default(Duration::from_secs(600))]
    #[serde(with = "duration_text")]
    pub backoff_max: Duration,
    /// Backstop poll of the outbox (a local job end wakes the sender at once).
    #[serde_inline_default(Duration::from_secs(1))]
    #[serde(with = "duration_text")]
    pub poll_interval: Duration,
}

impl Default for WebPushSettings {
    fn default() -> Self {
        super::values::defaults()
    }
}

impl WebPushSettings {
    /// The retry policy of messages.
    pub fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy { max_attempts: self.max_attempts.get(), base: self.backoff_base, max: self.backoff_max }
    }

    /// The push services endpoints may point at.
    pub fn services(&self) -> PushServices {
        PushServices::new(self.allow_hosts.iter().cloned())
    }

    /// errand's VAPID key, when push is enabled; a missing or bad key names its setting.
    pub fn vapid(&self) -> Result<Option<VapidKey>, ConfigError> {
        if !self.enabled {
            return Ok(None);
        }
        let needed =
            |key: &str| invalid(format!("push.{key}"), "must be set when push.enabled (errand push keys makes a pair)");
        let public = self.vapid_public_key.as_deref().ok_or_else(|| needed("vapid_public_key"))?;
        let private = self.vapid_private_key.as_ref().ok_or_else(|| needed("vapid_private_key"))?;
        let subject = self
            .subject
            .as_deref()
            .ok_or_else(|| invalid("push.subject", "must be set when push.enabled: a mailto: or https: URL"))?;
        VapidKey::new(public, private.expose_secret(), subject).map(Some).map_err(|error| {
            let key = match error {
                VapidError::PublicKey => "push.vapid_public_key",
                VapidError::Subject => "push.subject",
                VapidError::PrivateKey | VapidError::NotAPair | VapidError::Signing(_) => "push.vapid_private_key",
            };
            invalid(key, error.to_string())
        })
    }

    /// Checks what the types cannot.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        self.vapid()?;
        let is_pattern = |host: &String| {
            let name = host.strip_prefix("*.").unwrap_or(host);
            !name.is_empty() && !name.contains(['/', '*', '@'])
        };
        let checks = [
            (
                self.allow_hosts.iter().all(is_pattern),
                "push.allow_hosts",
                "each must be a host name, or *. and a domain",
            ),
            (self.ttl >= Duration::from_secs(1), "push.ttl", "must be at least 1s"),
            (!self.timeout.is_zero(), "push.timeout", "must be more than zero"),
            (!self.poll_interval.is_zero(), "push.poll_interval", "must be more than zero"),
        ];
        match checks.into_iter().find(|(ok, _, _)| !ok) {
            Some((_, key, why)) => Err(invalid(key, why)),
            None => Ok(()),
        }
    }
}

/// The push services errand sends to (`[push] allow_hosts`): an endpoint on
/// any other host is refused when a device subscribes. A pattern is a host
/// name, or `*.` and a domain for any host below it.
#[derive(Debug, Clone)]
pub struct PushServices {
    patterns: Vec<String>,
}

impl PushServices {
    pub fn new(patterns: impl IntoIterator<Item = String>) -> Self {
        Self { patterns: patterns.into_iter().map(|p| p.to_ascii_lowercase()).collect() }
    }

    /// Whether `endpoint` is on one of the push services' hosts.
    pub fn allows(&self, endpoint: &Url) -> bool {
        let Some(host) = endpoint.host_str().map(str::to_ascii_lowercase) else { return false };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        self.patterns.iter().any(|pattern| match pattern.strip_prefix("*.") {
            Some(domain) => host.strip_suffix(domain).is_some_and(|below| below.ends_with('.') && below.len() > 1),
            None => pattern.trim_start_matches('[').trim_end_matches(']') == host,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_or_bad_vapid_setting_is_named() {
        let named = |settings: &WebPushSettings| match settings.vapid() {
            Err(ConfigError::Invalid { key, .. }) => key,
            other => panic!("refused: {other:?}"),
        };
        let mut settings = WebPushSettings { enabled: true, ..WebPushSettings::default() };
        assert_eq!(named(&settings), "push.vapid_public_key");
        let (public, private) = VapidKey::generate().unwrap();
        let (_, other_private) = VapidKey::generate().unwrap();
        settings.vapid_public_key = Some(public.clone());
        settings.vapid_private_key = Some(other_private.into());
        settings.subject = Some("mailto:ops@example.com".into());
        assert_eq!(named(&settings), "push.vapid_private_key");
        settings.vapid_private_key = Some(private.into());
        settings.subject = Some("ops@example.com".into());
        assert_eq!(named(&settings), "push.subject");
        settings.subject = Some("https://errand.example.com".into());
        assert_eq!(settings.vapid().unwrap().unwrap().public_key(), public);
        assert!(WebPushSettings::default().vapid().unwrap().is_none(), "off: no key needed");
    }

    #[test]
    fn only_the_push_services_hosts_are_allowed() {
        let services = PushServices::new(["fcm.googleapis.com".into(), "*.notify.windows.com".into()]);
        let allows = |url: &str| services.allows(&Url::parse(url).unwrap());
        assert!(allows("https://fcm.googleapis.com/fcm/send/x"));
        assert!(allows("https://FCM.googleapis.com/fcm/send/x"));
        assert!(allows("https://wns2-par02p.notify.windows.com/w/?token=x"));
        assert!(!allows("https://notify.windows.com/w/"), "the wildcard is for hosts below the domain");
        assert!(!allows("https://evilnotify.windows.com.attacker.example/w/"));
        assert!(!allows("https://xnotify.windows.com/w/"));
        assert!(!allows("https://fcm.googleapis.com.attacker.example/"));
        assert!(!allows("https://127.0.0.1/"));
    }
}
