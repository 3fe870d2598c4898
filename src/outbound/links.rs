//! The signed links a completion email carries:
//!
//! * the job's, `<public_base_url>/links/jobs/<id>?tenant=&user=&expires=&sig=`.
//!   An email sits in an inbox for days, opened on a phone without errand's
//!   token: the link itself is the authorisation. It is bound to one job and
//!   its owner (an HMAC-SHA256 over the job id, tenant, user and expiry, with
//!   a key of its own, never the JWT secret) and valid for as long as the
//!   job's result is kept. It never is the download URL: opening it signs a
//!   fresh, short-lived one (see `http::links`).
//! * the unsubscribe link, `<public_base_url>/unsubscribe/<token>` (RFC 8058):
//!   the token names a tenant, a user and a notification category, signed
//!   with the same key under another label, and does not expire: an old
//!   email's unsubscribe must still work (see `http::unsubscribe`).
//! * the pause link of a job a schedule made,
//!   `<public_base_url>/schedules/pause/<token>`: the token names a tenant, a
//!   user and the schedule, signed under a label of its own, and does not
//!   expire either (see `http::schedule_pause`).

use crate::domain::signing::{Label, SigningKey};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use serde::Deserialize;

use crate::config::HttpUrl;
use crate::domain::{Caller, JobId, Locale, ScheduleId, TenantId, UserId};

/// Signs and checks job links.
#[derive(Clone)]
pub struct JobLinks {
    key: SigningKey,
    public_base_url: HttpUrl,
}

/// A link's query string, as received.
#[derive(Debug, Deserialize)]
pub struct LinkQuery {
    pub tenant: String,
    pub user: String,
    /// Seconds since the epoch.
    pub expires: i64,
    pub sig: String,
    /// The language of the email or push that carried it (a shipped locale's tag).
    #[serde(default)]
    pub lang: Option<String>,
}

/// Why a link was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    /// Altered, made with another key, or for another job or person.
    #[error("this link is not valid")]
    Invalid,
    #[error("this link has expired")]
    Expired,
}

/// Whom a valid link speaks for, and for which job.
#[derive(Debug)]
pub struct LinkHolder {
    pub job: JobId,
    pub caller: Caller,
}

/// Whom a valid unsubscribe link speaks for, and for which category.
#[derive(Debug)]
pub struct Unsubscriber {
    pub caller: Caller,
    pub category: String,
}

impl JobLinks {
    pub fn new(key: Vec<u8>, public_base_url: &HttpUrl) -> Self {
        Self { key: SigningKey::new(key), public_base_url: public_base_url.clone() }
    }

    /// The link to `job` of `tenant`'s `user`, valid until `expires_at`,
    /// whose page speaks `locale` (the email's or the push's language; not
    /// signed: changing it changes only the page's words).
    pub fn link(
        &self,
        job: JobId,
        tenant: &TenantId,
        user: &UserId,
        expires_at: DateTime<Utc>,
        locale: Locale,
    ) -> String {
        let expires = expires_at.timestamp();
        let sig = self.signature(&job.to_string(), tenant.as_str(), user.as_str(), expires);
        let query = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("tenant", tenant.as_str())
            .append_pair("user", user.as_str())
            .append_pair("expires", &expires.to_string())
            .append_pair("sig", &sig)
            .append_pair("lang", locale.as_str())
            .finish();
        self.public_base_url.join_path(&format!("/links/jobs/{job}?{query}"))
    }

    /// Checks a link to job `job` (the path segment, as received).
    pub fn verify(&self, job: &str, query: &LinkQuery, now: DateTime<Utc>) -> Result<LinkHolder, LinkError> {
        let sig = hex::decode(&query.sig).map_err(|_| LinkError::Invalid)?;
        let expires = query.expires.to_be_bytes();
        let fields = [job.as_bytes(), query.tenant.as_bytes(), query.user.as_bytes(), &expires];
        if !self.key.verifies_fields(Label::JobLink, &fields, &sig) {
            return Err(LinkError::Invalid);
        }
        if query.expires <= now.timestamp() {
            return Err(LinkError::Expired);
        }
        // Signed by errand, so these parse; refuse rather than trust if not.
        let job = uuid::Uuid::parse_str(job).map(JobId).map_err(|_| LinkError::Invalid)?;
        let tenant = TenantId::parse(query.tenant.clone()).map_err(|_| LinkError::Invalid)?;
        let user = UserId::parse(query.user.clone()).map_err(|_| LinkError::Invalid)?;
        Ok(LinkHolder { job, caller: Caller::named(tenant, user) })
    }

