//! The `local` backend: a directory on this machine, downloads served by
//! errand under `/files/<key>?expires=&name=&sig=`, where `sig` is an HMAC
//! over the key, the expiry and the file name. A tampered or expired URL is
//! refused; a valid one gives exactly the one object it names. Given the
//! tenants' keys (`with_keys`), files are kept sealed (`sealed_file.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures_util::stream::BoxStream;

use crate::domain::signing::{Label, SigningKey};
use actix_web::web::Bytes;
use futures_util::{Stream, StreamExt};
use tokio::io::AsyncWriteExt;

use super::sealed_file::{self, FileKeys};
use super::{ObjectKey, StorageError, StoredObject, Upload};
use crate::config::HttpUrl;

/// Bytes gathered before each write to disk.
const WRITE_BUFFER: usize = 256 * 1024;

/// Results in a directory.
#[derive(Clone)]
pub struct LocalStorage {
    root: PathBuf,
    public_base_url: HttpUrl,
    signing_key: SigningKey,
    /// The tenants' keys, which files are read with (those sealed).
    keys: Option<Arc<dyn FileKeys>>,
    /// New files are sealed (given keys).
    sealing: bool,
}

/// Why a signed file URL was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SignedFileError {
    #[error("the download link is invalid")]
    BadSignature,
    #[error("the download link has expired")]
    Expired,
    #[error("the file no longer exists")]
    Gone,
}

/// A file whose signed URL checked out.
pub struct VerifiedFile {
    pub path: PathBuf,
    pub file_name: String,
    key: ObjectKey,
}

/// A file being written: removed when dropped before it was kept, whether
/// the write failed or the writing future was dropped (a cancelled export).
struct PartialFile {
    path: PathBuf,
    kept: bool,
}

impl PartialFile {
    /// Renamed into place: nothing to remove.
    fn kept(mut self) {
        self.kept = true;
    }
}

