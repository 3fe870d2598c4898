//! Uploads in parts that outlive an attempt: an S3 multipart upload, or a
//! directory of part files beside the object's place on local disk. What an
//! [`Upload`] holds (its id and each part's number, ETag and size) is what a
//! checkpoint records, so a later attempt, in this process or another, adds
//! parts to the same upload and completes it. Nothing is visible under the
//! object's key until [`Storage::complete_upload`].
//!
//! Parts are numbered 1, 2, … across attempts (some S3-compatible stores
//! take no gaps), each attempt going on after the parts recorded. An attempt
//! that lost its lease but has not yet noticed may still upload a part under
//! a number its successor also uses: the completion names each part with
//! the ETag recorded for it (S3's; a local part's segment, the file its
//! attempt appends to), so a part uploaded again by another fails an S3
//! completion (and the next attempt starts over) and locally lands in
//! another file, past what was recorded of it. The parts a completion names are those the checkpoints
//! recorded; any other is dropped with the upload.

use serde::{Deserialize, Serialize};

use super::{ObjectKey, Storage, StorageError, StoredObject};

/// S3's highest part number.
const MAX_PART_NUMBER: u32 = 10_000;

/// A part uploaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UploadedPart {
    pub number: u32,
    /// S3's ETag of the part; a local part's segment (file name).
    pub etag: String,
    pub bytes: u64,
}

/// An upload in parts, as a checkpoint records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Upload {
    /// The object's key.
    pub key: String,
    /// S3's upload id; the local part directory's own name.
    pub id: String,
    pub parts: Vec<UploadedPart>,
    /// Local: the file this attempt appends its parts to (each attempt a
    /// file of its own; never recorded, so a resumed attempt starts one).
    #[serde(skip)]
    pub segment: Option<String>,
}

impl Upload {
    /// Bytes in the parts so far.
    pub fn bytes(&self) -> u64 {
        self.parts.iter().map(|p| p.bytes).sum()
    }

    /// The number of the next part; `None` past S3's last.
    pub fn next_part_number(&self) -> Option<u32> {
        let next = self.parts.last().map_or(1, |p| p.number + 1);
        (next <= MAX_PART_NUMBER).then_some(next)
    }

    pub(super) fn object_key(&self) -> ObjectKey {
        ObjectKey::from_stored(self.key.clone())
    }
}

impl Storage {
    /// Starts an upload in parts of `key`.
    pub async fn begin_upload(&self, key: &ObjectKey, content_type: &str) -> Result<Upload, StorageError> {
        match self {
            Self::Local(local) => local.begin_upload(key).await,
            Self::S3(s3) => s3.begin_upload(key, content_type).await,
        }
    }

    /// Uploads `part` as the next part of `upload`, and records it there
    /// (a span of its own: in a trace, an export's uploads show one by one).
    #[tracing::instrument(name = "upload part", skip_all, fields(bytes = part.len()))]
    pub async fn upload_part(
        &self,
        upload: &mut Upload,
        part: Vec<u8>,
        content_type: &str,
    ) -> Result<(), StorageError> {
        let number = upload.next_part_number().ok_or_else(|| {
            StorageError::Remote(format!("more than {MAX_PART_NUMBER} parts: raise storage.part_size"))
        })?;
        let bytes = part.len() as u64;
        let etag = match self {
            Self::Local(local) => local.upload_part(upload, part).await?,
            Self::S3(s3) => s3.upload_part(upload, number, part, content_type).await?,
        };
        upload.parts.push(UploadedPart { number, etag, bytes });
        Ok(())
    }

    /// Whether a part of `bytes` may be followed by more (S3 takes parts of
    /// 5 MiB at least, but the last).
    pub fn takes_part_of(&self, bytes: usize) -> bool {
        match self {
            Self::Local(_) => true,
            Self::S3(_) => bytes >= 5 * 1024 * 1024,
        }
    }

    /// Whether the upload can go on: its recorded parts are all there (local;
    /// S3 keeps an upload's parts until it is completed or aborted, which
    /// its completion then says).
    pub async fn upload_is_whole(&self, upload: &Upload) -> Result<bool, StorageError> {
        match self {
            Self::Local(local) => local.upload_is_whole(upload).await,
            Self::S3(_) => Ok(true),
        }
    }

    /// Makes the object of the upload's recorded parts, in order.
    pub async fn complete_upload(&self, upload: &Upload) -> Result<StoredObject, StorageError> {
        match self {
            Self::Local(local) => local.complete_upload(upload).await?,
            Self::S3(s3) => s3.complete_upload(upload).await?,
        }
        Ok(StoredObject { size_bytes: upload.bytes() })
    }

    /// Drops the upload and its parts (an upload already gone is fine).
    pub async fn abort_upload(&self, upload: &Upload) -> Result<(), StorageError> {
        match self {
            Self::Local(local) => local.abort_upload(upload).await,
            Self::S3(s3) => s3.abort_upload(upload).await,
        }
    }

    /// [`Self::abort_upload`] from where nothing can be awaited (a writer
    /// dropped mid-way, say by a cancel): local parts are removed at once,
    /// an S3 upload is aborted by a task of its own.
    pub fn abort_upload_soon(&self, upload: &Upload) {
        match self {
            Self::Local(local) => local.abort_upload_now(upload),
            Self::S3(_) => {
                let (storage, upload) = (self.clone(), upload.clone());
                if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                    runtime.spawn(async move {
                        if let Err(error) = storage.abort_upload(&upload).await {
                            tracing::warn!(%error, key = %upload.key, "could not abort an unfinished upload");
                        }
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_numbered_on_from_the_last_recorded() {
        let part = |number| UploadedPart { number, etag: String::new(), bytes: 1 };
        let mut upload = Upload { key: "k".into(), id: "u".into(), parts: Vec::new(), segment: None };
        assert_eq!(upload.next_part_number(), Some(1));
        upload.parts = vec![part(1), part(2)];
        assert_eq!(upload.next_part_number(), Some(3));
        upload.parts = vec![part(MAX_PART_NUMBER)];
        assert_eq!(upload.next_part_number(), None);
        assert_eq!(upload.bytes(), 1);
    }
}
