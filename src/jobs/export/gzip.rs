//! csv.gz: the CSV gzip-compressed as it streams, in constant memory.
//!
//! Compressing is CPU work (a few milliseconds per 64 KiB at the default
//! level), too long to do on the async runtime's thread between two polls:
//! the stream gathers about 64 KiB of input, then hands it and the encoder
//! to a blocking thread, and takes them back with what came out.

use std::io::Write;

use actix_web::web::Bytes;
use flate2::Compression;
use flate2::write::GzEncoder;
use futures_util::{Stream, StreamExt, stream};

/// Input gathered before one compression step.
const STEP: usize = 64 * 1024;

/// `body`, gzip-compressed. An error of `body` ends the stream with it (and
/// no gzip trailer, so a reader of a partial upload sees it is cut short).
pub(super) fn gzipped<S>(body: S) -> impl Stream<Item = Result<Bytes, String>> + Unpin
where
    S: Stream<Item = Result<Bytes, String>> + Unpin + Send + 'static,
{
    let encoder = GzEncoder::new(Vec::with_capacity(STEP), Compression::default());
    Box::pin(stream::unfold(Some((body, encoder)), |state| async move {
        let (mut body, encoder) = state?;
        let mut input = Vec::with_capacity(STEP);
        let mut ended = false;
        while input.len() < STEP {
            match body.next().await {
                Some(Ok(chunk)) => input.extend_from_slice(&chunk),
                Some(Err(error)) => return Some((Err(error), None)),
                None => {
                    ended = true;
                    break;
                }
            }
        }
        let compressed = tokio::task::spawn_blocking(move || compress(encoder, &input, ended)).await;
        match compressed {
            Ok(Ok((output, encoder))) => Some((Ok(Bytes::from(output)), encoder.map(|e| (body, e)))),
            Ok(Err(error)) => Some((Err(format!("compressing: {error}")), None)),
            Err(error) => Some((Err(format!("compressing: {error}")), None)),
        }
    }))
}

type Encoder = GzEncoder<Vec<u8>>;

/// Feeds `input` to `encoder`, and takes what it has written so far; at the
/// end, finishes it (the trailer) and gives no encoder back.
fn compress(mut encoder: Encoder, input: &[u8], end: bool) -> std::io::Result<(Vec<u8>, Option<Encoder>)> {
    encoder.write_all(input)?;
    if end {
        return Ok((encoder.finish()?, None));
    }
    let output = std::mem::replace(encoder.get_mut(), Vec::with_capacity(STEP));
    Ok((output, Some(encoder)))
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    async fn gunzip_of(pieces: Vec<Vec<u8>>) -> Vec<u8> {
        let body = stream::iter(pieces.into_iter().map(|p| Ok::<_, String>(Bytes::from(p))));
        let compressed: Vec<Bytes> = gzipped(body).map(|r| r.unwrap()).collect().await;
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&compressed.concat()[..]).read_to_end(&mut out).unwrap();
        out
    }

    #[tokio::test]
    async fn decompresses_to_the_bytes_that_went_in_however_they_were_cut() {
        let text: Vec<u8> = (0..200_000u32).flat_map(|i| format!("{i},row {i}\n").into_bytes()).collect();
        for cut in [1, 1000, STEP, 3 * STEP + 7] {
            let pieces: Vec<Vec<u8>> = text.chunks(cut).map(<[u8]>::to_vec).collect();
            assert_eq!(gunzip_of(pieces).await, text, "cut every {cut} bytes");
        }
        assert_eq!(gunzip_of(Vec::new()).await, b"");
    }

    #[tokio::test]
    async fn an_error_of_the_input_ends_the_stream_with_it() {
        let body = stream::iter(vec![Ok(Bytes::from_static(b"a,b\n")), Err("lost".to_owned())]);
        let items: Vec<Result<Bytes, String>> = gzipped(body).collect().await;
        assert_eq!(items.last(), Some(&Err("lost".to_owned())));
    }
}
