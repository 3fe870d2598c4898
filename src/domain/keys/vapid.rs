//! errand's VAPID key (RFC 8292): what identifies errand to browsers' push
//! services when it sends Web Push messages. The pair is the configuration's
//! (`[push] vapid_public_key`, `vapid_private_key`; `errand push keys` makes
//! one); browsers subscribe with the public key. The token is a JWT made by
//! `jsonwebtoken`; the key pair is ring's.

use base64::Engine;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use ring::rand::SystemRandom;
use ring::signature;
use url::Url;

/// Why a key could not be read, or a token signed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VapidError {
    #[error("must be a P-256 public key: 65 bytes, base64url")]
    PublicKey,
    #[error("must be a P-256 private key: 32 bytes, base64url")]
    PrivateKey,
    #[error("is not the private key of vapid_public_key")]
    NotAPair,
    #[error("must be a mailto: or https: URL (RFC 8292)")]
    Subject,
    #[error("the VAPID token could not be signed: {0}")]
    Signing(String),
}

/// The bytes of base64url text, padded or not (browsers and libraries
/// differ): keys as Web Push writes them.
pub fn base64url_bytes(text: &str) -> Option<Vec<u8>> {
    let text = text.trim();
    URL_SAFE_NO_PAD.decode(text.trim_end_matches('=')).ok().or_else(|| URL_SAFE.decode(text).ok())
}

/// The PKCS#8 document ring writes for a P-256 key, around its private
/// scalar and public point: errand keeps the raw forms (what `web-push`
/// libraries print and take) and makes the document from them.
const PKCS8_BEFORE_SCALAR: [u8; 36] = [
    0x30, 0x81, 0x87, 0x02, 0x01, 0x00, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08,
    0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x04, 0x6d, 0x30, 0x6b, 0x02, 0x01, 0x01, 0x04, 0x20,
];
const PKCS8_BEFORE_POINT: [u8; 5] = [0xa1, 0x44, 0x03, 0x42, 0x00];
const SCALAR_LEN: usize = 32;
const POINT_LEN: usize = 65;

fn pkcs8(scalar: &[u8], point: &[u8]) -> Vec<u8> {
    [&PKCS8_BEFORE_SCALAR[..], scalar, &PKCS8_BEFORE_POINT[..], point].concat()
}

/// errand's VAPID key pair and the contact it gives push services.
#[derive(Clone)]
pub struct VapidKey {
    /// The private key as PKCS#8, which the JWT signer takes.
    signing: jsonwebtoken::EncodingKey,
    /// The public key, base64url, as browsers subscribe with it.
    public: String,
    subject: String,
}

impl std::fmt::Debug for VapidKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VapidKey").field("public", &self.public).field("subject", &self.subject).finish()
    }
}

impl VapidKey {
    /// The pair from its base64url forms (the uncompressed public point, the
    /// private scalar), with `subject` (a `mailto:` or `https:` URL a push
    /// service may contact). Refused unless they are one P-256 pair.
    pub fn new(public: &str, private: &str, subject: &str) -> Result<Self, VapidError> {
        let point = base64url_bytes(public).filter(|p| p.len() == POINT_LEN && p[0] == 4);
        let point = point.ok_or(VapidError::PublicKey)?;
        let scalar = base64url_bytes(private).filter(|s| s.len() == SCALAR_LEN).ok_or(VapidError::PrivateKey)?;
        let document = pkcs8(&scalar, &point);
        signature::EcdsaKeyPair::from_pkcs8(
            &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            &document,
            &SystemRandom::new(),
        )
        .map_err(|_| VapidError::NotAPair)?;
        let subject_ok = subject.starts_with("mailto:") || Url::parse(subject).is_ok_and(|u| u.scheme() == "https");
        if !subject_ok {
            return Err(VapidError::Subject);
        }
        Ok(Self {
            signing: jsonwebtoken::EncodingKey::from_ec_der(&document),
            public: URL_SAFE_NO_PAD.encode(&point),
            subject: subject.to_owned(),
        })
    }

