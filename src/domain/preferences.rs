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