impl Drop for PartialFile {
    fn drop(&mut self) {
        if !self.kept {
            // One unlink, in a destructor that cannot await: too short to
            // matter to the runtime.
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl LocalStorage {
    pub fn new(root: PathBuf, public_base_url: &HttpUrl, signing_key: Vec<u8>) -> Self {
        let signing_key = SigningKey::new(signing_key);
        Self { root, public_base_url: public_base_url.clone(), signing_key, keys: None, sealing: false }
    }

    /// Keeps the files this backend writes sealed under their tenants' keys.
    pub fn with_keys(mut self, keys: Arc<dyn FileKeys>) -> Self {
        self.keys = Some(keys);
        self.sealing = true;
        self
    }

    /// Writes new files in clear (`storage.seal_files = false`); sealed ones are still read.
    pub fn writing_in_clear(mut self) -> Self {
        self.sealing = false;
        self
    }

    /// The key that seals `key`'s file, if files are sealed: its tenant's,
    /// named by the object's key (`tenants/<base64url(tenant)>/…`).
    async fn sealing_key(&self, key: &ObjectKey) -> Result<Option<Arc<crate::domain::sealing::DataKey>>, StorageError> {
        let Some(keys) = self.keys.as_ref().filter(|_| self.sealing) else { return Ok(None) };
        let tenant = tenant_of(key).ok_or_else(|| StorageError::Remote(format!("no tenant in {:?}", key.as_str())))?;
        Ok(Some(keys.key_for(&tenant).await?))
    }

    /// `file`'s content, opened if it is sealed.
    pub async fn read(
        &self,
        file: &VerifiedFile,
    ) -> Result<BoxStream<'static, Result<Bytes, StorageError>>, StorageError> {
        let mut opened = tokio::io::BufReader::new(tokio::fs::File::open(&file.path).await?);
        let mut start = vec![0u8; sealed_file::MAGIC.len()];
        let read = read_up_to(&mut opened, &mut start).await?;
        if !sealed_file::is_sealed(&start[..read]) {
            let rest = tokio_util::io::ReaderStream::new(opened).map(|chunk| chunk.map_err(StorageError::from));
            let start = futures_util::stream::once(std::future::ready(Ok(Bytes::from(start[..read].to_vec()))));
            return Ok(Box::pin(start.chain(rest)));
        }
        let keys = self.keys.as_ref().ok_or_else(|| StorageError::Remote("a sealed file, and no keys".into()))?;
        let tenant = tenant_of(&file.key).ok_or_else(|| StorageError::Remote("a sealed file of no tenant".into()))?;
        let key =
            keys.existing_key(&tenant).await?.ok_or_else(|| StorageError::Remote("its tenant's key is gone".into()))?;
        Ok(Box::pin(sealed_file::opened(opened, key)))
    }

    fn path_of(&self, key: &ObjectKey) -> PathBuf {
        self.root.join(key.as_str())
    }

    pub(super) async fn put<S, E>(
        &self,
        key: &ObjectKey,
        _content_type: &str,
        mut body: S,
    ) -> Result<StoredObject, StorageError>
    where
        S: Stream<Item = Result<Bytes, E>> + Unpin,
        E: std::fmt::Display,
    {
        let path = self.path_of(key);
        if let Some(parent) = path.parent() {
            tokio::fs::create_dir_all(parent).await?;
        }
        // Written beside its final name, then renamed: readers never see half a file.
        let partial_path = path.with_extension(format!("partial-{}", uuid::Uuid::new_v4().simple()));
        let partial = PartialFile { path: partial_path, kept: false };
        // COPY sends a message per row: buffer, or every row would be a
        // trip to the blocking pool that tokio's file I/O runs on.
        let mut file = tokio::io::BufWriter::with_capacity(WRITE_BUFFER, tokio::fs::File::create(&partial.path).await?);
        let sealing = self.sealing_key(key).await?;
        let mut size = 0u64;
        // Sealed: whole chunks as they fill, the last one at the end.
        let mut pending = Vec::new();
        if sealing.is_some() {
            file.write_all(sealed_file::MAGIC).await?;
        }
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| StorageError::Source(e.to_string()))?;
            size += chunk.len() as u64;
            match &sealing {
                None => file.write_all(&chunk).await?,
                Some(data_key) => {
                    pending.extend_from_slice(&chunk);
                    if pending.len() >= sealed_file::CHUNK {
                        let whole = pending.len() - pending.len() % sealed_file::CHUNK;
                        file.write_all(&sealed_file::seal(data_key, &pending[..whole], false)).await?;
                        pending.drain(..whole);
                    }
                }
            }
        }
        if let Some(data_key) = &sealing {
            file.write_all(&sealed_file::seal(data_key, &pending, false)).await?;
        }
        file.flush().await?;
        file.get_ref().sync_all().await?;
        tokio::fs::rename(&partial.path, &path).await?;
        partial.kept();
        Ok(StoredObject { size_bytes: size })
    }

    /// The directory of an upload's part files, beside the object's place.
    fn parts_dir(&self, upload: &Upload) -> PathBuf {
        let path = self.path_of(&upload.object_key());
        path.with_extension(format!("upload-{}", upload.id))
    }

    pub(super) async fn begin_upload(&self, key: &ObjectKey) -> Result<Upload, StorageError> {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let upload = Upload { key: key.as_str().to_owned(), id, parts: Vec::new(), segment: None };
        tokio::fs::create_dir_all(self.parts_dir(&upload)).await?;
        Ok(upload)
    }

