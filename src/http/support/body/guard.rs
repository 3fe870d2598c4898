//! Every request's body under a deadline, and the rest of a small body that
//! an answer left unread drained without waiting on a slow sender.
//!
//! A body must arrive within `http.body_timeout`: a sender slower than that
//! holds a connection and a worker's attention for nothing. Uploads of
//! result files (`PUT …/result`, streamed to storage, as large as a job
//! makes them) are held instead to no gap longer than that between bytes.

use std::cell::RefCell;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::body::MessageBody;
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::error::PayloadError;
use actix_web::http::{ConnectionType, Method, header};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, web};
use futures_util::StreamExt;

use crate::http::AppState;
use crate::http::support::body::MAX_BODY;

/// How long an answer made without reading the body (a 401, a 429) waits
/// for the rest of it to arrive before it goes out with the connection
/// closed instead.
const DRAIN_DEADLINE: Duration = Duration::from_millis(100);

/// The deadline when the app's state is not at hand (never, in errand).
const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// Puts the request's body under its deadline, and keeps the connection
/// open after a request answered without reading its body (refused by its
/// token, a rate limit, a quota...): reads what is left of a small body (a
/// `Content-Length` of at most [`MAX_BODY`]) once the answer is made.
/// Otherwise the server must close the connection, and a client that is
/// refused again and again (a runaway script) then pays, and makes errand
/// pay, a new connection per request: measured, most of what a flood of
/// refusals cost. A larger or streamed body is not read only to be thrown
/// away.
///
/// The rest is waited for only [`DRAIN_DEADLINE`]: a body that trickles
/// (an anonymous client announcing 64 KiB and sending 10 bytes) gets its
/// answer then, with `Connection: close`, instead of holding the
/// connection for as long as it likes.
pub async fn guard_body(
    mut req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let timeout =
        req.app_data::<web::Data<AppState>>().map_or(DEFAULT_BODY_TIMEOUT, |state| state.settings.body_timeout);
    let upload = req.method() == Method::PUT && req.path().ends_with("/result");
    let deadline = if upload { Deadline::Gap(timeout) } else { Deadline::Whole(timeout) };
    let length = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    let body = Rc::new(RefCell::new(req.take_payload()));
    let guarded =
        Guarded { body: body.clone(), deadline, timer: Box::pin(tokio::time::sleep(timeout)), expired: false };
    req.set_payload(Payload::Stream { payload: Box::pin(guarded) });
    let mut response = next.call(req).await?;
    if !length.is_some_and(|n| n > 0 && n <= MAX_BODY) {
        return Ok(response);
    }
    let mut unread = std::mem::replace(&mut *body.borrow_mut(), Payload::None);
    let drained = tokio::time::timeout(DRAIN_DEADLINE, async {
        loop {
            match unread.next().await {
                Some(Ok(_)) => {}
                Some(Err(_)) => return false,
                None => return true,
            }
        }
    })
    .await;
    if drained != Ok(true) {
        response.response_mut().head_mut().set_connection_type(ConnectionType::Close);
    }
    Ok(response)
}

/// How long a body may take.
#[derive(Clone, Copy)]
enum Deadline {
    /// All of it, within this.
    Whole(Duration),
    /// No gap between bytes longer than this.
    Gap(Duration),
}

/// The request's body, read by the handler through this while the
/// middleware keeps a hold of it, failing once its deadline passed.
struct Guarded {
    body: Rc<RefCell<Payload>>,
    deadline: Deadline,
    timer: Pin<Box<tokio::time::Sleep>>,
    expired: bool,
}

/// What a body past its deadline fails with, inside an I/O time-out.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {0:?}")]
struct Expired(Duration);

/// The deadline `error` is the expiry of, if it is one.
pub fn timed_out(error: &PayloadError) -> Option<Duration> {
    match error {
        PayloadError::Io(io) => io.get_ref()?.downcast_ref::<Expired>().map(|expired| expired.0),
        _ => None,
    }
}

impl futures_util::Stream for Guarded {
    type Item = Result<web::Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.expired {
            return Poll::Ready(None);
        }
        let this = &mut *self;
        let polled = Pin::new(&mut *this.body.borrow_mut()).poll_next(cx);
        match polled {
            Poll::Pending => {}
            Poll::Ready(Some(Ok(chunk))) => {
                if let Deadline::Gap(gap) = this.deadline {
                    this.timer.as_mut().reset(tokio::time::Instant::now() + gap);
                }
                return Poll::Ready(Some(Ok(chunk)));
            }
            done => return done,
        }
        match this.timer.as_mut().poll(cx) {
            Poll::Ready(()) => {
                this.expired = true;
                let after = match this.deadline {
                    Deadline::Whole(after) | Deadline::Gap(after) => after,
                };
                Poll::Ready(Some(Err(PayloadError::Io(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    Expired(after),
                )))))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}