    /// The link that turns off `category`'s emails for `tenant`'s `user`.
    pub fn unsubscribe_link(&self, tenant: &TenantId, user: &UserId, category: &str) -> String {
        let token = self.token(Label::Unsubscribe, [tenant.as_str(), user.as_str(), category]);
        self.public_base_url.join_path(&format!("/unsubscribe/{token}"))
    }

    /// Checks an unsubscribe link's token (the path segment, as received).
    pub fn verify_unsubscribe(&self, token: &str) -> Result<Unsubscriber, LinkError> {
        let (caller, category) = self.verify_token(Label::Unsubscribe, token)?;
        Ok(Unsubscriber { caller, category })
    }

    /// The link that pauses `tenant`'s `user`'s schedule `schedule`.
    pub fn pause_link(&self, tenant: &TenantId, user: &UserId, schedule: ScheduleId) -> String {
        let token = self.token(Label::SchedulePause, [tenant.as_str(), user.as_str(), &schedule.to_string()]);
        self.public_base_url.join_path(&format!("/schedules/pause/{token}"))
    }

    /// Checks a pause link's token: whose schedule, and which.
    pub fn verify_pause(&self, token: &str) -> Result<(Caller, ScheduleId), LinkError> {
        let (caller, schedule) = self.verify_token(Label::SchedulePause, token)?;
        let schedule = uuid::Uuid::parse_str(&schedule).map(ScheduleId).map_err(|_| LinkError::Invalid)?;
        Ok((caller, schedule))
    }