    /// Appends a part durably (synced) to the attempt's segment, a file of
    /// its own in the upload's directory, whose name is the part's ETag. A
    /// resumed attempt starts a segment of its own, so an attempt that lost
    /// its lease and writes late writes its own file, past what was recorded
    /// of it; the completion takes of each segment what was recorded.
    pub(super) async fn upload_part(&self, upload: &mut Upload, part: Vec<u8>) -> Result<String, StorageError> {
        // The object's first part begins a sealed file.
        let (sealing, first) = (self.sealing_key(&upload.object_key()).await?, upload.parts.is_empty());
        let segment = upload.segment.get_or_insert_with(|| uuid::Uuid::new_v4().simple().to_string()).clone();
        let recorded: u64 = self.stored_parts(upload).filter(|(etag, _)| *etag == segment).map(|(_, n)| n).sum();
        let path = self.parts_dir(upload).join(&segment);
        tokio::task::spawn_blocking(move || -> std::io::Result<()> {
            use std::io::{Seek, Write};
            let mut file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(path)?;
            // What a failed write left past the recorded parts goes.
            file.set_len(recorded)?;
            file.seek(std::io::SeekFrom::End(0))?;
            match sealing {
                Some(data_key) => {
                    let mut out = std::io::BufWriter::new(&mut file);
                    sealed_file::write_sealed(&mut out, &data_key, &part, first)?;
                    out.flush()?;
                }
                None => file.write_all(&part)?,
            }
            file.sync_data()
        })
        .await
        .map_err(std::io::Error::other)??;
        Ok(segment)
    }

    pub(super) async fn upload_is_whole(&self, upload: &Upload) -> Result<bool, StorageError> {
        let dir = self.parts_dir(upload);
        for (segment, bytes) in segments(self.stored_parts(upload)) {
            match tokio::fs::metadata(dir.join(segment)).await {
                Ok(meta) if meta.len() >= bytes => {}
                Ok(_) => return Ok(false),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
                Err(e) => return Err(e.into()),
            }
        }
        Ok(true)
    }

    /// Makes the object of the recorded parts: an upload one attempt wrote
    /// whole is its segment, cut to what was recorded and renamed into
    /// place (no copy); one resumed is its first segment with the others'
    /// recorded bytes appended (the kernel's copy, `copy_file_range`
    /// through `std::io::copy`). Then the upload's directory goes.
    pub(super) async fn complete_upload(&self, upload: &Upload) -> Result<(), StorageError> {
        let path = self.path_of(&upload.object_key());
        let dir = self.parts_dir(upload);
        let segments: Vec<(PathBuf, u64)> =
            segments(self.stored_parts(upload)).into_iter().map(|(s, n)| (dir.join(s), n)).collect();
        let Some((first, _)) = segments.first().cloned() else {
            return Err(StorageError::Remote("an upload of no parts".into()));
        };
        tokio::task::spawn_blocking(move || -> std::io::Result<()> {
            use std::io::{Read, Seek};
            let mut file = std::fs::OpenOptions::new().write(true).open(&segments[0].0)?;
            file.set_len(segments[0].1)?;
            file.seek(std::io::SeekFrom::End(0))?;
            for (segment, bytes) in &segments[1..] {
                std::io::copy(&mut std::fs::File::open(segment)?.take(*bytes), &mut file)?;
            }
            file.sync_all()
        })
        .await
        .map_err(std::io::Error::other)??;
        tokio::fs::rename(&first, &path).await?;
        tokio::fs::remove_dir_all(&dir).await?;
        Ok(())
    }

