//! Setting values that check themselves as they are read, so that a bad one
//! stops errand naming its key and no later code has to check it again.

use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Deserializer};

/// A secret of at least 32 bytes: a key for HS256 or HMAC-SHA256, where a
/// shorter one could be guessed. Redacted in `Debug`, zeroed when dropped.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "String")]
pub struct LongSecret(SecretString);

impl TryFrom<String> for LongSecret {
    type Error = String;

    fn try_from(secret: String) -> Result<Self, Self::Error> {
        if secret.len() < 32 {
            return Err("must be at least 32 bytes".into());
        }
        Ok(Self(secret.into()))
    }
}

impl ExposeSecret<str> for LongSecret {
    fn expose_secret(&self) -> &str {
        self.0.expose_secret()
    }
}

/// A PostgreSQL URL (or libpq key=value string) that parses. A secret: it
/// may carry a password.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "String")]
pub struct PostgresUrl(SecretString);

impl TryFrom<String> for PostgresUrl {
    type Error = String;

    fn try_from(url: String) -> Result<Self, Self::Error> {
        if url.trim().is_empty() {
            return Err("must not be empty".into());
        }
        crate::config::postgres::Connection::parse(&url).map_err(|e| e.to_string())?;
        Ok(Self(url.into()))
    }
}

impl ExposeSecret<str> for PostgresUrl {
    fn expose_secret(&self) -> &str {
        self.0.expose_secret()
    }
}

/// A cap on a count: a whole number, or `"unlimited"` for none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "CapText")]
pub struct CountCap(pub Option<u32>);

/// How a cap is written: a TOML integer, or text (`"unlimited"`, or digits
/// from an environment variable).
#[derive(Deserialize)]
#[serde(untagged)]
enum CapText {
    Number(i64),
    Text(String),
}

impl TryFrom<CapText> for CountCap {
    type Error = String;

    fn try_from(text: CapText) -> Result<Self, Self::Error> {
        let number = match text {
            CapText::Text(word) if word.trim() == "unlimited" => return Ok(Self(None)),
            CapText::Text(digits) => digits
                .trim()
                .parse::<i64>()
                .map_err(|_| format!("{digits:?} is neither a whole number nor \"unlimited\""))?,
            CapText::Number(n) => n,
        };
        u32::try_from(number).map(|n| Self(Some(n))).map_err(|_| format!("{number} is not between 0 and {}", u32::MAX))
    }
}

/// Durations written as text, e.g. `"30s"`, `"1m 30s"`, `"250ms"`.
pub(super) mod duration_text {
    use super::*;

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let text = String::deserialize(d)?;
        humantime::parse_duration(&text)
            .map_err(|e| serde::de::Error::custom(format!("{e} in {text:?} (e.g. \"30s\")")))
    }
}

/// An optional duration written as text (absent: `None`).
pub(super) mod optional_duration_text {
    use super::*;

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        super::duration_text::deserialize(d).map(Some)
    }
}

/// A duration written as text, or `"never"` (`None`).
pub(super) mod duration_or_never {
    use super::*;

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let text = String::deserialize(d)?;
        if text.trim() == "never" {
            return Ok(None);
        }
        humantime::parse_duration(&text)
            .map(Some)
            .map_err(|e| serde::de::Error::custom(format!("{e} in {text:?} (e.g. \"90d\", or \"never\")")))
    }
}

/// A section whose every field has a default, as if it were absent: its
/// defaults are written once, beside its fields (`#[serde_inline_default]`).
pub(super) fn defaults<T: serde::de::DeserializeOwned>() -> T {
    serde_json::from_value(serde_json::Value::Object(serde_json::Map::new()))
        .expect("every field of a section used as a whole default has a default")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_needs_32_bytes() {
        assert!(LongSecret::try_from("x".repeat(31)).is_err());
        assert_eq!(LongSecret::try_from("x".repeat(32)).unwrap().expose_secret(), "x".repeat(32));
        assert!(!format!("{:?}", LongSecret::try_from("y".repeat(40)).unwrap()).contains('y'), "redacted");
    }

    #[test]
    fn a_cap_is_a_whole_number_or_unlimited() {
        let cap = |json: serde_json::Value| serde_json::from_value::<CountCap>(json).map(|c| c.0).ok();
        assert_eq!(cap(serde_json::json!(1000)), Some(Some(1000)));
        assert_eq!(cap(serde_json::json!(0)), Some(Some(0)));
        assert_eq!(cap(serde_json::json!("unlimited")), Some(None));
        assert_eq!(cap(serde_json::json!("25")), Some(Some(25)));
        assert_eq!(cap(serde_json::json!(-1)), None);
        assert_eq!(cap(serde_json::json!("lots")), None);
    }

    #[test]
    fn a_postgres_url_must_parse() {
        assert!(PostgresUrl::try_from(" ".to_owned()).is_err());
        assert!(PostgresUrl::try_from("postgres://u@h:notaport/db".to_owned()).is_err());
        assert!(PostgresUrl::try_from("postgres://postgres@127.0.0.1:5432/errand".to_owned()).is_ok());
    }
}
