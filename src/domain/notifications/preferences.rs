//! Notification preferences: which category each job type's ends belong
//! to, what each channel does until a user chooses, and which categories no
//! one can turn off. The rule that combines these with a user's choices
//! lives in the database (`errand_channels` in `migrations/V1__baseline.sql`),
//! where it is read in the statement that ends a job; this is the
//! configuration's side.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

/// A way a job's end reaches its owner that the owner can choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Channel {
    /// The feed and live streams.
    InApp,
    Email,
    /// Web Push to the devices the owner subscribed (offered only when
    /// `[push]` is enabled).
    Push,
}

impl Channel {
    pub const ALL: [Channel; 3] = [Channel::InApp, Channel::Email, Channel::Push];

    /// The channel's name in the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InApp => "in_app",
            Self::Email => "email",
            Self::Push => "push",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|channel| channel.as_str() == name)
    }
}

/// How a channel brings a category's ends to a person: at once, in their
/// digest (email only, where they set a digest time), or not at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    Instant,
    Digest,
    Off,
}

impl Delivery {
    /// A channel's setting as the API writes it: `true` or `"instant"`,
    /// `false` or `"off"`, `"digest"`.
    pub fn parse(value: &Value) -> Option<Self> {
        match value {
            Value::Bool(true) => Some(Self::Instant),
            Value::Bool(false) => Some(Self::Off),
            Value::String(name) => match name.as_str() {
                "instant" => Some(Self::Instant),
                "digest" => Some(Self::Digest),
                "off" => Some(Self::Off),
                _ => None,
            },
            _ => None,
        }
    }

    /// On at once, or off.
    pub fn on_or_off(on: bool) -> Self {
        if on { Self::Instant } else { Self::Off }
    }

    /// As the API answers it: `true`, `false` or `"digest"` (a client that
    /// knows no digest still reads the channel as on).
    pub fn as_json(self) -> Value {
        match self {
            Self::Instant => Value::Bool(true),
            Self::Off => Value::Bool(false),
            Self::Digest => Value::String("digest".into()),
        }
    }
}

/// The configured notification preferences' rules.
#[derive(Debug, Clone)]
pub struct NotificationRules {
    /// Each job type's category.
    categories: BTreeMap<String, String>,
    required: BTreeSet<String>,
    /// Whether this errand offers Web Push.
    push: bool,
    /// Whether ends reach people by email until they choose.
    email: bool,
    /// The same, as the database's `errand_channels` and `errand_category` take them.
    as_sql: Value,
}

impl NotificationRules {
    /// `categories`: each job type's category; `required`: the categories no
    /// one can turn off; `in_app`, `email`: each channel until a user
    /// chooses. Web Push is not offered until [`Self::with_push`].
    pub fn new(categories: BTreeMap<String, String>, required: BTreeSet<String>, in_app: bool, email: bool) -> Self {
        let as_sql = json!({ "categories": categories, "required": required, "in_app": in_app, "email": email });
        Self { categories, required, push: false, email, as_sql }
    }

    /// Whether ends reach people by email until they choose.
    pub fn email_default(&self) -> bool {
        self.email
    }

    /// Offers Web Push, on (`default`) for a subscribed device until its owner chooses.
    pub fn with_push(mut self, default: bool) -> Self {
        self.push = true;
        self.as_sql["push"] = Value::Bool(default);
        self
    }

    /// The channels people choose among here.
    pub fn channels(&self) -> impl Iterator<Item = Channel> + '_ {
        Channel::ALL.into_iter().filter(|channel| *channel != Channel::Push || self.push)
    }

    /// Every job type in its own category, every channel on, none required.
    pub fn everything_on() -> Self {
        Self::new(BTreeMap::new(), BTreeSet::new(), true, true)
    }

    /// The categories the configured job types use, in name order.
    pub fn categories(&self) -> BTreeSet<&str> {
        self.categories.values().map(String::as_str).collect()
    }

    /// The category of `job_type`'s ends: its own name unless configured
    /// (a type no longer configured included).
    pub fn category_of<'a>(&'a self, job_type: &'a str) -> &'a str {
        self.categories.get(job_type).map_or(job_type, String::as_str)
    }

    /// Whether no one can turn `category` off.
    pub fn is_required(&self, category: &str) -> bool {
        self.required.contains(category)
    }

    /// The rules as the database's functions take them.
    pub fn as_sql(&self) -> &Value {
        &self.as_sql
    }
}

impl Default for NotificationRules {
    fn default() -> Self {
        Self::everything_on()
    }
}

/// When a person's digest goes: at the start of every hour, or every day at
/// a local time; read on their zone's wall clock as a schedule's expression
/// is (daylight saving included, `domain::schedule`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DigestEvery {
    Hour,
    Day(chrono::NaiveTime),
}

impl DigestEvery {
    /// The next digest strictly after `now`, in `timezone` (IANA): `None`
    /// for a zone chrono-tz does not know (the API checked it).
    pub fn next_after(
        self,
        now: chrono::DateTime<chrono::Utc>,
        timezone: &str,
    ) -> Option<chrono::DateTime<chrono::Utc>> {
        use chrono::Timelike;
        let cron = match self {
            Self::Hour => "0 * * * *".to_owned(),
            Self::Day(at) => format!("{} {} * * *", at.minute(), at.hour()),
        };
        let recurrence = crate::domain::Recurrence::parse(&cron, timezone).ok()?;
        recurrence.first_after(now).map(|occurrence| occurrence.at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, NaiveTime, Utc};

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn a_daily_digest_keeps_its_local_time_across_a_change_of_clocks() {
        let eight = DigestEvery::Day(NaiveTime::from_hms_opt(8, 0, 0).unwrap());
        // 08:00 in Paris is 07:00 UTC in winter, 06:00 in summer.
        assert_eq!(eight.next_after(at("2026-03-28T07:00:00Z"), "Europe/Paris"), Some(at("2026-03-29T06:00:00Z")));
        assert_eq!(eight.next_after(at("2026-03-28T06:59:00Z"), "Europe/Paris"), Some(at("2026-03-28T07:00:00Z")));
        assert_eq!(
            DigestEvery::Hour.next_after(at("2026-07-01T10:00:00Z"), "Asia/Kolkata"),
            Some(at("2026-07-01T10:30:00Z"))
        );
        assert_eq!(eight.next_after(at("2026-07-01T10:00:00Z"), "Mars/Olympus"), None);
    }

    #[test]
    fn a_channel_s_setting_reads_as_the_api_writes_it() {
        for (value, delivery) in [
            (serde_json::json!(true), Some(Delivery::Instant)),
            (serde_json::json!("instant"), Some(Delivery::Instant)),
            (serde_json::json!(false), Some(Delivery::Off)),
            (serde_json::json!("off"), Some(Delivery::Off)),
            (serde_json::json!("digest"), Some(Delivery::Digest)),
            (serde_json::json!("weekly"), None),
            (serde_json::json!(1), None),
        ] {
            assert_eq!(Delivery::parse(&value), delivery, "{value}");
            if let Some(delivery) = delivery {
                assert_eq!(Delivery::parse(&delivery.as_json()), Some(delivery), "round trip");
            }
        }
    }
}
