//! The bytes of an export's next part as they gather: as written, or
//! gzip-compressed (csv.gz). A compressed part is a whole gzip member, and a
//! file of several members is one gzip file (RFC 1952: `gunzip`, zlib,
//! Python's `gzip` and browsers read them all as one), so each part can be
//! uploaded, and an export resumed, on its own.
//!
//! Compressing is CPU work (a few milliseconds per 64 KiB at the default
//! level), too long to do on the async runtime's thread between two polls:
//! input is gathered 64 KiB at a time, then handed with the encoder to a
//! blocking thread, which hands both back with what came out.

use std::io::Write;

use flate2::Compression;
use flate2::write::GzEncoder;

/// Input gathered before one compression step.
const STEP: usize = 64 * 1024;

type Encoder = GzEncoder<Vec<u8>>;

/// The part being gathered.
pub(super) enum PartBuffer {
    Plain {
        buffer: Vec<u8>,
        /// What a part's buffer is made with (its size, and a little over):
        /// made once, not grown by doubling past it.
        capacity: usize,
    },
    Gzip {
        /// Input not yet compressed.
        staged: Vec<u8>,
        /// `None` only while a step runs. (Boxed: the encoder's state is
        /// large beside a plain buffer's.)
        encoder: Option<Box<Encoder>>,
    },
}

impl PartBuffer {
    /// A buffer for parts of about `part_size` bytes.
    pub(super) fn new(gzip: bool, part_size: usize) -> Self {
        if gzip {
            Self::Gzip { staged: Vec::with_capacity(STEP + STEP / 4), encoder: Some(Box::new(new_encoder())) }
        } else {
            Self::Plain { buffer: Vec::new(), capacity: part_size + STEP }
        }
    }

    /// Where the next bytes of the part go; [`Self::settle`] after.
    pub(super) fn sink(&mut self) -> &mut Vec<u8> {
        match self {
            Self::Plain { buffer, capacity } => {
                // The buffer handed over with the last part is not made
                // again until the next is written, so only one is held.
                if buffer.capacity() == 0 {
                    buffer.reserve_exact(*capacity);
                }
                buffer
            }
            Self::Gzip { staged, .. } => staged,
        }
    }

    /// Compresses what the sink gathered, once there is a step's worth.
    pub(super) async fn settle(&mut self) -> std::io::Result<()> {
        if let Self::Gzip { staged, encoder } = self
            && staged.len() >= STEP
        {
            let input = std::mem::replace(staged, Vec::with_capacity(STEP + STEP / 4));
            *encoder = Some(compress(encoder.take().unwrap_or_else(|| Box::new(new_encoder())), input).await?);
        }
        Ok(())
    }

    /// Adds `bytes` to the part.
    #[cfg(test)]
    async fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.sink().extend_from_slice(bytes);
        self.settle().await
    }

    /// The part's size so far, as it will be uploaded (compressed, less
    /// what is still staged).
    pub(super) fn len(&self) -> usize {
        match self {
            Self::Plain { buffer, .. } => buffer.len(),
            Self::Gzip { encoder, .. } => encoder.as_ref().map_or(0, |e| e.get_ref().len()),
        }
    }

    /// Whether nothing was written to the part.
    pub(super) fn is_empty(&self) -> bool {
        match self {
            Self::Plain { buffer, .. } => buffer.is_empty(),
            Self::Gzip { staged, encoder } => {
                staged.is_empty() && encoder.as_ref().is_none_or(|e| e.get_ref().is_empty())
            }
        }
    }

    /// The part's bytes (a compressed part finished as a gzip member); the
    /// buffer starts the next part.
    pub(super) async fn take(&mut self) -> std::io::Result<Vec<u8>> {
        match self {
            Self::Plain { buffer, .. } => Ok(std::mem::take(buffer)),
            Self::Gzip { staged, encoder } => {
                let input = std::mem::replace(staged, Vec::with_capacity(STEP));
                let finishing = encoder.replace(Box::new(new_encoder())).unwrap_or_else(|| Box::new(new_encoder()));
                tokio::task::spawn_blocking(move || {
                    let mut finishing = finishing;
                    finishing.write_all(&input)?;
                    finishing.finish()
                })
                .await
                .map_err(std::io::Error::other)?
            }
        }
    }
}

fn new_encoder() -> Encoder {
    GzEncoder::new(Vec::with_capacity(STEP), Compression::default())
}

/// Feeds `input` to `encoder` on a blocking thread.
async fn compress(mut encoder: Box<Encoder>, input: Vec<u8>) -> std::io::Result<Box<Encoder>> {
    tokio::task::spawn_blocking(move || encoder.write_all(&input).map(|()| encoder))
        .await
        .map_err(std::io::Error::other)?
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    #[tokio::test]
    async fn parts_of_members_decompress_to_the_bytes_that_went_in_however_they_were_cut() {
        let text: Vec<u8> = (0..200_000u32).flat_map(|i| format!("{i},row {i}\n").into_bytes()).collect();
        for (cut, part_every) in [(1000, 300_000), (STEP, 1), (3 * STEP + 7, usize::MAX)] {
            let mut buffer = PartBuffer::new(true, STEP);
            let mut file = Vec::new();
            for piece in text.chunks(cut) {
                buffer.write(piece).await.unwrap();
                if buffer.len() >= part_every {
                    file.extend(buffer.take().await.unwrap());
                }
            }
            file.extend(buffer.take().await.unwrap());
            let mut out = Vec::new();
            flate2::read::MultiGzDecoder::new(&file[..]).read_to_end(&mut out).unwrap();
            assert_eq!(out, text, "cut every {cut} bytes, a part every {part_every}");
        }
    }

    #[tokio::test]
    async fn a_plain_part_is_what_was_written() {
        let mut buffer = PartBuffer::new(false, STEP);
        assert!(buffer.is_empty());
        buffer.write(b"a,b\n").await.unwrap();
        assert_eq!(buffer.len(), 4);
        assert_eq!(buffer.take().await.unwrap(), b"a,b\n");
        assert!(buffer.is_empty());
    }
}
