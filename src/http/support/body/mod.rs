//! Reading a JSON object body with a size limit and a deadline, streamed so
//! an oversized body is refused without being buffered whole; as a map, as
//! a request type, or as a batch's items (each held to the params cap while
//! it streams: `items`). And reading the rest of a small body a refusal left
//! unread, without waiting on a slow sender.

mod guard;
mod items;

use actix_web::error::PayloadError;
use actix_web::web;
use futures_util::StreamExt;
use serde_json::{Map, Value};

pub use self::guard::guard_body;
use self::items::{ItemLimit, ItemScan};
use crate::http::support::problem::AppError;

/// The largest params body accepted: a job's, and each item of a batch.
pub const MAX_BODY: usize = 64 * 1024;

/// Reads the body as a JSON object (the job's params).
pub async fn json_object(payload: web::Payload) -> Result<Map<String, Value>, AppError> {
    parse_object(&read(payload, MAX_BODY, |_| Ok(())).await?)
}

/// What a batch body may hold.
#[derive(Debug, Clone, Copy)]
pub struct ItemLimits {
    /// Items, at most.
    pub max_items: usize,
    /// Bytes of one item's JSON text, at most.
    pub max_item_bytes: usize,
    /// Bytes of the whole body, at most.
    pub max_body: usize,
}

/// Reads a batch body, `{"items": [params, ...]}`, as a JSON object; one
/// item more than `max_items`, or one larger than `max_item_bytes`, is
/// refused on the byte that crosses the line, before the rest is read.
pub async fn json_items(payload: web::Payload, limits: ItemLimits) -> Result<Map<String, Value>, AppError> {
    let mut scan = ItemScan::default();
    let bytes = read(payload, limits.max_body, |chunk| {
        scan.feed(chunk, limits.max_items, limits.max_item_bytes).map_err(|limit| match limit {
            ItemLimit::TooMany(_) => {
                AppError::InvalidBatch(format!("a batch has 1 to {} items, and this one has more", limits.max_items))
            }
            ItemLimit::TooLarge(i) => AppError::InvalidParams(crate::jobs::ParamsError {
                field: format!("/items/{i}"),
                reason: format!("an item is a job's params, and those are at most {} bytes", limits.max_item_bytes),
            }),
        })
    })
    .await?;
    parse_object(&bytes)
}

/// The body, up to `limit` bytes, each chunk shown to `watch` as it
/// arrives. (Its deadline is [`guard_body`]'s, for every route.)
async fn read(
    mut payload: web::Payload,
    limit: usize,
    mut watch: impl FnMut(&[u8]) -> Result<(), AppError>,
) -> Result<web::BytesMut, AppError> {
    let mut bytes = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(unreadable)?;
        if bytes.len() + chunk.len() > limit {
            return Err(AppError::PayloadTooLarge { limit });
        }
        watch(&chunk)?;
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// Why a body could not be read, as its sender should hear it: too slow
/// (the guard's deadline), or broken.
pub fn unreadable(error: PayloadError) -> AppError {
    match guard::timed_out(&error) {
        Some(deadline) => AppError::BodyTimeout(deadline),
        None => AppError::BadRequest(format!("could not read the body: {error}")),
    }
}

fn parse_object(bytes: &[u8]) -> Result<Map<String, Value>, AppError> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(AppError::BadRequest("the body must be a JSON object".into())),
        Err(e) => Err(AppError::BadRequest(format!("the body is not valid JSON: {e}"))),
    }
}

/// Reads the body as a JSON object of type `T` (a request of the worker or
/// operator API); any other shape is a 400 saying why.
pub async fn json<T: serde::de::DeserializeOwned>(payload: web::Payload) -> Result<T, AppError> {
    let fields = json_object(payload).await?;
    serde_json::from_value(Value::Object(fields))
        .map_err(|e| AppError::BadRequest(format!("the body is not one errand understands: {e}")))
}
