//! What an attempt's handler logs, for the operators' timeline.
//!
//! [`JobContext::log`](super::JobContext::log) only appends to the attempt's
//! buffer in memory; the ProgressWriter (`actors/running/progress.rs`) takes
//! the lines of every attempt of the process about once a second and writes
//! them in one statement, fenced on each attempt's lease, and takes the rest
//! when the attempt ends. A handler that logs in a loop costs an uncontended
//! lock per line; past the cap (1,000 lines an attempt) lines are dropped
//! here, before they cost a write.

use std::sync::{Arc, Mutex};

use crate::domain::{LogLine, MAX_LOG_LINES};

/// One attempt's lines not yet written: shared by its handler (which logs)
/// and the writer (which takes them).
#[derive(Debug, Clone, Default)]
pub struct AttemptLog(Arc<Mutex<Buffer>>);

#[derive(Debug, Default)]
struct Buffer {
    lines: Vec<LogLine>,
    /// Lines logged so far, written or not.
    logged: usize,
}

impl AttemptLog {
    /// Appends `line`, unless the attempt logged [`MAX_LOG_LINES`] already (one
    /// more is kept, for the database to mark the attempt truncated).
    pub fn push(&self, line: LogLine) {
        let mut buffer = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        buffer.logged += 1;
        if buffer.logged <= MAX_LOG_LINES + 1 {
            buffer.lines.push(line);
        }
    }

    /// The lines logged since the last call.
    pub fn take(&self) -> Vec<LogLine> {
        let mut buffer = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        std::mem::take(&mut buffer.lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::LogLevel;

    #[test]
    fn lines_are_taken_once_and_a_flood_stops_one_past_the_cap() {
        let log = AttemptLog::default();
        assert!(log.take().is_empty());
        log.push(LogLine::now(LogLevel::Info, "querying", None));
        assert_eq!(log.take().len(), 1);
        assert!(log.take().is_empty(), "taken once");
        for n in 0..5000 {
            log.push(LogLine::now(LogLevel::Debug, &format!("row {n}"), None));
        }
        assert_eq!(log.take().len(), MAX_LOG_LINES);
    }
}
