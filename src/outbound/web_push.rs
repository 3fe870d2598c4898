//! Web Push, errand's side of it: a message to a browser's push service
//! (RFC 8030), its payload encrypted to the subscription's keys as RFC 8291
//! specifies (`aes128gcm`, RFC 8188), and errand identified to the push
//! service by a VAPID token (RFC 8292). The keys are the configuration's
//! (`[push] vapid_public_key`, `vapid_private_key`; `errand push keys`
//! makes a pair); the browser subscribed with the public one.
//!
//! Cryptography is ring's (ECDH P-256, HKDF-SHA-256, AES-128-GCM, ECDSA
//! P-256), already in the tree through rustls; the VAPID token is a JWT made
//! by `jsonwebtoken`.

use base64::Engine;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use ring::rand::{SecureRandom, SystemRandom};
use ring::{aead, agreement, hkdf, signature};
use url::Url;

/// Why a key or a message could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebPushError {
    #[error("{0}")]
    InvalidKey(String),
    #[error("the payload could not be encrypted")]
    Encryption,
    #[error("the VAPID token could not be signed: {0}")]
    Signing(String),
}

/// The bytes of base64url text, padded or not (browsers and libraries differ).
fn decode(text: &str) -> Option<Vec<u8>> {
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
    pub fn new(public: &str, private: &str, subject: &str) -> Result<Self, WebPushError> {
        let invalid = |why: &str| WebPushError::InvalidKey(why.to_owned());
        let point = decode(public).filter(|p| p.len() == POINT_LEN && p[0] == 4);
        let point = point.ok_or_else(|| invalid("vapid_public_key must be a P-256 public key: 65 bytes, base64url"))?;
        let scalar = decode(private).filter(|s| s.len() == SCALAR_LEN);
        let scalar =
            scalar.ok_or_else(|| invalid("vapid_private_key must be a P-256 private key: 32 bytes, base64url"))?;
        let document = pkcs8(&scalar, &point);
        signature::EcdsaKeyPair::from_pkcs8(
            &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            &document,
            &SystemRandom::new(),
        )
        .map_err(|_| invalid("vapid_private_key is not the private key of vapid_public_key"))?;
        let subject_ok = subject.starts_with("mailto:") || Url::parse(subject).is_ok_and(|u| u.scheme() == "https");
        if !subject_ok {
            return Err(invalid("subject must be a mailto: or https: URL (RFC 8292)"));
        }
        Ok(Self {
            signing: jsonwebtoken::EncodingKey::from_ec_der(&document),
            public: URL_SAFE_NO_PAD.encode(&point),
            subject: subject.to_owned(),
        })
    }

    /// A new pair: (public, private), base64url.
    pub fn generate() -> Result<(String, String), WebPushError> {
        let rng = SystemRandom::new();
        let failed = |_| WebPushError::Signing("no key pair could be generated".into());
        let document = signature::EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(failed)?;
        let bytes = document.as_ref();
        let scalar_at = PKCS8_BEFORE_SCALAR.len();
        let point_at = scalar_at + SCALAR_LEN + PKCS8_BEFORE_POINT.len();
        // The document is ring's own template; read back what it holds.
        if bytes.len() != point_at + POINT_LEN || bytes[..scalar_at] != PKCS8_BEFORE_SCALAR {
            return Err(WebPushError::Signing("ring wrote an unexpected key document".into()));
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
    pub fn authorization(&self, endpoint: &Url, now: u64) -> Result<String, WebPushError> {
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
            jsonwebtoken::encode(&header, &claims, &self.signing).map_err(|e| WebPushError::Signing(e.to_string()))?;
        Ok(format!("vapid t={token}, k={}", self.public))
    }
}

/// A subscription's keys: the browser's P-256 public key and auth secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscriptionKeys {
    p256dh: Vec<u8>,
    auth: Vec<u8>,
}

impl SubscriptionKeys {
    /// The keys from their base64url forms, if they are keys a message can
    /// be encrypted to (a point on the curve; a 16-byte secret).
    pub fn parse(p256dh: &str, auth: &str) -> Result<Self, WebPushError> {
        let invalid = |why: &str| WebPushError::InvalidKey(why.to_owned());
        let p256dh = decode(p256dh)
            .filter(|p| p.len() == POINT_LEN && p[0] == 4)
            .ok_or_else(|| invalid("keys.p256dh must be a P-256 public key: 65 bytes, base64url"))?;
        let auth =
            decode(auth).filter(|a| a.len() == 16).ok_or_else(|| invalid("keys.auth must be 16 bytes, base64url"))?;
        let keys = Self { p256dh, auth };
        // A point off the curve fails the key agreement: find out now, not at the first message.
        keys.encrypt(b"").map_err(|_| invalid("keys.p256dh is not a point on the P-256 curve"))?;
        Ok(keys)
    }

    /// `payload` as the body of a push message to these keys (RFC 8291):
    /// one `aes128gcm` record under a key agreed with a fresh ephemeral key,
    /// which the header carries.
    pub fn encrypt(&self, payload: &[u8]) -> Result<Vec<u8>, WebPushError> {
        let failed = |_| WebPushError::Encryption;
        let rng = SystemRandom::new();
        let ephemeral = agreement::EphemeralPrivateKey::generate(&agreement::ECDH_P256, &rng).map_err(failed)?;
        let server_public = ephemeral.compute_public_key().map_err(failed)?;
        let peer = agreement::UnparsedPublicKey::new(&agreement::ECDH_P256, &self.p256dh);
        // IKM = HKDF(auth secret, ECDH secret, "WebPush: info" 0 ua_public as_public)
        let ikm = agreement::agree_ephemeral(ephemeral, &peer, |shared| {
            let info = [&b"WebPush: info\0"[..], &self.p256dh, server_public.as_ref()].concat();
            expand::<32>(&hkdf::Salt::new(hkdf::HKDF_SHA256, &self.auth).extract(shared), &info)
        })
        .map_err(failed)?
        .map_err(failed)?;
        let mut salt = [0u8; 16];
        rng.fill(&mut salt).map_err(failed)?;
        let prk = hkdf::Salt::new(hkdf::HKDF_SHA256, &salt).extract(&ikm);
        let content_key = expand::<16>(&prk, b"Content-Encoding: aes128gcm\0").map_err(failed)?;
        let nonce = expand::<12>(&prk, b"Content-Encoding: nonce\0").map_err(failed)?;
        let key = aead::UnboundKey::new(&aead::AES_128_GCM, &content_key).map_err(failed)?;
        // One record, the last: the payload, then its delimiter (2), no padding.
        let mut record = Vec::with_capacity(payload.len() + 1 + aead::AES_128_GCM.tag_len());
        record.extend_from_slice(payload);
        record.push(2);
        aead::LessSafeKey::new(key)
            .seal_in_place_append_tag(aead::Nonce::assume_unique_for_key(nonce), aead::Aad::empty(), &mut record)
            .map_err(failed)?;
        let key_id = server_public.as_ref();
        let mut body = Vec::with_capacity(16 + 4 + 1 + key_id.len() + record.len());
        body.extend_from_slice(&salt);
        body.extend_from_slice(&RECORD_SIZE.to_be_bytes());
        body.push(u8::try_from(key_id.len()).map_err(|_| WebPushError::Encryption)?);
        body.extend_from_slice(key_id);
        body.extend_from_slice(&record);
        Ok(body)
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

/// The record size the header declares: the most a push service must take
/// (RFC 8291 section 4), and more than any payload errand sends.
const RECORD_SIZE: u32 = 4096;

/// The largest payload one record holds (RFC 8291: 4096 bytes of record,
/// less the header, the tag and the delimiter).
pub const MAX_PAYLOAD: usize = 4096 - 86 - 16 - 1;

/// `N` bytes of HKDF-Expand(`prk`, `info`).
fn expand<const N: usize>(prk: &hkdf::Prk, info: &[u8]) -> Result<[u8; N], ring::error::Unspecified> {
    struct Len(usize);
    impl hkdf::KeyType for Len {
        fn len(&self) -> usize {
            self.0
        }
    }
    let mut out = [0u8; N];
    prk.expand(&[info], Len(N))?.fill(&mut out)?;
    Ok(out)
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
        assert!(mismatch.to_string().contains("not the private key"), "{mismatch}");
        let subject = VapidKey::new(&public, &private, "ops@example.com").unwrap_err();
        assert!(subject.to_string().contains("mailto:"), "{subject}");
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

    #[test]
    fn subscription_keys_must_be_a_point_on_the_curve_and_a_16_byte_secret() {
        let (browser_public, _) = VapidKey::generate().unwrap();
        let auth = URL_SAFE_NO_PAD.encode([7u8; 16]);
        let keys = SubscriptionKeys::parse(&browser_public, &auth).unwrap();
        let body = keys.encrypt(b"hello").unwrap();
        // salt, record size, key id length, key id, then the record: payload, delimiter, tag.
        assert_eq!(body.len(), 16 + 4 + 1 + 65 + 5 + 1 + 16);
        assert_eq!(&body[16..20], &4096u32.to_be_bytes());
        assert_eq!(body[20], 65);
        let mut off_curve = URL_SAFE_NO_PAD.decode(&browser_public).unwrap();
        off_curve[64] ^= 1;
        let refused = SubscriptionKeys::parse(&URL_SAFE_NO_PAD.encode(&off_curve), &auth).unwrap_err();
        assert!(refused.to_string().contains("curve"), "{refused}");
        assert!(SubscriptionKeys::parse(&browser_public, &URL_SAFE_NO_PAD.encode([7u8; 15])).is_err());
        assert!(SubscriptionKeys::parse("not base64!", &auth).is_err());
    }
}
