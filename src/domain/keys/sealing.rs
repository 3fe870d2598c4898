//! Envelope encryption of what errand keeps secret at rest: webhook
//! endpoints' signing secrets, and the params of job types that ask for it
//! (`encrypt = true`), kept as a JSON envelope ([`envelope`]). Each tenant has a data key of its own,
//! random, which seals its values (AES-256-GCM, a random nonce each, the
//! tenant and the value's purpose bound in as associated data, so a sealed
//! value moved to another tenant's row or column does not open). A data key
//! is kept only wrapped (sealed) by a key-encryption key from the
//! configuration (`encryption.keys`): the first wraps, every one unwraps, so
//! a new key is put first and `errand keys rotate` rewraps the data keys
//! under it. Deleting a tenant's wrapped data key makes everything sealed
//! under it unreadable, backups included (crypto-shredding).

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};

/// A key's length: AES-256.
pub const KEY_LEN: usize = 32;

/// The version of the key-encryption key derived from `auth.jwt_secret`
/// when `encryption.keys` names none (and kept last to unwrap with).
pub const DERIVED_VERSION: &str = "v0";

/// What a sealed value is, bound into its seal: a value sealed as one
/// purpose does not open as another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// A tenant's data key, wrapped by a key-encryption key.
    DataKey,
    /// A webhook endpoint's signing secret.
    WebhookSecret,
    /// A job's (or a schedule's) params, as JSON text.
    Params,
    /// What a job's result holds beside its file record, as JSON text.
    Result,
    /// A chunk of a result file on the local backend (`storage::sealed_file`).
    File,
}

impl Purpose {
    fn as_str(self) -> &'static str {
        match self {
            Self::DataKey => "errand data key",
            Self::WebhookSecret => "errand webhook secret",
            Self::Params => "errand params",
            Self::Result => "errand result",
            Self::File => "errand file",
        }
    }
}

/// The member of a JSON object that holds what is sealed of it, in a JSON
/// column: params, `{"errand:sealed": "<base64>"}`; a result, its file
/// record in clear beside it. Params and results from outside may not use
/// it (`JobType::validate_params`, `foreign_result_refusal`), so no value in
/// clear is ever taken for a sealed one.
pub const SEALED_MEMBER: &str = "errand:sealed";

/// The members of a result that are its file record (`storage::ResultFile`):
/// errand's own statements read them (the end's expiry, the pruner, an
/// erasure), so a sealed result keeps them in clear beside what it seals.
pub const FILE_RECORD: [&str; 7] =
    ["storage_key", "size_bytes", "row_count", "content_type", "file_name", "expires_at", "expired"];

/// `clear` (members kept in clear; none for params) with `sealed` beside them.
pub fn envelope(mut clear: serde_json::Map<String, serde_json::Value>, sealed: &[u8]) -> serde_json::Value {
    clear.insert(SEALED_MEMBER.to_owned(), serde_json::Value::String(STANDARD.encode(sealed)));
    serde_json::Value::Object(clear)
}

/// What `value` holds sealed, if it is an [`envelope`]: `Some(Err)` for one
/// whose content is not base64.
pub fn enveloped(value: &serde_json::Value) -> Option<Result<Vec<u8>, SealError>> {
    let text = value.as_object()?.get(SEALED_MEMBER)?.as_str()?;
    Some(STANDARD.decode(text).map_err(|_| SealError("a sealed value is not base64".into())))
}

/// An [`envelope`] with what it sealed (`opened`) put back: the members
/// kept in clear and, for an object, its members beside them.
pub fn unveiled(kept: serde_json::Value, opened: serde_json::Value) -> serde_json::Value {
    let serde_json::Value::Object(mut clear) = kept else { return opened };
    clear.remove(SEALED_MEMBER);
    match opened {
        _ if clear.is_empty() => opened,
        serde_json::Value::Object(members) => {
            for (name, value) in members {
                clear.entry(name).or_insert(value);
            }
            serde_json::Value::Object(clear)
        }
        other => other,
    }
}

/// A value that would not open: tampered with, of another tenant or
/// purpose, or sealed under a key this process does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealError(pub String);

