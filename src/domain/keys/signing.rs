//! HMAC-SHA256, the one way errand signs what it hands out and checks what
//! comes back: the links a completion email carries (job, unsubscribe,
//! schedule pause), the `local` storage backend's download URLs, webhook
//! deliveries (Standard Webhooks) and HTTP push requests.
//!
//! errand's own tokens sign a [`Label`] and length-prefixed fields
//! ([`SigningKey::sign_fields`]), so that no two uses or field lists sign
//! the same bytes. Webhooks and push sign the bytes their receivers' specs
//! name ([`SigningKey::sign_bytes`]), which errand cannot change.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// What a signature of errand's own is for. Each use signs under its own
/// label, so that a signature made for one never verifies for another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    /// A completion email's link to its job.
    JobLink,
    /// The one-click unsubscribe link (RFC 8058).
    Unsubscribe,
    /// A scheduled job's email's link that pauses its schedule.
    SchedulePause,
    /// A download URL of the `local` storage backend.
    LocalFile,
}

impl Label {
    /// The bytes signed ahead of the fields. Changing one invalidates every
    /// link of that kind already sent.
    fn bytes(self) -> &'static [u8] {
        match self {
            Self::JobLink => b"errand job link v1",
            Self::Unsubscribe => b"errand unsubscribe v1",
            Self::SchedulePause => b"errand schedule pause v1",
            // Signed with a key of its own (`storage.signing_key`), so it
            // needs no label; it has none, which keeps the URLs already out valid.
            Self::LocalFile => b"",
        }
    }
}

/// A secret key: cheap to keep, never printed.
#[derive(Clone)]
pub struct SigningKey(Vec<u8>);

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SigningKey(…)")
    }
}

impl SigningKey {
    pub fn new(key: impl Into<Vec<u8>>) -> Self {
        Self(key.into())
    }

    /// The signature of `fields` under `label`: each field length-prefixed.
    pub fn sign_fields(&self, label: Label, fields: &[&[u8]]) -> [u8; 32] {
        self.fields_mac(label, fields).finalize().into_bytes().into()
    }

    /// Whether `signature` is that of `fields` under `label` (in constant time).
    pub fn verifies_fields(&self, label: Label, fields: &[&[u8]], signature: &[u8]) -> bool {
        self.fields_mac(label, fields).verify_slice(signature).is_ok()
    }

    /// The signature of `parts` as one run of bytes, for a receiver's spec.
    pub fn sign_bytes(&self, parts: &[&[u8]]) -> [u8; 32] {
        let mut mac = self.mac();
        parts.iter().for_each(|part| mac.update(part));
        mac.finalize().into_bytes().into()
    }

    fn fields_mac(&self, label: Label, fields: &[&[u8]]) -> HmacSha256 {
        let mut mac = self.mac();
        mac.update(label.bytes());
        for field in fields {
            mac.update(&(field.len() as u64).to_be_bytes());
            mac.update(field);
        }
        mac
    }

    fn mac(&self) -> HmacSha256 {
        HmacSha256::new_from_slice(&self.0).expect("HMAC takes keys of any length")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_length_prefixed_and_labelled() {
        let key = SigningKey::new(b"k".to_vec());
        let signed = key.sign_fields(Label::JobLink, &[b"ab", b"c"]);
        assert!(key.verifies_fields(Label::JobLink, &[b"ab", b"c"], &signed));
        assert!(!key.verifies_fields(Label::JobLink, &[b"a", b"bc"], &signed));
        assert!(!key.verifies_fields(Label::Unsubscribe, &[b"ab", b"c"], &signed));
        assert!(!SigningKey::new(b"other".to_vec()).verifies_fields(Label::JobLink, &[b"ab", b"c"], &signed));
    }

    #[test]
    fn bytes_are_signed_as_given() {
        // printf 'a.b' | openssl dgst -sha256 -hmac k
        let signed = SigningKey::new(b"k".to_vec()).sign_bytes(&[b"a", b".", b"b"]);
        assert_eq!(hex::encode(signed), "8feeb85dfe0ee591173fea90b07283b4d9ef0081dedefd70c68351822acdd894");
        assert_ne!(signed, SigningKey::new(b"k".to_vec()).sign_bytes(&[b"a.c"]));
    }
}