    /// A token naming a tenant, a user and one more field, signed under `label`.
    fn token(&self, label: Label, fields: [&str; 3]) -> String {
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&fields).expect("strings serialise"));
        let sig = hex::encode(self.key.sign_fields(label, &fields.map(str::as_bytes)));
        format!("{payload}.{sig}")
    }

    /// Checks a token made by [`Self::token`] under `label`: whose, and its third field.
    fn verify_token(&self, label: Label, token: &str) -> Result<(Caller, String), LinkError> {
        let (payload, sig) = token.split_once('.').ok_or(LinkError::Invalid)?;
        let json = URL_SAFE_NO_PAD.decode(payload).map_err(|_| LinkError::Invalid)?;
        let [tenant, user, third]: [String; 3] = serde_json::from_slice(&json).map_err(|_| LinkError::Invalid)?;
        let sig = hex::decode(sig).map_err(|_| LinkError::Invalid)?;
        let fields = [tenant.as_bytes(), user.as_bytes(), third.as_bytes()];
        if !self.key.verifies_fields(label, &fields, &sig) {
            return Err(LinkError::Invalid);
        }
        let tenant = TenantId::parse(tenant).map_err(|_| LinkError::Invalid)?;
        let user = UserId::parse(user).map_err(|_| LinkError::Invalid)?;
        Ok((Caller::named(tenant, user), third))
    }

    fn signature(&self, job: &str, tenant: &str, user: &str, expires: i64) -> String {
        let expires = expires.to_be_bytes();
        hex::encode(
            self.key.sign_fields(Label::JobLink, &[job.as_bytes(), tenant.as_bytes(), user.as_bytes(), &expires]),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn links(key: &[u8]) -> JobLinks {
        JobLinks::new(key.to_vec(), &HttpUrl::parse("https://errand.example.com/app").unwrap())
    }

    fn query_of(link: &str) -> (String, LinkQuery) {
        let url = url::Url::parse(link).unwrap();
        let job = url.path().rsplit('/').next().unwrap().to_owned();
        let pairs: std::collections::HashMap<String, String> = url.query_pairs().into_owned().collect();
        let query = LinkQuery {
            tenant: pairs["tenant"].clone(),
            user: pairs["user"].clone(),
            expires: pairs["expires"].parse().unwrap(),
            sig: pairs["sig"].clone(),
            lang: pairs.get("lang").cloned(),
        };
        (job, query)
    }

    proptest! {
        #[test]
        fn a_link_opens_its_own_job_for_its_owner_and_nothing_else(
            tenant in "[a-z0-9&=?/ -]{1,20}", user in "[a-zA-Z0-9@.+ ]{1,20}", other in "[a-z]{1,8}",
            days in 1i64..400,
        ) {
            let (tenant_id, user_id) = (TenantId::parse(tenant.clone()).unwrap(), UserId::parse(user.clone()).unwrap());
            let job = JobId(uuid::Uuid::now_v7());
            let now = Utc::now();
            let link = links(b"k").link(job, &tenant_id, &user_id, now + chrono::Duration::days(days), Locale::ENGLISH);
            prop_assert!(link.starts_with("https://errand.example.com/app/links/jobs/"));
            let (path_job, query) = query_of(&link);
            let holder = links(b"k").verify(&path_job, &query, now).unwrap();
            prop_assert_eq!(holder.job, job);
            prop_assert_eq!(holder.caller.tenant.as_str(), tenant.as_str());
            prop_assert_eq!(holder.caller.user.as_str(), user.as_str());

            let other_job = uuid::Uuid::now_v7().to_string();
            prop_assert_eq!(links(b"k").verify(&other_job, &query, now).unwrap_err(), LinkError::Invalid);
            let foreign = LinkQuery { user: format!("{user}{other}"), ..query_of(&link).1 };
            prop_assert_eq!(links(b"k").verify(&path_job, &foreign, now).unwrap_err(), LinkError::Invalid);
            let prolonged = LinkQuery { expires: query.expires + 1, ..query_of(&link).1 };
            prop_assert_eq!(links(b"k").verify(&path_job, &prolonged, now).unwrap_err(), LinkError::Invalid);
            prop_assert_eq!(links(b"other key").verify(&path_job, &query, now).unwrap_err(), LinkError::Invalid);
            let later = now + chrono::Duration::days(days + 1);
            prop_assert_eq!(links(b"k").verify(&path_job, &query, later).unwrap_err(), LinkError::Expired);
        }
    }

    proptest! {
        #[test]
        fn an_unsubscribe_link_speaks_for_its_own_user_and_category_only(
            tenant in "[a-z0-9&=?/. -]{1,20}", user in "[a-zA-Z0-9@.+ ]{1,20}", category in "[a-z0-9_-]{1,20}",
        ) {
            let (tenant_id, user_id) = (TenantId::parse(tenant.clone()).unwrap(), UserId::parse(user.clone()).unwrap());
            let link = links(b"k").unsubscribe_link(&tenant_id, &user_id, &category);
            prop_assert!(link.starts_with("https://errand.example.com/app/unsubscribe/"));
            let token = link.rsplit('/').next().unwrap();
            prop_assert!(token.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)), "a clean path segment: {}", token);
            let holder = links(b"k").verify_unsubscribe(token).unwrap();
            prop_assert_eq!(holder.caller.tenant.as_str(), tenant.as_str());
            prop_assert_eq!(holder.caller.user.as_str(), user.as_str());
            prop_assert_eq!(holder.category, category.clone());

            prop_assert_eq!(links(b"other key").verify_unsubscribe(token).unwrap_err(), LinkError::Invalid);
            let other = links(b"k").unsubscribe_link(&tenant_id, &user_id, &format!("{category}x"));
            let (payload, _) = token.split_once('.').unwrap();
            let (_, other_sig) = other.rsplit('/').next().unwrap().split_once('.').unwrap();
            let swapped = format!("{payload}.{other_sig}");
            prop_assert_eq!(links(b"k").verify_unsubscribe(&swapped).unwrap_err(), LinkError::Invalid);
            // A token without its signature.
            prop_assert_eq!(links(b"k").verify_unsubscribe(payload).unwrap_err(), LinkError::Invalid);
            // Nor does an unsubscribe token pause anything.
            prop_assert_eq!(links(b"k").verify_pause(token).unwrap_err(), LinkError::Invalid);
        }
    }

    #[test]
    fn a_pause_link_speaks_for_its_own_user_and_schedule_only() {
        let (tenant, user) = (TenantId::parse("acme".to_owned()).unwrap(), UserId::parse("alice".to_owned()).unwrap());
        let schedule = ScheduleId(uuid::Uuid::now_v7());
        let link = links(b"k").pause_link(&tenant, &user, schedule);
        assert!(link.starts_with("https://errand.example.com/app/schedules/pause/"), "{link}");
        let token = link.rsplit('/').next().unwrap();
        let (caller, named) = links(b"k").verify_pause(token).unwrap();
        assert_eq!((caller.tenant.as_str(), caller.user.as_str(), named), ("acme", "alice", schedule));
        assert_eq!(links(b"other key").verify_pause(token).unwrap_err(), LinkError::Invalid);
        assert_eq!(links(b"k").verify_unsubscribe(token).unwrap_err(), LinkError::Invalid, "a pause is no unsubscribe");
    }
}
