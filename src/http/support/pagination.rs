//! What the lists share: page sizes, opaque keyset cursors, timestamps.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use uuid::Uuid;

use crate::http::support::problem::AppError;

const DEFAULT_LIMIT: u32 = 20;
const MAX_LIMIT: u32 = 100;

/// The page size asked for: 1 to 100, 20 when not given.
pub fn limit(requested: Option<u32>) -> Result<u32, AppError> {
    let limit = requested.unwrap_or(DEFAULT_LIMIT);
    if (1..=MAX_LIMIT).contains(&limit) {
        Ok(limit)
    } else {
        Err(AppError::BadRequest(format!("limit must be between 1 and {MAX_LIMIT}")))
    }
}

/// A free-text filter named `name`: PostgreSQL's text cannot hold NUL, so
/// one that does could match nothing and is a 400, not a failed query.
pub fn text_filter(name: &str, value: Option<String>) -> Result<Option<String>, AppError> {
    match value {
        Some(v) if v.contains('\0') => Err(AppError::BadRequest(format!("{name} must not contain NUL"))),
        other => Ok(other),
    }
}

/// Cursors are opaque to clients: the last id of a page (a UUID v7), base64url.
pub fn encode_cursor(id: Uuid) -> String {
    URL_SAFE_NO_PAD.encode(id.as_bytes())
}

/// The inverse of [`encode_cursor`]; anything else is a 400.
pub fn decode_cursor(cursor: &str) -> Result<Uuid, AppError> {
    let invalid = || AppError::BadRequest("the cursor is not one this API returned".into());
    let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| invalid())?;
    Uuid::from_slice(&bytes).map_err(|_| invalid())
}

pub use crate::jobs::rfc3339;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn cursors_round_trip(bytes in any::<[u8; 16]>()) {
            let id = Uuid::from_bytes(bytes);
            prop_assert_eq!(decode_cursor(&encode_cursor(id)).unwrap(), id);
        }

        #[test]
        fn only_22_character_cursors_can_decode(text in ".{0,64}") {
            // 16 bytes are 22 characters of unpadded base64url.
            prop_assert!(decode_cursor(&text).is_err() || text.len() == 22);
        }

        #[test]
        fn limits_outside_1_to_100_are_refused(n in any::<u32>()) {
            prop_assert_eq!(limit(Some(n)).is_ok(), (1..=100).contains(&n));
        }
    }
}