impl fmt::Display for SealError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SealError {}

/// One AES-256-GCM key.
struct SealingKey(LessSafeKey);

impl SealingKey {
    fn new(bytes: &[u8]) -> Result<Self, SealError> {
        let key = UnboundKey::new(&AES_256_GCM, bytes).map_err(|_| SealError(format!("a key is {KEY_LEN} bytes")))?;
        Ok(Self(LessSafeKey::new(key)))
    }

    /// The nonce, then the ciphertext and its tag.
    fn seal(&self, plaintext: &[u8], tenant: &str, purpose: Purpose) -> Vec<u8> {
        let mut nonce = [0u8; NONCE_LEN];
        SystemRandom::new().fill(&mut nonce).expect("the system's random source works");
        let mut sealed = plaintext.to_vec();
        self.0
            .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), aad(tenant, purpose), &mut sealed)
            .expect("AES-GCM seals any length errand keeps");
        [nonce.as_slice(), &sealed].concat()
    }

    fn open(&self, sealed: &[u8], tenant: &str, purpose: Purpose) -> Result<Vec<u8>, SealError> {
        if sealed.len() < NONCE_LEN {
            return Err(SealError("a sealed value is too short".into()));
        }
        let (nonce, body) = sealed.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| SealError("a bad nonce".into()))?;
        let mut body = body.to_vec();
        let opened = self
            .0
            .open_in_place(nonce, aad(tenant, purpose), &mut body)
            .map_err(|_| SealError("a sealed value does not open under its key".into()))?;
        Ok(opened.to_vec())
    }
}

/// The tenant and the purpose, length-prefixed: what a seal is bound to.
fn aad(tenant: &str, purpose: Purpose) -> Aad<Vec<u8>> {
    let mut bound = Vec::with_capacity(tenant.len() + 40);
    for part in [purpose.as_str(), tenant] {
        bound.extend_from_slice(&(part.len() as u32).to_be_bytes());
        bound.extend_from_slice(part.as_bytes());
    }
    Aad::from(bound)
}

/// A tenant's data key, unwrapped.
pub struct DataKey {
    key: SealingKey,
    tenant: String,
}

impl DataKey {
    /// Seals `plaintext` as `purpose` of this key's tenant.
    pub fn seal(&self, plaintext: &[u8], purpose: Purpose) -> Vec<u8> {
        self.key.seal(plaintext, &self.tenant, purpose)
    }

    /// Opens what [`Self::seal`] sealed as `purpose`.
    pub fn open(&self, sealed: &[u8], purpose: Purpose) -> Result<Vec<u8>, SealError> {
        self.key.open(sealed, &self.tenant, purpose)
    }
}

/// A data key newly made for a tenant, and how it is kept: wrapped under the
/// key-encryption key `version`.
pub struct NewDataKey {
    pub key: DataKey,
    pub version: String,
    pub wrapped: Vec<u8>,
}

/// The key-encryption keys, newest (the one that wraps) first.
pub struct Keyring {
    keys: Vec<(String, SealingKey)>,
}

impl fmt::Debug for Keyring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let versions: Vec<&str> = self.keys.iter().map(|(v, _)| v.as_str()).collect();
        f.debug_struct("Keyring").field("versions", &versions).finish()
    }
}