    /// Each recorded part's segment and the bytes it takes on disk (sealed,
    /// what its length says sealing made of it).
    fn stored_parts<'a>(&self, upload: &'a Upload) -> impl Iterator<Item = (&'a str, u64)> + use<'a> {
        let sealed = self.sealing;
        upload.parts.iter().map(move |part| {
            let bytes = if sealed { sealed_file::sealed_len(part.bytes, part.number == 1) } else { part.bytes };
            (part.etag.as_str(), bytes)
        })
    }

    pub(super) async fn abort_upload(&self, upload: &Upload) -> Result<(), StorageError> {
        match tokio::fs::remove_dir_all(self.parts_dir(upload)).await {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
        }
    }

    /// [`Self::abort_upload`] where nothing can be awaited: a few unlinks,
    /// too short to matter to the runtime (as [`PartialFile`]'s).
    pub(super) fn abort_upload_now(&self, upload: &Upload) {
        let _ = std::fs::remove_dir_all(self.parts_dir(upload));
    }

    pub(super) async fn size(&self, key: &ObjectKey) -> Result<Option<u64>, StorageError> {
        match tokio::fs::metadata(self.path_of(key)).await {
            Ok(meta) => Ok(Some(meta.len())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    pub(super) async fn delete(&self, key: &ObjectKey) -> Result<(), StorageError> {
        match tokio::fs::remove_file(self.path_of(key)).await {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
        }
    }

    fn signature(&self, key: &str, expires: u64, file_name: &str) -> String {
        let expires = expires.to_string();
        let fields = [key.as_bytes(), expires.as_bytes(), file_name.as_bytes()];
        hex::encode(self.signing_key.sign_fields(Label::LocalFile, &fields))
    }

    pub(super) fn signed_url(&self, key: &ObjectKey, file_name: &str, expires_in: Duration) -> String {
        let expires = unix_now() + expires_in.as_secs();
        let sig = self.signature(key.as_str(), expires, file_name);
        let name: String = form_encode(file_name);
        self.public_base_url.join_path(&format!("/files/{}?expires={expires}&name={name}&sig={sig}", key.as_str()))
    }

    /// Checks a `/files/…` request: the signature first (nothing about the
    /// object is revealed to a bad one), then the expiry, then the file.
    pub async fn verify(
        &self,
        key: &str,
        expires: u64,
        file_name: &str,
        sig: &str,
    ) -> Result<VerifiedFile, SignedFileError> {
        let expected = self.signature(key, expires, file_name);
        if !constant_time_eq(expected.as_bytes(), sig.as_bytes()) {
            return Err(SignedFileError::BadSignature);
        }
        if unix_now() > expires {
            return Err(SignedFileError::Expired);
        }
        let path = self.path_of(&ObjectKey::from_stored(key.to_owned()));
        if !is_inside(&self.root, &path) || !tokio::fs::try_exists(&path).await.unwrap_or(false) {
            return Err(SignedFileError::Gone);
        }
        Ok(VerifiedFile { path, file_name: file_name.to_owned(), key: ObjectKey::from_stored(key.to_owned()) })
    }
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// An upload's segments in order, each with its recorded bytes, from its
/// parts' (segment, bytes on disk).
fn segments<'a>(parts: impl Iterator<Item = (&'a str, u64)>) -> Vec<(&'a str, u64)> {
    let mut segments: Vec<(&str, u64)> = Vec::new();
    for (etag, part_bytes) in parts {
        match segments.last_mut() {
            Some((segment, bytes)) if *segment == etag => *bytes += part_bytes,
            _ => segments.push((etag, part_bytes)),
        }
    }
    segments
}

/// The tenant an object's key names (`tenants/<base64url(tenant)>/…`).
fn tenant_of(key: &ObjectKey) -> Option<String> {
    let encoded = key.as_str().strip_prefix("tenants/")?.split('/').next()?;
    String::from_utf8(URL_SAFE_NO_PAD.decode(encoded).ok()?).ok()
}

/// Reads into `buffer` until it is full or the file ends; answers how much was read.
async fn read_up_to(file: &mut (impl tokio::io::AsyncRead + Unpin), buffer: &mut [u8]) -> std::io::Result<usize> {
    use tokio::io::AsyncReadExt;
    let mut read = 0;
    while read < buffer.len() {
        match file.read(&mut buffer[read..]).await? {
            0 => break,
            n => read += n,
        }
    }
    Ok(read)
}

/// Keys come from errand, but a path is only served from inside the root.
fn is_inside(root: &Path, path: &Path) -> bool {
    path.starts_with(root) && !path.components().any(|c| matches!(c, std::path::Component::ParentDir))
}

/// Percent-encodes a query value.
fn form_encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}