    /// A new pair: (public, private), base64url.
    pub fn generate() -> Result<(String, String), VapidError> {
        let rng = SystemRandom::new();
        let failed = |_| VapidError::Signing("no key pair could be generated".into());
        let document = signature::EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(failed)?;
        let bytes = document.as_ref();
        let scalar_at = PKCS8_BEFORE_SCALAR.len();
        let point_at = scalar_at + SCALAR_LEN + PKCS8_BEFORE_POINT.len();
        // The document is ring's own template; read back what it holds.
        if bytes.len() != point_at + POINT_LEN || bytes[..scalar_at] != PKCS8_BEFORE_SCALAR {
            return Err(VapidError::Signing("ring wrote an unexpected key document".into()));
        }
        let (scalar, point) = (&bytes[scalar_at..scalar_at + SCALAR_LEN], &bytes[point_at..]);
        Ok((URL_SAFE_NO_PAD.encode(point), URL_SAFE_NO_PAD.encode(scalar)))
    }

    /// The public key browsers subscribe with (`applicationServerKey`).
    pub fn public_key(&self) -> &str {
        &self.public
    }

    /// The `Authorization` header for a message to `endpoint` (RFC 8292):
    /// a token for the push service's origin, valid 12 hours from `now`
    /// (seconds since the epoch; at most 24 hours are allowed).
    pub fn authorization(&self, endpoint: &Url, now: u64) -> Result<String, VapidError> {
        #[derive(serde::Serialize)]
        struct Claims<'a> {
            aud: &'a str,
            exp: u64,
            sub: &'a str,
        }
        let origin = endpoint.origin().ascii_serialization();
        let claims = Claims { aud: &origin, exp: now + 12 * 3600, sub: &self.subject };
        let header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
        let token =
            jsonwebtoken::encode(&header, &claims, &self.signing).map_err(|e| VapidError::Signing(e.to_string()))?;
        Ok(format!("vapid t={token}, k={}", self.public))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_pair_is_accepted_and_another_s_private_key_is_not() {
        let (public, private) = VapidKey::generate().unwrap();
        let key = VapidKey::new(&public, &private, "mailto:ops@example.com").unwrap();
        assert_eq!(key.public_key(), public);
        let (_, other_private) = VapidKey::generate().unwrap();
        let mismatch = VapidKey::new(&public, &other_private, "mailto:ops@example.com").unwrap_err();
        assert_eq!(mismatch, VapidError::NotAPair);
        assert_eq!(VapidKey::new(&public, &private, "ops@example.com").unwrap_err(), VapidError::Subject);
        assert_eq!(VapidKey::new(&private, &private, "mailto:a@b.c").unwrap_err(), VapidError::PublicKey);
        assert_eq!(VapidKey::new(&public, &public, "mailto:a@b.c").unwrap_err(), VapidError::PrivateKey);
    }

    #[test]
    fn the_token_names_the_push_service_s_origin_and_the_key() {
        let (public, private) = VapidKey::generate().unwrap();
        let key = VapidKey::new(&public, &private, "https://errand.example.com").unwrap();
        let endpoint = Url::parse("https://fcm.googleapis.com/fcm/send/abc?x=1").unwrap();
        let header = key.authorization(&endpoint, 1_700_000_000).unwrap();
        let (token, k) = header.strip_prefix("vapid t=").unwrap().split_once(", k=").unwrap();
        assert_eq!(k, public);
        let claims = token.split('.').nth(1).unwrap();
        let claims: serde_json::Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).unwrap()).unwrap();
        assert_eq!(claims["aud"], "https://fcm.googleapis.com");
        assert_eq!(claims["exp"], 1_700_000_000 + 12 * 3600);
        assert_eq!(claims["sub"], "https://errand.example.com");
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
        validation.set_audience(&["https://fcm.googleapis.com"]);
        validation.validate_exp = false;
        let point = URL_SAFE_NO_PAD.decode(&public).unwrap();
        let (x, y) = (URL_SAFE_NO_PAD.encode(&point[1..33]), URL_SAFE_NO_PAD.encode(&point[33..]));
        let verifying = jsonwebtoken::DecodingKey::from_ec_components(&x, &y).unwrap();
        jsonwebtoken::decode::<serde_json::Value>(token, &verifying, &validation).unwrap();
    }
}
