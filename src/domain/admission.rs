//! Admission keys: one unfinished job per resource. A job type may name,
//! by a template over the caller and the params (`"{user}:{params.report_id}"`),
//! what makes two of its jobs the same piece of work whoever clicked and
//! whatever their idempotency keys; while one such job is unfinished, a
//! second request for it is joined to it, refused, debounces it, or
//! supersedes it ([`OnConflict`]). The `Idempotency-Key` stays per intent
//! (one click, retried); the admission key is per resource.

use std::fmt;
use std::time::Duration;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// What a second request with the key of an unfinished job does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnConflict {
    /// It is answered with the unfinished job; nothing new is recorded.
    Join,
    /// It is refused (`409 admission_conflict`), naming the unfinished job.
    Reject,
    /// A new job is recorded, and the waiting or running one is cancelled.
    Supersede,
    /// The waiting job takes the request's params and starts `debounce`
    /// after it, never later than `max_delay` after it was first asked
    /// for. A job already running keeps running, and the request records a
    /// new job, debounced in its turn.
    Debounce { debounce: Duration, max_delay: Duration },
}

/// One part of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Tenant,
    User,
    Type,
    /// A field of the params, by its path (`params.a.b`: `["a", "b"]`).
    Param(Vec<String>),
}

/// A job type's admission key template, parsed when the configuration loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdmissionTemplate {
    text: String,
    parts: Vec<Part>,
}

/// Why a request has no admission key: a field its template names is
/// missing from its params, or is `null`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("params.{0} is required: this job type's admission key names it")]
pub struct MissingField(pub String);

/// A request's admission key: the values its type's template picks, hashed
/// (so that any value fits the index, and no two tuples of values are one
/// key: `("a:b", "c")` and `("a", "b:c")` differ).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdmissionKey(String);

impl AdmissionKey {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl AdmissionTemplate {
    /// Parses `text`: literal text and placeholders `{tenant}`, `{user}`,
    /// `{type}` and `{params.field}` (`{params.a.b}` for a nested one), at
    /// least one placeholder. Says what is wrong in words fit for a
    /// configuration error.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut parts = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            match rest.find(['{', '}']) {
                Some(at) if rest[at..].starts_with('}') => {
                    return Err(format!("{text:?} has a `}}` that closes no placeholder"));
                }
                Some(at) => {
                    if at > 0 {
                        parts.push(Part::Literal(rest[..at].to_owned()));
                    }
                    let close = rest[at..].find('}').ok_or_else(|| format!("{text:?} has an unclosed `{{`"))?;
                    parts.push(placeholder(&rest[at + 1..at + close], text)?);
                    rest = &rest[at + close + 1..];
                }
                None => {
                    parts.push(Part::Literal(rest.to_owned()));
                    rest = "";
                }
            }
        }
        if parts.iter().all(|part| matches!(part, Part::Literal(_))) {
            return Err(format!("{text:?} names no placeholder ({{tenant}}, {{user}}, {{type}}, {{params.field}})"));
        }
        Ok(Self { text: text.to_owned(), parts })
    }

    /// Whether every user's request may share a key (the template does not
    /// name `{user}`): a colleague's unfinished job then has the key too.
    pub fn spans_users(&self) -> bool {
        !self.parts.contains(&Part::User)
    }

    /// The key of a request of `job_type` by `user` of `tenant` with `params`.
    pub fn key(&self, tenant: &str, user: &str, job_type: &str, params: &Value) -> Result<AdmissionKey, MissingField> {
        let mut values = Vec::new();
        for part in &self.parts {
            values.push(match part {
                Part::Literal(_) => continue,
                Part::Tenant => Value::from(tenant),
                Part::User => Value::from(user),
                Part::Type => Value::from(job_type),
                Part::Param(path) => {
                    let value = path.iter().try_fold(params, |value, field| value.get(field));
                    match value {
                        Some(value) if !value.is_null() => value.clone(),
                        _ => return Err(MissingField(path.join("."))),
                    }
                }
            });
        }
        let digest = Sha256::digest(Value::Array(values).to_string().as_bytes());
        Ok(AdmissionKey(digest.iter().map(|byte| format!("{byte:02x}")).collect()))
    }
}

fn placeholder(name: &str, text: &str) -> Result<Part, String> {
    Ok(match name {
        "tenant" => Part::Tenant,
        "user" => Part::User,
        "type" => Part::Type,
        _ => match name.strip_prefix("params.") {
            Some(path) if !path.is_empty() && path.split('.').all(|field| !field.is_empty()) => {
                Part::Param(path.split('.').map(str::to_owned).collect())
            }
            _ => {
                return Err(format!(
                    "{text:?} names {{{name}}}: a placeholder is {{tenant}}, {{user}}, {{type}} or {{params.field}}"
                ));
            }
        },
    })
}

impl fmt::Display for AdmissionTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn key(template: &str, user: &str, params: Value) -> Result<AdmissionKey, MissingField> {
        AdmissionTemplate::parse(template).unwrap().key("acme", user, "report", &params)
    }

    #[test]
    fn a_key_is_the_values_the_template_picks() {
        let same = key("{user}:{params.report_id}", "alice", json!({"report_id": 7, "page": 1})).unwrap();
        assert_eq!(same, key("{user}:{params.report_id}", "alice", json!({"report_id": 7, "page": 2})).unwrap());
        assert_ne!(same, key("{user}:{params.report_id}", "bob", json!({"report_id": 7})).unwrap());
        assert_ne!(same, key("{user}:{params.report_id}", "alice", json!({"report_id": "7"})).unwrap());
        let nested = key("{params.filter.region}", "alice", json!({"filter": {"region": "eu"}})).unwrap();
        assert_eq!(nested, key("{params.filter.region}", "bob", json!({"filter": {"region": "eu", "x": 1}})).unwrap());
    }

    #[test]
    fn a_missing_or_null_field_is_named() {
        for params in [json!({}), json!({"report_id": null}), json!({"report": {"id": 1}})] {
            assert_eq!(key("{params.report_id}", "alice", params), Err(MissingField("report_id".into())));
        }
    }

    #[test]
    fn a_bad_template_says_what_is_wrong() {
        for (bad, says) in [
            ("report", "no placeholder"),
            ("{user", "unclosed"),
            ("user}", "closes no placeholder"),
            ("{name}", "{name}"),
            ("{params.}", "{params.}"),
            ("{params.a..b}", "{params.a..b}"),
        ] {
            let error = AdmissionTemplate::parse(bad).unwrap_err();
            assert!(error.contains(says), "{bad}: {error}");
        }
        assert!(AdmissionTemplate::parse("{params.report_id}").unwrap().spans_users());
        assert!(!AdmissionTemplate::parse("{user}/{params.report_id}").unwrap().spans_users());
    }

    proptest! {
        /// Values are keyed as a tuple: no split of one text into two
        /// values makes the key of another split.
        #[test]
        fn no_two_tuples_of_values_share_a_key(a in "[a-z:]{0,6}", b in "[a-z:]{0,6}", c in "[a-z:]{0,6}", d in "[a-z:]{0,6}") {
            prop_assume!((a.as_str(), b.as_str()) != (c.as_str(), d.as_str()));
            let first = key("{params.a}:{params.b}", "u", json!({"a": a, "b": b})).unwrap();
            let second = key("{params.a}:{params.b}", "u", json!({"a": c, "b": d})).unwrap();
            prop_assert_ne!(first, second);
        }
    }
}
