//! What an attempt's handler logs (a line: when, how much it matters, a
//! message and structured fields), and how much of it an attempt keeps.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most lines one attempt keeps (the database keeps to it too, and to
/// [`MAX_LOG_BYTES`], across processes and the worker API).
pub const MAX_LOG_LINES: usize = 1000;
/// The most bytes of messages and fields one attempt keeps.
pub const MAX_LOG_BYTES: usize = 256 * 1024;
/// The longest message kept (characters); longer ones are cut.
pub const MAX_LOG_MESSAGE: usize = 4096;

/// How much a line matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogLevel {
    Debug,
    Info,
    Warn,
    Error,
}

impl LogLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Warn => "warn",
            Self::Error => "error",
        }
    }
}

/// One line an attempt logged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogLine {
    pub at: DateTime<Utc>,
    pub level: LogLevel,
    pub message: String,
    /// Structured fields (a JSON object), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<Value>,
}

impl LogLine {
    /// A line logged now, its message cut to [`MAX_LOG_MESSAGE`] characters.
    pub fn now(level: LogLevel, message: &str, fields: Option<Value>) -> Self {
        let message = match message.char_indices().nth(MAX_LOG_MESSAGE) {
            Some((cut, _)) => format!("{}…", &message[..cut]),
            None => message.to_owned(),
        };
        Self { at: Utc::now(), level, message, fields }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_message_is_cut_at_a_character() {
        let line = LogLine::now(LogLevel::Warn, &"é".repeat(MAX_LOG_MESSAGE + 10), None);
        assert_eq!(line.message.chars().count(), MAX_LOG_MESSAGE + 1);
        assert!(line.message.ends_with('…'));
    }
}
