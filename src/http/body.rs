//! Reading a JSON object body with a size limit, streamed so an oversized
//! body is refused without being buffered whole; as a map, or as a request
//! type. And reading the rest of a small body a refusal left unread.

use std::cell::RefCell;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use actix_web::body::MessageBody;
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::http::header;
use actix_web::middleware::Next;
use actix_web::{HttpMessage, web};
use futures_util::StreamExt;
use serde_json::{Map, Value};

use crate::http::error::AppError;

/// The largest params body accepted.
pub const MAX_BODY: usize = 64 * 1024;

/// Reads the body as a JSON object (the job's params).
pub async fn json_object(payload: web::Payload) -> Result<Map<String, Value>, AppError> {
    json_object_within(payload, MAX_BODY).await
}

/// [`json_object`] for a body of up to `limit` bytes (a batch's items).
pub async fn json_object_within(mut payload: web::Payload, limit: usize) -> Result<Map<String, Value>, AppError> {
    let mut bytes = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| AppError::BadRequest(format!("could not read the body: {e}")))?;
        if bytes.len() + chunk.len() > limit {
            return Err(AppError::PayloadTooLarge { limit });
        }
        bytes.extend_from_slice(&chunk);
    }
    match serde_json::from_slice::<Value>(&bytes) {
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

/// Keeps the connection open after a request answered without reading its
/// body (refused by its token, a rate limit, a quota...): reads what is
/// left of a small body (a `Content-Length` of at most [`MAX_BODY`]) once
/// the answer is made. Otherwise the server must close the connection, and
/// a client that is refused again and again (a runaway script) then pays,
/// and makes errand pay, a new connection per request: measured, most of
/// what a flood of refusals cost. A larger or streamed body is left as it
/// was (an upload is never read only to be thrown away).
pub async fn drain_unread_body(
    mut req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let length = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    if !length.is_some_and(|n| n > 0 && n <= MAX_BODY) {
        return next.call(req).await;
    }
    let body = Rc::new(RefCell::new(req.take_payload()));
    req.set_payload(Payload::Stream { payload: Box::pin(Shared(body.clone())) });
    let response = next.call(req).await?;
    let mut unread = std::mem::replace(&mut *body.borrow_mut(), Payload::None);
    while let Some(Ok(_)) = unread.next().await {}
    Ok(response)
}

/// The request's body, read by the handler through this while the
/// middleware keeps a hold of it.
struct Shared(Rc<RefCell<Payload>>);

impl futures_util::Stream for Shared {
    type Item = Result<web::Bytes, PayloadError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut *self.0.borrow_mut()).poll_next(cx)
    }
}
