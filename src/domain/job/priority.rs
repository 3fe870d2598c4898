//! How soon a job runs beside its tenant's other due jobs: its class
//! (interactive, scheduled, bulk) moved by its type's and (interactive jobs)
//! the request's priority, each within [`PRIORITY_RANGE`], so that the
//! classes never cross: scheduled work never delays what a person just
//! clicked for. The claim takes a tenant's highest priority first; which
//! tenant goes next stays the fair share's to decide
//! (`jobs.priority` in `migrations/V1__baseline.sql`).

use std::ops::RangeInclusive;

/// Where a job came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `POST /jobs/{type}`: a person waiting.
    Interactive,
    /// A schedule's occurrence.
    Scheduled,
    /// A batch's child.
    Bulk,
}

/// How far a type or a request may move a job within its class.
pub const PRIORITY_RANGE: RangeInclusive<i8> = -4..=4;

/// Classes lie this far apart: wider than any move within one.
const CLASS_GAP: i16 = 10;

/// A job's priority, higher sooner: its class, moved by `by_type` and
/// `by_request` together, within [`PRIORITY_RANGE`].
pub fn priority(origin: Origin, by_type: i8, by_request: i8) -> i16 {
    let (low, high) = (i16::from(*PRIORITY_RANGE.start()), i16::from(*PRIORITY_RANGE.end()));
    let moved = (i16::from(by_type) + i16::from(by_request)).clamp(low, high);
    let class = match origin {
        Origin::Interactive => 0,
        Origin::Scheduled => -CLASS_GAP,
        Origin::Bulk => -2 * CLASS_GAP,
    };
    class + moved
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn interactive_outranks_scheduled_outranks_bulk_whatever_the_moves(
            a in -4i8..=4, b in -4i8..=4, c in -4i8..=4, d in -4i8..=4, e in -4i8..=4,
        ) {
            let scheduled = priority(Origin::Scheduled, c, 0);
            prop_assert!(priority(Origin::Interactive, a, b) > scheduled);
            prop_assert!(scheduled > priority(Origin::Bulk, d, e));
        }
    }

    #[test]
    fn moves_add_up_within_the_range() {
        assert_eq!(priority(Origin::Interactive, 0, 0), 0);
        assert_eq!(priority(Origin::Interactive, 3, 3), 4);
        assert_eq!(priority(Origin::Scheduled, -2, 0), -12);
        assert_eq!(priority(Origin::Bulk, 4, 0), -16);
    }
}
