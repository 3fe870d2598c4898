//! Webhook signatures as Standard Webhooks specifies them
//! (<https://www.standardwebhooks.com>): an endpoint's secret is `whsec_`
//! and the base64 of its key; a delivery carries `webhook-id`,
//! `webhook-timestamp` (seconds) and `webhook-signature`, `v1,` and the
//! base64 of HMAC-SHA256 over `{id}.{timestamp}.{body}`. Receivers verify
//! with any Standard Webhooks library (the Python package's is tested
//! against errand's; see `clients/python/`).

use crate::domain::signing::SigningKey;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;

/// A secret's prefix.
pub const SECRET_PREFIX: &str = "whsec_";

/// The headers that sign one delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedHeaders {
    pub id: String,
    pub timestamp: String,
    pub signature: String,
}

/// A secret that is not `whsec_` and base64.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a webhook secret is whsec_ and the base64 of its key")]
pub struct InvalidSecret;

/// Signs `body`, sent as delivery `id` at `timestamp` (seconds since the
/// epoch), with `secret`.
pub fn sign(secret: &str, id: &str, timestamp: u64, body: &[u8]) -> Result<SignedHeaders, InvalidSecret> {
    let key = secret.strip_prefix(SECRET_PREFIX).ok_or(InvalidSecret)?;
    let key = STANDARD.decode(key).map_err(|_| InvalidSecret)?;
    let signed = SigningKey::new(key).sign_bytes(&[format!("{id}.{timestamp}.").as_bytes(), body]);
    Ok(SignedHeaders {
        id: id.to_owned(),
        timestamp: timestamp.to_string(),
        signature: format!("v1,{}", STANDARD.encode(signed)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the Standard Webhooks reference libraries' tests.
    #[test]
    fn signs_as_the_reference_example_says() {
        let signed = sign(
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            br#"{"test": 2432232314}"#,
        )
        .unwrap();
        assert_eq!(signed.signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        assert_eq!(signed.timestamp, "1614265330");
    }

    #[test]
    fn a_secret_must_be_whsec_and_base64() {
        assert_eq!(sign("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "m", 1, b"{}"), Err(InvalidSecret));
        assert_eq!(sign("whsec_!!", "m", 1, b"{}"), Err(InvalidSecret));
    }
}
