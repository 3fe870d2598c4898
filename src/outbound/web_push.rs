//! Web Push messages: the payload encrypted to a subscription's keys as
//! RFC 8291 specifies (`aes128gcm`, RFC 8188), for a browser's push service
//! (RFC 8030). errand's own key, which identifies it to push services
//! (VAPID), is `domain::keys::vapid`'s.
//!
//! Cryptography is ring's (ECDH P-256, HKDF-SHA-256, AES-128-GCM), already
//! in the tree through rustls.

use ring::rand::{SecureRandom, SystemRandom};
use ring::{aead, agreement, hkdf};

use crate::domain::keys::vapid::base64url_bytes as decode;

/// Why a subscription's keys or a message could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebPushError {
    #[error("{0}")]
    InvalidKey(String),
    #[error("the payload could not be encrypted")]
    Encryption,
}

/// A P-256 public key's length, uncompressed (`04`, x, y).
const POINT_LEN: usize = 65;

/// A subscription's keys: the browser's P-256 public key and auth secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscriptionKeys {
    p256dh: Vec<u8>,
    auth: Vec<u8>,
}

impl SubscriptionKeys {
    /// The keys from their base64url forms, if they are keys a message can
    /// be encrypted to (a point on the curve; a 16-byte secret): a device's,
    /// as it subscribes.
    pub fn parse(p256dh: &str, auth: &str) -> Result<Self, WebPushError> {
        let keys = Self::decode(p256dh, auth)?;
        // A point off the curve fails the key agreement: find out now, not at the first message.
        let off_curve = |_| WebPushError::InvalidKey("keys.p256dh is not a point on the P-256 curve".into());
        keys.encrypt(b"").map_err(off_curve)?;
        Ok(keys)
    }

    /// The keys from their base64url forms, of the right lengths, as stored
    /// once [`Self::parse`] took them: not agreed with again (a message's
    /// own agreement fails on a point off the curve anyway).
    pub fn decode(p256dh: &str, auth: &str) -> Result<Self, WebPushError> {
        let invalid = |why: &str| WebPushError::InvalidKey(why.to_owned());
        let p256dh = decode(p256dh)
            .filter(|p| p.len() == POINT_LEN && p[0] == 4)
            .ok_or_else(|| invalid("keys.p256dh must be a P-256 public key: 65 bytes, base64url"))?;
        let auth =
            decode(auth).filter(|a| a.len() == 16).ok_or_else(|| invalid("keys.auth must be 16 bytes, base64url"))?;
        Ok(Self { p256dh, auth })
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
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    use super::*;
    use crate::domain::keys::vapid::VapidKey;

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
