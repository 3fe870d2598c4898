//! Result files sealed on the local backend: a file is [`MAGIC`], then
//! chunks of at most [`CHUNK`] bytes each sealed on its own under the
//! tenant's data key (`domain::sealing`, purpose `File`): a 4-byte length
//! (big-endian), then the nonce, ciphertext and tag. Chunks stand alone, so
//! an upload's parts, each sealed as it is written (the first with the
//! magic), concatenate into a sealed file as their bytes do, and a part's
//! sealed length follows from its length alone ([`sealed_len`]): what an
//! upload recorded of each part still says where to cut a segment.
//!
//! A file without the magic (written before errand sealed them) is read as
//! it is. Erasing a tenant deletes its key, and with it every file's content.

use std::sync::Arc;

use actix_web::web::Bytes;
use futures_util::Stream;
use futures_util::future::BoxFuture;
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::domain::sealing::{DataKey, Purpose};

use super::StorageError;

/// How a sealed file begins.
pub const MAGIC: &[u8] = b"errand sealed file v1\n";

/// The most plaintext one chunk holds.
pub const CHUNK: usize = 64 * 1024;

/// What sealing adds to a chunk: its length, the nonce (12) and the tag (16).
const CHUNK_OVERHEAD: u64 = 4 + 12 + 16;

/// Each tenant's data key, for the files of its jobs (the store's keys,
/// given to the local backend at start-up).
pub trait FileKeys: Send + Sync {
    /// `tenant`'s key, made if it has none (to seal).
    fn key_for<'a>(&'a self, tenant: &'a str) -> BoxFuture<'a, Result<Arc<DataKey>, StorageError>>;
    /// `tenant`'s key, if it has one (to open: an erased tenant has none).
    fn existing_key<'a>(&'a self, tenant: &'a str) -> BoxFuture<'a, Result<Option<Arc<DataKey>>, StorageError>>;
}

/// `plaintext` (a whole object, or an upload's part: the first with the
/// magic) sealed with `key`.
pub fn seal(key: &DataKey, plaintext: &[u8], first: bool) -> Vec<u8> {
    let mut sealed = Vec::with_capacity(usize::try_from(sealed_len(plaintext.len() as u64, first)).unwrap_or(0));
    write_sealed(&mut sealed, key, plaintext, first).expect("a Vec takes every write");
    sealed
}

/// [`seal`] into `out` a chunk at a time: no more than a chunk sealed is
/// held beside `plaintext` (a part of an upload may be many megabytes).
pub fn write_sealed(
    out: &mut impl std::io::Write,
    key: &DataKey,
    plaintext: &[u8],
    first: bool,
) -> std::io::Result<()> {
    if first {
        out.write_all(MAGIC)?;
    }
    for chunk in plaintext.chunks(CHUNK) {
        let body = key.seal(chunk, Purpose::File);
        out.write_all(&u32::try_from(body.len()).unwrap_or(u32::MAX).to_be_bytes())?;
        out.write_all(&body)?;
    }
    Ok(())
}

/// How many bytes [`seal`] writes for `plaintext` bytes.
pub fn sealed_len(plaintext: u64, first: bool) -> u64 {
    let chunks = plaintext.div_ceil(CHUNK as u64);
    plaintext + chunks * CHUNK_OVERHEAD + if first { MAGIC.len() as u64 } else { 0 }
}

/// The plaintext of a sealed file read from `file` (past its magic), chunk by chunk.
pub fn opened<R>(file: R, key: Arc<DataKey>) -> impl Stream<Item = Result<Bytes, StorageError>>
where
    R: AsyncRead + Unpin,
{
    futures_util::stream::try_unfold((file, key), |(mut file, key)| async move {
        let mut length = [0u8; 4];
        match file.read_exact(&mut length).await {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e.into()),
        }
        let length = u32::from_be_bytes(length) as usize;
        if length > CHUNK + CHUNK_OVERHEAD as usize {
            return Err(StorageError::Remote("a sealed file's chunk is longer than any errand writes".into()));
        }
        let mut body = vec![0u8; length];
        file.read_exact(&mut body).await?;
        let plain = key.open(&body, Purpose::File).map_err(|e| StorageError::Remote(format!("a sealed file: {e}")))?;
        Ok(Some((Bytes::from(plain), (file, key))))
    })
}

/// Whether `start` (a file's first bytes) is a sealed file's.
pub fn is_sealed(start: &[u8]) -> bool {
    start.starts_with(MAGIC)
}

#[cfg(test)]
mod tests {
    use futures_util::TryStreamExt;

    use super::*;

    #[tokio::test]
    async fn parts_sealed_one_by_one_open_as_the_whole_and_their_length_is_known_beforehand() {
        let ring = crate::domain::sealing::Keyring::new(&[], b"a secret of at least thirty-two bytes!!").unwrap();
        let key = Arc::new(ring.new_data_key("acme").key);
        let whole: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let (a, b) = whole.split_at(150_000);
        let file = [seal(&key, a, true), seal(&key, b, false)].concat();
        assert_eq!(file.len() as u64, sealed_len(a.len() as u64, true) + sealed_len(b.len() as u64, false));
        assert!(is_sealed(&file) && !file.windows(64).any(|w| w == &whole[1000..1064]), "nothing in clear");
        let read: Vec<Bytes> = opened(&file[MAGIC.len()..], key.clone()).try_collect().await.unwrap();
        assert_eq!(read.concat(), whole);
        // Another tenant's key opens nothing.
        let other = Arc::new(ring.new_data_key("globex").key);
        assert!(opened(&file[MAGIC.len()..], other).try_collect::<Vec<_>>().await.is_err());
        assert_eq!(sealed_len(0, false), 0);
    }
}
