//! What makes two submissions "the same request": the client's idempotency key,
//! and a fingerprint of what was asked for.

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::ExportFormat;

/// A validated `Idempotency-Key`: 1 to 255 visible ASCII characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyKey(String);

/// Why a header value is not a usable idempotency key.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum InvalidIdempotencyKey {
    #[error("the Idempotency-Key header is required")]
    Missing,
    #[error("the Idempotency-Key must be 1 to 255 visible ASCII characters")]
    Malformed,
}

impl IdempotencyKey {
    /// Accepts 1 to 255 characters from `!` to `~` (no spaces, no control characters).
    pub fn parse(raw: &str) -> Result<Self, InvalidIdempotencyKey> {
        let visible = raw.bytes().all(|b| b.is_ascii_graphic());
        if raw.is_empty() || raw.len() > 255 || !visible {
            return Err(InvalidIdempotencyKey::Malformed);
        }
        Ok(Self(raw.to_owned()))
    }

    /// The key as the client sent it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// sha256 over the job type and the canonical JSON of the params.
///
/// Canonical means object keys sorted and no insignificant white space, so
/// `{"a":1,"b":2}` and `{"b":2, "a":1}` are the same request. Keys are sorted
/// here rather than trusting serde_json's map order, which a feature flag
/// anywhere in the dependency tree could change. Numbers are compared as
/// serde_json writes them: `1` and `1.0` differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint(pub [u8; 32]);

impl Fingerprint {
    /// Fingerprints a submission of `job_type` with `params`.
    pub fn of(job_type: &str, params: &Value) -> Self {
        Self::of_job(job_type, None, params)
    }

    /// Fingerprints a submission of `job_type` with `params`, written in
    /// `format` (an export's: the same params in another format are another
    /// request). A job of no format fingerprints as [`Fingerprint::of`].
    pub fn of_job(job_type: &str, format: Option<ExportFormat>, params: &Value) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(job_type.as_bytes());
        hasher.update([0]);
        // Canonical JSON begins with `{`, never `f`: no params hash as a format.
        if let Some(format) = format {
            hasher.update(b"format=");
            hasher.update(format.as_str().as_bytes());
            hasher.update([0]);
        }
        let mut canonical = Vec::with_capacity(128);
        write_canonical(params, &mut canonical);
        hasher.update(&canonical);
        Self(hasher.finalize().into())
    }

    /// Fingerprints a batch of `job_type` whose items fingerprint as
    /// `items`, in order: the same items in another order are another batch.
    /// The type is hashed apart from the items (a byte no type name holds
    /// between), so a batch never fingerprints as a single job.
    pub fn of_batch(job_type: &str, items: &[Fingerprint]) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(b"batch\0");
        hasher.update(job_type.as_bytes());
        hasher.update([0]);
        for item in items {
            hasher.update(item.0);
        }
        Self(hasher.finalize().into())
    }

    /// Fingerprints a schedule of `job_type` made by `request` as a whole
    /// (params, expression, time zone, end, policies): the same key sent
    /// with another schedule is refused.
    pub fn of_schedule(job_type: &str, request: &Value) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(b"schedule\0");
        hasher.update(job_type.as_bytes());
        hasher.update([0]);
        let mut canonical = Vec::with_capacity(256);
        write_canonical(request, &mut canonical);
        hasher.update(&canonical);
        Self(hasher.finalize().into())
    }
}

fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_scalar(&Value::String(key.clone()), out);
                out.push(b':');
                write_canonical(item, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        scalar => write_scalar(scalar, out),
    }
}

fn write_scalar(value: &Value, out: &mut Vec<u8>) {
    // Serialising a scalar Value into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{Map, json};

    #[test]
    fn keys_must_be_visible_ascii_of_bounded_length() {
        assert!(IdempotencyKey::parse("a").is_ok());
        assert!(IdempotencyKey::parse(&"k".repeat(255)).is_ok());
        assert_eq!(IdempotencyKey::parse(""), Err(InvalidIdempotencyKey::Malformed));
        assert_eq!(IdempotencyKey::parse(&"k".repeat(256)), Err(InvalidIdempotencyKey::Malformed));
        assert_eq!(IdempotencyKey::parse("has space"), Err(InvalidIdempotencyKey::Malformed));
        assert_eq!(IdempotencyKey::parse("tab\t"), Err(InvalidIdempotencyKey::Malformed));
        assert_eq!(IdempotencyKey::parse("é"), Err(InvalidIdempotencyKey::Malformed));
    }

    #[test]
    fn fingerprint_depends_on_type_and_values() {
        let params = json!({"ms": 5});
        assert_eq!(Fingerprint::of("sleep", &params), Fingerprint::of("sleep", &params));
        assert_ne!(Fingerprint::of("sleep", &params), Fingerprint::of("noop", &params));
        assert_ne!(Fingerprint::of("sleep", &params), Fingerprint::of("sleep", &json!({"ms": 6})));
        let csv = Fingerprint::of_job("export", Some(ExportFormat::Csv), &params);
        assert_ne!(csv, Fingerprint::of_job("export", Some(ExportFormat::Xlsx), &params));
        assert_ne!(csv, Fingerprint::of("export", &params));
        assert_eq!(Fingerprint::of_job("export", None, &params), Fingerprint::of("export", &params));
    }

    proptest! {
        #[test]
        fn fingerprint_ignores_key_order(entries in prop::collection::vec(("[a-z]{1,8}", any::<i64>()), 0..12)) {
            let mut forward = Map::new();
            for (k, v) in &entries {
                forward.insert(k.clone(), json!(v));
            }
            // Build the same object from text with the keys in reverse order.
            let reversed_text = format!(
                "{{{}}}",
                forward.iter().rev().map(|(k, v)| format!("{k:?}:{v}")).collect::<Vec<_>>().join(",")
            );
            let reversed: Value = serde_json::from_str(&reversed_text).unwrap();
            prop_assert_eq!(Fingerprint::of("t", &Value::Object(forward)), Fingerprint::of("t", &reversed));
        }

        #[test]
        fn any_visible_ascii_key_up_to_255_is_accepted(key in "[!-~]{1,255}") {
            let parsed = IdempotencyKey::parse(&key).unwrap();
            prop_assert_eq!(parsed.as_str(), key.as_str());
        }
    }
}