impl Keyring {
    /// The configured keys (`"<version>:<base64 of 32 bytes>"`, the first
    /// wraps), then the one derived from `derive_from` (`auth.jwt_secret`),
    /// which wraps when none is configured. `Err` names the entry at fault.
    pub fn new(configured: &[String], derive_from: &[u8]) -> Result<Self, String> {
        let mut keys = Vec::with_capacity(configured.len() + 1);
        for (i, entry) in configured.iter().enumerate() {
            let fault = |why: &str| format!("entry {i}: {why} (\"<version>:<base64 of {KEY_LEN} bytes>\")");
            let (version, key) = entry.split_once(':').ok_or_else(|| fault("no version"))?;
            if version.is_empty() || version == DERIVED_VERSION || !version.chars().all(|c| c.is_ascii_alphanumeric()) {
                return Err(fault(&format!("a version is letters and digits, not {DERIVED_VERSION}")));
            }
            if keys.iter().any(|(v, _): &(String, SealingKey)| v == version) {
                return Err(fault("the version is named twice"));
            }
            let bytes = STANDARD.decode(key.trim()).map_err(|_| fault("not base64"))?;
            if bytes.len() != KEY_LEN {
                return Err(fault(&format!("{} bytes", bytes.len())));
            }
            keys.push((version.to_owned(), SealingKey::new(&bytes).map_err(|e| fault(&e.0))?));
        }
        let derived = ring::hkdf::Salt::new(ring::hkdf::HKDF_SHA256, b"errand encryption")
            .extract(derive_from)
            .expand(&[b"key-encryption key v0"], ring::hkdf::HKDF_SHA256)
            .and_then(|okm| {
                let mut bytes = [0u8; KEY_LEN];
                okm.fill(&mut bytes).map(|()| bytes)
            })
            .map_err(|_| "could not derive a key".to_owned())?;
        keys.push((DERIVED_VERSION.to_owned(), SealingKey::new(&derived).map_err(|e| e.0)?));
        Ok(Self { keys })
    }

    /// The version new data keys are wrapped under.
    pub fn current(&self) -> &str {
        &self.keys[0].0
    }

    /// A new random data key for `tenant`, wrapped under the current key.
    pub fn new_data_key(&self, tenant: &str) -> NewDataKey {
        let mut bytes = [0u8; KEY_LEN];
        SystemRandom::new().fill(&mut bytes).expect("the system's random source works");
        let (version, kek) = &self.keys[0];
        let wrapped = kek.seal(&bytes, tenant, Purpose::DataKey);
        let key = DataKey { key: SealingKey::new(&bytes).expect("32 bytes"), tenant: tenant.to_owned() };
        NewDataKey { key, version: version.clone(), wrapped }
    }

    /// `tenant`'s data key, wrapped under `version`.
    pub fn unwrap(&self, tenant: &str, version: &str, wrapped: &[u8]) -> Result<DataKey, SealError> {
        let bytes = self.unwrapped_bytes(tenant, version, wrapped)?;
        Ok(DataKey { key: SealingKey::new(&bytes)?, tenant: tenant.to_owned() })
    }

    /// `tenant`'s data key wrapped under `version`, wrapped again under the
    /// current key: `None` when it is already.
    pub fn rewrap(&self, tenant: &str, version: &str, wrapped: &[u8]) -> Result<Option<Vec<u8>>, SealError> {
        if version == self.current() {
            return Ok(None);
        }
        let bytes = self.unwrapped_bytes(tenant, version, wrapped)?;
        Ok(Some(self.keys[0].1.seal(&bytes, tenant, Purpose::DataKey)))
    }

