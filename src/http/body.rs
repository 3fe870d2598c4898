//! Reading a JSON object body with a size limit, streamed so an oversized
//! body is refused without being buffered whole; as a map, or as a request type.

use actix_web::web;
use futures_util::StreamExt;
use serde_json::{Map, Value};

use crate::http::error::AppError;

/// The largest params body accepted.
pub const MAX_BODY: usize = 64 * 1024;

/// Reads the body as a JSON object (the job's params).
pub async fn json_object(mut payload: web::Payload) -> Result<Map<String, Value>, AppError> {
    let mut bytes = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| AppError::BadRequest(format!("could not read the body: {e}")))?;
        if bytes.len() + chunk.len() > MAX_BODY {
            return Err(AppError::PayloadTooLarge { limit: MAX_BODY });
        }
        bytes.extend_from_slice(&chunk);
    }
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(AppError::BadRequest("the body must be a JSON object (the job's params)".into())),
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
