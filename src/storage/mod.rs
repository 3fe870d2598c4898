//! Where job results live, behind one interface: [`Storage`]. Objects are
//! written from a stream (never buffered whole), appear only once complete,
//! and are handed out as signed, expiring URLs generated fresh on every read.
//!
//! Backends: `local` (a directory; errand itself serves the signed URLs under
//! `/files/…`) and `s3` (presigned GETs).

mod local;
mod s3;
pub mod sealed_file;
mod upload;

use std::time::Duration;

use actix_web::web::Bytes;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures_util::Stream;

pub use local::{LocalStorage, SignedFileError, VerifiedFile};
pub use s3::S3Storage;
pub use upload::{Upload, UploadedPart};

use crate::domain::{JobId, LeaseId, TenantId};

/// Why storing or fetching an object failed.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("storage I/O failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("the data source failed while writing the object: {0}")]
    Source(String),
    #[error("object storage failed: {0}")]
    Remote(String),
}

/// A result's deterministic, tenant-prefixed key: a retried upload overwrites
/// what an earlier attempt may have left instead of leaking a second object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectKey(String);

impl ObjectKey {
    /// `tenants/<base64url(tenant)>/jobs/<job id>.<extension>`: tenant ids are
    /// free text, so they are encoded to stay one safe path segment.
    pub fn for_job(tenant: &TenantId, job: JobId, extension: &str) -> Self {
        Self(format!("tenants/{}/jobs/{job}.{extension}", URL_SAFE_NO_PAD.encode(tenant.as_str())))
    }

    /// A file an external worker uploaded for one attempt (lease): each
    /// attempt its own key, so a lost attempt's late upload, deleted when
    /// refused, never removes the file of the attempt that took over.
    pub fn for_upload(tenant: &TenantId, job: JobId, lease: LeaseId, extension: &str) -> Self {
        Self(format!("tenants/{}/jobs/{job}/{}.{extension}", URL_SAFE_NO_PAD.encode(tenant.as_str()), lease.0))
    }

    /// A key read back from a job's result.
    pub fn from_stored(key: String) -> Self {
        Self(key)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The file a job produced, as recorded in the job's `result`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ResultFile {
    pub storage_key: String,
    pub size_bytes: u64,
    pub row_count: u64,
    pub content_type: String,
    /// What a download is saved as, e.g. `export_sales_report-2026-11-30.csv`.
    pub file_name: String,
    /// When errand deletes the file.
    pub expires_at: chrono::DateTime<chrono::Utc>,
    /// Set once the file was deleted at the end of its retention.
    #[serde(default)]
    pub expired: bool,
}

impl ResultFile {
    /// The result file recorded in a job's `result`, if it has one.
    pub fn of(result: Option<&serde_json::Value>) -> Option<Self> {
        result.and_then(|value| <Self as serde::Deserialize>::deserialize(value).ok())
    }

    /// Whether the file is past its retention (deleted, or about to be).
    pub fn is_expired(&self) -> bool {
        self.expired || self.expires_at <= chrono::Utc::now()
    }
}

/// What was stored.
#[derive(Debug, Clone, Copy)]
pub struct StoredObject {
    pub size_bytes: u64,
}

/// The configured storage backend.
#[derive(Clone)]
pub enum Storage {
    Local(LocalStorage),
    S3(S3Storage),
}

impl Storage {
    /// Writes `body` under `key`, streaming; the object becomes visible only
    /// once complete, so a failed attempt leaves nothing behind.
    pub async fn put<S, E>(&self, key: &ObjectKey, content_type: &str, body: S) -> Result<StoredObject, StorageError>
    where
        S: Stream<Item = Result<Bytes, E>> + Unpin,
        E: std::fmt::Display,
    {
        match self {
            Self::Local(local) => local.put(key, content_type, body).await,
            Self::S3(s3) => s3.put(key, content_type, body).await,
        }
    }

    /// Deletes the object (absent objects are fine).
    pub async fn delete(&self, key: &ObjectKey) -> Result<(), StorageError> {
        match self {
            Self::Local(local) => local.delete(key).await,
            Self::S3(s3) => s3.delete(key).await,
        }
    }

    /// A URL that downloads the object as `file_name` until `expires_in` from now.
    pub async fn download_url(
        &self,
        key: &ObjectKey,
        file_name: &str,
        expires_in: Duration,
    ) -> Result<String, StorageError> {
        match self {
            Self::Local(local) => Ok(local.signed_url(key, file_name, expires_in)),
            Self::S3(s3) => s3.signed_url(key, file_name, expires_in).await,
        }
    }

    /// A URL that downloads a job's result `file` until `expires_in` from now.
    pub async fn result_url(&self, file: &ResultFile, expires_in: Duration) -> Result<String, StorageError> {
        self.download_url(&ObjectKey::from_stored(file.storage_key.clone()), &file.file_name, expires_in).await
    }

    /// A URL a client may PUT the object to itself, until `expires_in` from
    /// now: S3 only (`None` for `local`, whose uploads go through errand).
    pub async fn upload_url(&self, key: &ObjectKey, expires_in: Duration) -> Result<Option<String>, StorageError> {
        match self {
            Self::Local(_) => Ok(None),
            Self::S3(s3) => s3.upload_url(key, expires_in).await.map(Some),
        }
    }

    /// The size of an object a client uploaded, or `None` if it is not there.
    pub async fn size(&self, key: &ObjectKey) -> Result<Option<u64>, StorageError> {
        match self {
            Self::Local(local) => local.size(key).await,
            Self::S3(s3) => s3.size(key).await,
        }
    }

    /// The local backend, which errand serves itself.
    pub fn local(&self) -> Option<&LocalStorage> {
        match self {
            Self::Local(local) => Some(local),
            Self::S3(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_file_is_what_a_sealed_result_keeps_in_clear() {
        let file = ResultFile {
            storage_key: "k".into(),
            size_bytes: 1,
            row_count: 1,
            content_type: "text/csv".into(),
            file_name: "a.csv".into(),
            expires_at: chrono::Utc::now(),
            expired: false,
        };
        let members = serde_json::to_value(file).unwrap();
        let names: Vec<&str> = members.as_object().unwrap().keys().map(String::as_str).collect();
        let mut kept = crate::domain::sealing::FILE_RECORD.to_vec();
        kept.sort_unstable();
        let mut names = names;
        names.sort_unstable();
        assert_eq!(names, kept, "errand's statements read these in clear (`sealing::FILE_RECORD`)");
    }
}
