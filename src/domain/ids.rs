//! Newtype identifiers, so a tenant id can never be passed where a user id is meant.

use std::fmt;

use serde::Serialize;
use uuid::Uuid;

/// An identifier from a token claim that is empty or too long.
#[derive(Debug, thiserror::Error)]
#[error("{what} must be 1 to 255 characters, none of them NUL")]
pub struct InvalidId {
    what: &'static str,
}

macro_rules! text_id {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Accepts 1 to 255 characters, none of them NUL (PostgreSQL
            /// text cannot hold it, so such a name can never be stored).
            pub fn parse(raw: impl Into<String>) -> Result<Self, InvalidId> {
                let raw = raw.into();
                if raw.is_empty() || raw.len() > 255 || raw.contains('\0') {
                    return Err(InvalidId { what: $what });
                }
                Ok(Self(raw))
            }

            /// The identifier as stored.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

text_id!(
    /// The tenant (merchant) a job belongs to: the token's `tenant` claim.
    TenantId,
    "tenant"
);
text_id!(
    /// The user within a tenant: the token's `sub` claim.
    UserId,
    "user"
);
text_id!(
    /// A backend service that acts for a tenant's users: a service token's
    /// `sub`, or the `sub` of an RFC 8693 `act` claim.
    ServiceId,
    "service"
);

/// A job's id: a UUID v7, so ids sort by creation time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct JobId(pub Uuid);

impl JobId {
    /// A new time-ordered id.
    pub fn new() -> Self {
        Self(Uuid::now_v7())
    }
}

impl Default for JobId {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A batch's id: a UUID v7, as a job's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct BatchId(pub Uuid);

impl fmt::Display for BatchId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A schedule's id: a UUID v7, as a job's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct ScheduleId(pub Uuid);

impl fmt::Display for ScheduleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A notification's id: a UUID v7, so ids sort by creation time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct NotificationId(pub Uuid);

impl fmt::Display for NotificationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The fencing token of one claim of one job. Every write that ends or
/// extends an attempt names it, so a worker that lost its lease writes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LeaseId(pub Uuid);

/// The authenticated caller of an API request. Every read of jobs or
/// notifications goes through one, which is what makes tenant scope structural.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub tenant: TenantId,
    pub user: UserId,
    /// Where completion emails go; `None` means in-app only.
    pub email: Option<String>,
    /// The token's `zoneinfo` claim (OpenID Connect), when it names an IANA
    /// zone: the person's time zone until they set one.
    pub zoneinfo: Option<String>,
    /// The language errand speaks to them in: their token's locale claim,
    /// else their `Accept-Language`, else the default (recorded with what
    /// they make, see `Locale`). A caller that a link or a stream ticket
    /// names has English here: nothing is made in their name by those.
    pub locale: crate::domain::Locale,
    /// The backend service making this request for the person (a service
    /// token with `Errand-On-Behalf-Of`, or a token's RFC 8693 `act`
    /// claim); `None`: the person themselves. Recorded with the jobs and
    /// batches it makes, for the audit.
    pub acted_by: Option<ServiceId>,
}

impl Caller {
    /// The person a signed link or a stream ticket names: no email or zone
    /// (nothing is sent or dated in their name from those), English, and
    /// acting for themselves.
    pub fn named(tenant: TenantId, user: UserId) -> Self {
        Self { tenant, user, email: None, zoneinfo: None, locale: crate::domain::Locale::default(), acted_by: None }
    }
}

/// An operator: someone who runs errand, across tenants (a token whose
/// `scope` claim holds `operator`, or `operator:read` for one who may only
/// look). An operator is no user of any tenant: the user routes refuse
/// operator tokens, and the operator routes user tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operator {
    /// The token's `sub`, recorded with every action.
    pub name: UserId,
    /// `false` for a read-only operator (`operator:read`): every action is refused.
    pub may_act: bool,
    /// `true` with the `operator:sensitive` scope: the parts of jobs that
    /// their types redact (`redact` in config) are shown.
    pub sees_sensitive: bool,
}

/// Who a notification is for, as announced between processes: the first 8
/// bytes of sha256(tenant, 0x1f, user) in hex. A NOTIFY payload holds a few
/// hundred of them where it could hold only a handful of 255-byte names, and
/// names no tenant or user. Two owners sharing a tag only means a stream
/// wakes, rereads its own feed and finds nothing new. The SQL that announces
/// (in `store/finish.rs`) computes the same tag.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OwnerTag(String);

impl OwnerTag {
    /// The tag of `tenant`'s `user`.
    pub fn of(tenant: &TenantId, user: &UserId) -> Self {
        use sha2::{Digest, Sha256};
        let digest =
            Sha256::new().chain_update(tenant.as_str()).chain_update([0x1f]).chain_update(user.as_str()).finalize();
        Self(hex::encode(&digest[..8]))
    }

    /// The tag as announced.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A tag as read from an announcement; `None` unless 16 lower-case hex digits.
    pub fn parse(raw: &str) -> Option<Self> {
        (raw.len() == 16 && raw.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
            .then(|| Self(raw.to_owned()))
    }
}
