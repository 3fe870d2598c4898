//! The `s3` backend (rust-s3): uploads stream through multipart (8 MiB
//! parts; rust-s3 aborts the upload if any part or the source fails, so a
//! failed attempt leaves neither an object nor an orphaned upload), and
//! downloads are S3 presigned GETs, signed for the endpoint people reach.

use std::collections::HashMap;
use std::time::Duration;

use actix_web::web::Bytes;
use futures_util::{Stream, StreamExt};
use s3::creds::Credentials;
use s3::{Bucket, Region};
use tokio_util::io::StreamReader;

use super::{ObjectKey, StorageError, StoredObject, Upload};
use crate::config::S3Settings;

/// Results in an S3 bucket.
#[derive(Clone)]
pub struct S3Storage {
    bucket: Box<Bucket>,
    /// The same bucket addressed through the public endpoint: a presigned URL
    /// only works for the host it was signed for.
    public: Box<Bucket>,
}

impl S3Storage {
    /// Credentials from the settings, else the usual `AWS_ACCESS_KEY_ID` /
    /// `AWS_SECRET_ACCESS_KEY` environment variables.
    pub fn new(settings: &S3Settings) -> Result<Self, String> {
        let credentials = match (&settings.access_key, &settings.secret_key) {
            (Some(access), Some(secret)) => {
                use secrecy::ExposeSecret;
                Credentials::new(Some(access.expose_secret()), Some(secret.expose_secret()), None, None, None)
            }
            _ => Credentials::from_env(),
        }
        .map_err(|e| format!("S3 credentials: {e}"))?;
        let bucket_at = |endpoint: &str| -> Result<Box<Bucket>, String> {
            let region = Region::Custom { region: settings.region.clone(), endpoint: endpoint.to_owned() };
            let bucket = Bucket::new(&settings.bucket, region, credentials.clone()).map_err(|e| e.to_string())?;
            Ok(if settings.path_style { bucket.with_path_style() } else { bucket })
        };
        let public_endpoint = settings.public_endpoint.as_deref().unwrap_or(&settings.endpoint);
        Ok(Self { bucket: bucket_at(&settings.endpoint)?, public: bucket_at(public_endpoint)? })
    }

    pub(super) async fn put<S, E>(
        &self,
        key: &ObjectKey,
        content_type: &str,
        body: S,
    ) -> Result<StoredObject, StorageError>
    where
        S: Stream<Item = Result<Bytes, E>> + Unpin,
        E: std::fmt::Display,
    {
        let mut reader = StreamReader::new(body.map(|chunk| chunk.map_err(|e| std::io::Error::other(e.to_string()))));
        let response = self
            .bucket
            .put_object_stream_with_content_type(&mut reader, key.as_str(), content_type)
            .await
            .map_err(|e| StorageError::Remote(e.to_string()))?;
        Ok(StoredObject { size_bytes: response.uploaded_bytes() as u64 })
    }

    pub(super) async fn begin_upload(&self, key: &ObjectKey, content_type: &str) -> Result<Upload, StorageError> {
        let started = self.bucket.initiate_multipart_upload(key.as_str(), content_type).await.map_err(remote)?;
        Ok(Upload { key: key.as_str().to_owned(), id: started.upload_id, parts: Vec::new(), segment: None })
    }

    /// Uploads part `number`; answers its ETag.
    pub(super) async fn upload_part(
        &self,
        upload: &Upload,
        number: u32,
        part: Vec<u8>,
        content_type: &str,
    ) -> Result<String, StorageError> {
        let uploaded = self
            .bucket
            .put_multipart_chunk(part, &upload.key, number, &upload.id, content_type)
            .await
            .map_err(remote)?;
        Ok(uploaded.etag)
    }

    pub(super) async fn complete_upload(&self, upload: &Upload) -> Result<(), StorageError> {
        let parts = upload.parts.iter().map(|p| s3::serde_types::Part { part_number: p.number, etag: p.etag.clone() });
        self.bucket.complete_multipart_upload(&upload.key, &upload.id, parts.collect()).await.map_err(remote)?;
        Ok(())
    }

    pub(super) async fn abort_upload(&self, upload: &Upload) -> Result<(), StorageError> {
        match self.bucket.abort_upload(&upload.key, &upload.id).await {
            Ok(()) | Err(s3::error::S3Error::HttpFailWithBody(404, _)) => Ok(()),
            Err(e) => Err(remote(e)),
        }
    }

    pub(super) async fn delete(&self, key: &ObjectKey) -> Result<(), StorageError> {
        match self.bucket.delete_object(key.as_str()).await {
            Ok(_) => Ok(()),
            Err(s3::error::S3Error::HttpFailWithBody(404, _)) => Ok(()),
            Err(e) => Err(StorageError::Remote(e.to_string())),
        }
    }

    pub(super) async fn signed_url(
        &self,
        key: &ObjectKey,
        file_name: &str,
        expires_in: Duration,
    ) -> Result<String, StorageError> {
        let disposition = format!("attachment; filename=\"{}\"", file_name.replace(['"', '\\'], "_"));
        let queries = HashMap::from([("response-content-disposition".to_owned(), disposition)]);
        let seconds = u32::try_from(expires_in.as_secs()).unwrap_or(u32::MAX);
        self.public
            .presign_get(key.as_str(), seconds, Some(queries))
            .await
            .map_err(|e| StorageError::Remote(e.to_string()))
    }

    /// A presigned PUT of `key`, for a client to upload the object itself.
    pub(super) async fn upload_url(&self, key: &ObjectKey, expires_in: Duration) -> Result<String, StorageError> {
        let seconds = u32::try_from(expires_in.as_secs()).unwrap_or(u32::MAX);
        self.public
            .presign_put(key.as_str(), seconds, None, None)
            .await
            .map_err(|e| StorageError::Remote(e.to_string()))
    }

    /// The object's size, or `None` if it is not there.
    pub(super) async fn size(&self, key: &ObjectKey) -> Result<Option<u64>, StorageError> {
        match self.bucket.head_object(key.as_str()).await {
            Ok((head, 200)) => Ok(head.content_length.and_then(|n| u64::try_from(n).ok())),
            Ok((_, 404)) | Err(s3::error::S3Error::HttpFailWithBody(404, _)) => Ok(None),
            Ok((_, status)) => Err(StorageError::Remote(format!("HEAD answered {status}"))),
            Err(e) => Err(StorageError::Remote(e.to_string())),
        }
    }
}

fn remote(error: s3::error::S3Error) -> StorageError {
    StorageError::Remote(error.to_string())
}
