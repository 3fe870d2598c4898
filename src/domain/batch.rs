//! A batch: one bulk action, many ordinary jobs (its children), one
//! notification when the last of them ends. The counts are kept by the
//! database as children end (`errand_count_batch_ends` in
//! `migrations/V1__baseline.sql`); this is how they read.

use serde::{Deserialize, Serialize};

/// How many of a batch's children ended, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchCounts {
    pub total: u32,
    pub completed: u32,
    pub failed: u32,
    pub cancelled: u32,
}

/// Where a batch stands, from its counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchStatus {
    /// Some children have not ended.
    Processing,
    /// Every child completed.
    Completed,
    /// Every child ended, and some failed or were cancelled: the report lists them.
    CompletedWithFailures,
}

impl BatchCounts {
    /// How the children ended, as people read it in `locale`: "37
    /// completed, 3 failed" (the bell's notice and the batch's email say the same).
    pub fn outcome(&self, locale: crate::domain::Locale) -> String {
        let n = |count: u32| crate::domain::Arg::from(u64::from(count));
        locale.say(
            "batch-outcome",
            &[("completed", n(self.completed)), ("failed", n(self.failed)), ("cancelled", n(self.cancelled))],
        )
    }

    /// Children that ended, however.
    pub fn ended(&self) -> u32 {
        self.completed + self.failed + self.cancelled
    }

    pub fn status(&self) -> BatchStatus {
        if self.ended() < self.total {
            BatchStatus::Processing
        } else if self.completed == self.total {
            BatchStatus::Completed
        } else {
            BatchStatus::CompletedWithFailures
        }
    }
}

impl BatchStatus {
    /// As the API shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Processing => "processing",
            Self::Completed => "completed",
            Self::CompletedWithFailures => "completed_with_failures",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(total: u32, completed: u32, failed: u32, cancelled: u32) -> BatchCounts {
        BatchCounts { total, completed, failed, cancelled }
    }

    #[test]
    fn a_batch_is_processing_until_every_child_ended() {
        assert_eq!(counts(3, 1, 1, 0).status(), BatchStatus::Processing);
        assert_eq!(counts(3, 3, 0, 0).status(), BatchStatus::Completed);
        assert_eq!(counts(3, 2, 1, 0).status(), BatchStatus::CompletedWithFailures);
        assert_eq!(counts(3, 2, 0, 1).status(), BatchStatus::CompletedWithFailures);
    }
}