    fn unwrapped_bytes(&self, tenant: &str, version: &str, wrapped: &[u8]) -> Result<Vec<u8>, SealError> {
        let (_, kek) = self
            .keys
            .iter()
            .find(|(v, _)| v == version)
            .ok_or_else(|| SealError(format!("no key-encryption key {version:?} is configured")))?;
        kek.open(wrapped, tenant, Purpose::DataKey)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_envelope_is_its_own_member_and_nothing_else_is_taken_for_one() {
        let ring = Keyring::new(&[], b"a secret of at least thirty-two bytes!!").unwrap();
        let acme = ring.new_data_key("acme").key;
        let sealed = acme.seal(br#"{"customer":"ada"}"#, Purpose::Params);
        let kept = envelope(serde_json::Map::new(), &sealed);
        assert!(!kept.to_string().contains("ada"));
        let opened = acme.open(&enveloped(&kept).unwrap().unwrap(), Purpose::Params).unwrap();
        assert_eq!(opened, br#"{"customer":"ada"}"#);
        assert!(acme.open(&sealed, Purpose::WebhookSecret).is_err(), "bound to its purpose");
        for clear in [
            serde_json::json!({"customer": "ada"}),
            serde_json::json!({SEALED_MEMBER: 3}),
            serde_json::json!("errand:sealed"),
        ] {
            assert!(enveloped(&clear).is_none(), "{clear}");
        }
        assert!(enveloped(&serde_json::json!({SEALED_MEMBER: "not base64!"})).unwrap().is_err());
        // A result: its file record in clear, the rest sealed beside it, and put back together.
        let file = serde_json::json!({"storage_key": "k", "size_bytes": 3});
        let kept = envelope(file.as_object().unwrap().clone(), b"sealed");
        assert_eq!((kept["storage_key"].as_str(), enveloped(&kept).unwrap().unwrap()), (Some("k"), b"sealed".to_vec()));
        let whole = unveiled(kept, serde_json::json!({"pages": 2}));
        assert_eq!(whole, serde_json::json!({"storage_key": "k", "size_bytes": 3, "pages": 2}));
        assert_eq!(unveiled(serde_json::json!({SEALED_MEMBER: "x"}), serde_json::json!(7)), serde_json::json!(7));
    }

    fn key_text(version: &str, byte: u8) -> String {
        format!("{version}:{}", STANDARD.encode([byte; KEY_LEN]))
    }

    #[test]
    fn a_value_opens_only_for_its_tenant_and_purpose() {
        let ring = Keyring::new(&[], b"a secret of at least thirty-two bytes!!").unwrap();
        assert_eq!(ring.current(), DERIVED_VERSION);
        let acme = ring.new_data_key("acme");
        let sealed = acme.key.seal(b"whsec_abc", Purpose::WebhookSecret);
        assert!(!sealed.windows(9).any(|w| w == b"whsec_abc"), "sealed, not in clear");
        assert_eq!(acme.key.open(&sealed, Purpose::WebhookSecret).unwrap(), b"whsec_abc");
        assert!(acme.key.open(&sealed, Purpose::DataKey).is_err(), "another purpose");
        let unwrapped = ring.unwrap("acme", &acme.version, &acme.wrapped).unwrap();
        assert_eq!(unwrapped.open(&sealed, Purpose::WebhookSecret).unwrap(), b"whsec_abc");
        assert!(ring.unwrap("globex", &acme.version, &acme.wrapped).is_err(), "another tenant's wrapping");
        let mut tampered = sealed.clone();
        tampered[NONCE_LEN] ^= 1;
        assert!(acme.key.open(&tampered, Purpose::WebhookSecret).is_err());
    }

    #[test]
    fn a_new_key_first_wraps_and_the_old_still_unwraps_until_rewrapped() {
        let secret = b"a secret of at least thirty-two bytes!!";
        let old = Keyring::new(&[key_text("v1", 1)], secret).unwrap();
        let made = old.new_data_key("acme");
        assert_eq!(made.version, "v1");
        let sealed = made.key.seal(b"s", Purpose::WebhookSecret);
        let both = Keyring::new(&[key_text("v2", 2), key_text("v1", 1)], secret).unwrap();
        assert_eq!(both.current(), "v2");
        let rewrapped = both.rewrap("acme", "v1", &made.wrapped).unwrap().expect("under v2 now");
        assert_eq!(both.rewrap("acme", "v2", &rewrapped).unwrap(), None, "already current");
        let new_only = Keyring::new(&[key_text("v2", 2)], secret).unwrap();
        assert!(new_only.unwrap("acme", "v1", &made.wrapped).is_err(), "v1 is gone");
        assert_eq!(
            new_only.unwrap("acme", "v2", &rewrapped).unwrap().open(&sealed, Purpose::WebhookSecret).unwrap(),
            b"s"
        );
    }

    #[test]
    fn a_bad_configured_key_is_named() {
        let secret = b"x";
        for (entry, says) in [
            ("nocolon".to_owned(), "entry 0: no version"),
            ("v1:not base64!".to_owned(), "not base64"),
            (format!("v1:{}", STANDARD.encode([1u8; 16])), "16 bytes"),
            (key_text("v0", 1), "not v0"),
        ] {
            let error = Keyring::new(&[entry], secret).unwrap_err();
            assert!(error.contains(says), "{error}");
        }
        assert!(Keyring::new(&[key_text("v1", 1), key_text("v1", 2)], secret).unwrap_err().contains("twice"));
    }
}
