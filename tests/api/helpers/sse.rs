//! A client end of the notification stream (Server-Sent Events).

use super::*;

/// One frame of a Server-Sent Events stream.
#[derive(Debug, Clone, PartialEq)]
pub enum SseFrame {
    Event { id: Option<String>, event: Option<String>, data: Value },
    Comment(String),
}

/// A client end of `GET /notifications/stream`.
pub struct SseStream {
    body: std::pin::Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<actix_web::web::Bytes>>>>,
    buffer: String,
}

impl SseStream {
    /// [`Self::open`] as a client that tries again later would: the refusal's
    /// status if the stream could not be opened (errand answered 503, say).
    pub async fn try_open(url: &str, token: &str, last_event_id: Option<&str>) -> Result<Self, Option<StatusCode>> {
        let mut request = reqwest::Client::new().get(url).bearer_auth(token);
        if let Some(id) = last_event_id {
            request = request.header("Last-Event-ID", id);
        }
        let response = request.send().await.map_err(|_| None)?;
        if response.status() != StatusCode::OK {
            return Err(Some(response.status()));
        }
        Ok(Self { body: Box::pin(response.bytes_stream()), buffer: String::new() })
    }

    /// The next frame if one comes within `within`: `Ok(None)` if none did,
    /// `Err(())` once the stream ended or broke.
    pub async fn poll(&mut self, within: Duration) -> Result<Option<SseFrame>, ()> {
        use futures_util::StreamExt;
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let frame: String = self.buffer.drain(..end + 2).collect();
                return Ok(Some(parse_frame(&frame)));
            }
            match tokio::time::timeout_at(deadline, self.body.next()).await {
                Err(_) => return Ok(None),
                Ok(Some(Ok(chunk))) => self.buffer.push_str(&String::from_utf8_lossy(&chunk)),
                Ok(_) => return Err(()),
            }
        }
    }

    /// Opens the stream at `url` with optional bearer token and `Last-Event-ID`.
    pub async fn open(url: &str, token: Option<&str>, last_event_id: Option<&str>) -> Self {
        let mut request = reqwest::Client::new().get(url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(id) = last_event_id {
            request = request.header("Last-Event-ID", id);
        }
        let response = request.send().await.expect("open stream");
        assert_eq!(response.status(), StatusCode::OK, "stream refused");
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Self { body: Box::pin(response.bytes_stream()), buffer: String::new() }
    }

    /// The next frame, or `None` if none arrives within `within`.
    pub async fn next(&mut self, within: Duration) -> Option<SseFrame> {
        use futures_util::StreamExt;
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let frame: String = self.buffer.drain(..end + 2).collect();
                return Some(parse_frame(&frame));
            }
            let chunk = tokio::time::timeout_at(deadline, self.body.next()).await.ok()??;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk.expect("stream chunk")));
        }
    }

    /// The next notification (`job_completed`) event as (id, data), skipping
    /// comments and other events; `None` if none arrives within `within`.
    pub async fn next_event(&mut self, within: Duration) -> Option<(Option<String>, Value)> {
        self.next_event_of("job_completed", within).await
    }

    /// The next event named `name` as (id, data), skipping anything else.
    pub async fn next_event_of(&mut self, name: &str, within: Duration) -> Option<(Option<String>, Value)> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.next(left).await? {
                SseFrame::Event { id, event, data } if event.as_deref() == Some(name) => return Some((id, data)),
                _ => continue,
            }
        }
    }

    /// The next `unread_count` event's count, skipping anything else; `None`
    /// if none arrives within `within`.
    pub async fn next_unread_count(&mut self, within: Duration) -> Option<i64> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.next(left).await? {
                SseFrame::Event { id, event, data } if event.as_deref() == Some("unread_count") => {
                    assert_eq!(id, None, "a count is never replayed: it carries no event id");
                    return Some(data["unread_count"].as_i64().expect("a count"));
                }
                _ => continue,
            }
        }
    }
}

fn parse_frame(frame: &str) -> SseFrame {
    let (mut id, mut event, mut data, mut comment) = (None, None, String::new(), None);
    for line in frame.lines() {
        if let Some(rest) = line.strip_prefix(':') {
            comment = Some(rest.trim().to_owned());
        } else if let Some((field, value)) = line.split_once(':') {
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "id" => id = Some(value.to_owned()),
                "event" => event = Some(value.to_owned()),
                "data" => data.push_str(value),
                _ => {}
            }
        }
    }
    if data.is_empty() {
        SseFrame::Comment(comment.unwrap_or_default())
    } else {
        SseFrame::Event { id, event, data: serde_json::from_str(&data).expect("event data is JSON") }
    }
}
