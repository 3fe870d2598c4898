//! How far a running job has come, as its handler reports it.
//!
//! [`JobContext::progress`](super::JobContext::progress) only keeps the latest
//! value in memory; the ProgressWriter (`actors/progress.rs`) writes the values
//! that changed, at most once a second, every running job of the process in
//! one statement. A handler that reports in a tight loop costs an uncontended
//! lock per call, never a write per call.

use std::sync::{Arc, Mutex};

use crate::domain::ProgressReport;

/// One attempt's progress: shared by its handler (which reports) and the
/// ProgressWriter (which takes what changed).
#[derive(Debug, Clone, Default)]
pub struct Progress(Arc<Mutex<Latest>>);

#[derive(Debug, Default)]
struct Latest {
    report: Option<ProgressReport>,
    /// Reported since the writer last took it.
    changed: bool,
}

impl Progress {
    /// Records `report` as the latest (replacing any not yet written).
    pub fn report(&self, report: ProgressReport) {
        let mut latest = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if latest.report.as_ref() != Some(&report) {
            latest.report = Some(report);
            latest.changed = true;
        }
    }

    /// The latest report if it changed since the last call.
    pub fn take_changed(&self) -> Option<ProgressReport> {
        let mut latest = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if std::mem::take(&mut latest.changed) { latest.report.clone() } else { None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(done: u64) -> ProgressReport {
        ProgressReport { done, total: Some(100), message: None }
    }

    #[test]
    fn only_the_latest_change_is_taken_and_only_once() {
        let progress = Progress::default();
        assert_eq!(progress.take_changed(), None);
        for done in 0..1000 {
            progress.report(at(done % 100));
        }
        assert_eq!(progress.take_changed(), Some(at(99)));
        assert_eq!(progress.take_changed(), None, "taken once");
        progress.report(at(99));
        assert_eq!(progress.take_changed(), None, "the same value again is no change");
        progress.report(at(100));
        assert_eq!(progress.take_changed(), Some(at(100)));
    }
}
