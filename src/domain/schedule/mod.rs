//! When a schedule fires: a cron expression read on a time zone's wall
//! clock, and the instants its occurrences fall on, daylight saving included.
//!
//! The expression is matched against wall-clock times alone (croner sees
//! them as if they were UTC, a clock with no gaps or repeats); each match is
//! then placed in the zone (chrono-tz, the IANA database):
//! - a wall time that does not exist that day (spring forward) fires at the
//!   next valid instant, the moment the clock jumps (02:30 in Paris on the
//!   last Sunday of March fires at 03:00 CEST); several such times of one
//!   schedule fire once, together;
//! - a wall time that happens twice (autumn) fires once, at the first,
//!   unless the schedule runs every hour (its hour field is `*`): then it
//!   fires in both, once per real hour, as Vixie cron does.
//!
//! An occurrence is known by its instant: a job's idempotency key derives
//! from (schedule, instant), so no two jobs are made for one occurrence.

pub mod date_expression;

use std::str::FromStr;

use chrono::{DateTime, LocalResult, NaiveDateTime, TimeDelta, TimeZone, Timelike, Utc};
use chrono_tz::Tz;

/// A cron expression in a time zone.
#[derive(Debug, Clone)]
pub struct Recurrence {
    cron: croner::Cron,
    zone: Tz,
    /// The hour field is `*`: a repeated hour is run again.
    every_hour: bool,
}

/// Why a cron expression or a time zone was refused: the field, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct RecurrenceError {
    /// `cron` or `timezone`.
    pub field: &'static str,
    pub reason: String,
}

/// One time a schedule fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occurrence {
    /// The wall-clock time the expression matched.
    pub local: NaiveDateTime,
    /// When it fires.
    pub at: DateTime<Utc>,
    /// It is the second of a wall time that happened twice.
    pub second_of_fold: bool,
}

/// The shorthands, as the five fields they stand for.
const SHORTHANDS: [(&str, &str); 7] = [
    ("@yearly", "0 0 1 1 *"),
    ("@annually", "0 0 1 1 *"),
    ("@monthly", "0 0 1 * *"),
    ("@weekly", "0 0 * * 0"),
    ("@daily", "0 0 * * *"),
    ("@midnight", "0 0 * * *"),
    ("@hourly", "0 * * * *"),
];

/// How far a gap (spring forward) may reach: no zone skips more than a day.
const LONGEST_GAP_MINUTES: i64 = 24 * 60;

impl Recurrence {
    /// `cron`: five fields (minute, hour, day of month, month, day of week)
    /// or a shorthand (`@daily`, …); `timezone`: an IANA name (`Europe/Paris`).
    pub fn parse(cron: &str, timezone: &str) -> Result<Self, RecurrenceError> {
        let refused = |reason: String| RecurrenceError { field: "cron", reason };
        let trimmed = cron.trim();
        let fields = SHORTHANDS.iter().find(|(name, _)| name.eq_ignore_ascii_case(trimmed)).map_or(trimmed, |s| s.1);
        let parts: Vec<&str> = fields.split_whitespace().collect();
        if parts.len() != 5 {
            return Err(refused(format!(
                "expected five fields (minute hour day-of-month month day-of-week) or a shorthand such as @daily, \
                 not {cron:?}"
            )));
        }
        let parsed = croner::Cron::from_str(&parts.join(" ")).map_err(|e| {
            let why = e.to_string();
            refused(format!(
                "{cron:?} is not a valid expression ({}): the fields are minute 0-59, hour 0-23, day of month \
                 1-31, month 1-12 or jan-dec, day of week 0-7 or sun-sat",
                why.trim_end_matches('.')
            ))
        })?;
        let zone = Tz::from_str(timezone.trim()).map_err(|_| RecurrenceError {
            field: "timezone",
            reason: format!("{timezone:?} is not an IANA time zone (e.g. Europe/Paris, America/New_York, UTC)"),
        })?;
        Ok(Self { cron: parsed, zone, every_hour: matches!(parts[1], "*" | "*/1") })
    }

    pub fn zone(&self) -> Tz {
        self.zone
    }

    /// The first occurrence firing strictly after `instant`.
    pub fn first_after(&self, instant: DateTime<Utc>) -> Option<Occurrence> {
        // Start a little before the instant's wall time, so that a repeated
        // hour's second half or a gap just behind it is seen whole.
        let start = instant.with_timezone(&self.zone).naive_local() - TimeDelta::hours(3);
        let mut occurrence = self.place(self.next_wall_time(start)?)?;
        while occurrence.at <= instant {
            occurrence = self.after(&occurrence)?;
        }
        Some(occurrence)
    }

    /// The occurrence after `occurrence`; `None` when the expression has no more.
    pub fn after(&self, occurrence: &Occurrence) -> Option<Occurrence> {
        if self.every_hour
            && !occurrence.second_of_fold
            && let LocalResult::Ambiguous(_, late) = self.zone.from_local_datetime(&occurrence.local)
        {
            let at = late.with_timezone(&Utc);
            return Some(Occurrence { local: occurrence.local, at, second_of_fold: true });
        }
        let mut wall = occurrence.local;
        loop {
            wall = self.next_wall_time(wall)?;
            let next = self.place(wall)?;
            // Wall times inside one gap all fire at its end: once.
            if next.at > occurrence.at {
                return Some(next);
            }
        }
    }

    /// The shortest time between two of the next `count` occurrences after
    /// `from`, on the wall clock (as a person reads the schedule).
    pub fn shortest_interval(&self, from: DateTime<Utc>, count: usize) -> Option<TimeDelta> {
        let mut wall = from.with_timezone(&self.zone).naive_local();
        let mut shortest: Option<TimeDelta> = None;
        let mut previous = self.next_wall_time(wall)?;
        for _ in 0..count {
            wall = self.next_wall_time(previous)?;
            let gap = wall - previous;
            shortest = Some(shortest.map_or(gap, |s| s.min(gap)));
            previous = wall;
        }
        shortest
    }

    /// The next wall-clock time after `after` that the expression matches,
    /// in whole minutes (croner keeps the fraction of a second it is given).
    fn next_wall_time(&self, after: NaiveDateTime) -> Option<NaiveDateTime> {
        let as_if_utc = Utc.from_utc_datetime(&after);
        let next = self.cron.find_next_occurrence(&as_if_utc, false).ok()?.naive_utc();
        next.with_nanosecond(0)
    }

    /// When the wall time `local` fires in the zone (see the module doc).
    fn place(&self, local: NaiveDateTime) -> Option<Occurrence> {
        let fires = |at: DateTime<Tz>, second_of_fold| Occurrence { local, at: at.with_timezone(&Utc), second_of_fold };
        match self.zone.from_local_datetime(&local) {
            LocalResult::Single(at) => Some(fires(at, false)),
            LocalResult::Ambiguous(early, _) => Some(fires(early, false)),
            LocalResult::None => (1..=LONGEST_GAP_MINUTES).find_map(|minutes| {
                // The first wall minute after the gap: the instant the clock jumps.
                let later = local + TimeDelta::minutes(minutes);
                self.zone.from_local_datetime(&later).earliest().map(|at| fires(at, false))
            }),
        }
    }
}

/// What to do with occurrences that came and went unrun (errand down, the
/// schedule paused): skip them, or run the latest `limit` of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missed {
    Skip,
    CatchUp { limit: u32 },
}

/// Which occurrences a due schedule fires now, and which comes next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Firing {
    /// Oldest first.
    pub fire: Vec<Occurrence>,
    /// `None`: no more (past `ends_at`, or the expression has no future match).
    pub next: Option<Occurrence>,
}

/// How many missed occurrences are looked at before the rest are skipped
/// unseen (a schedule paused for years): the latest of them are what
/// `catch_up` runs, and its limit is at most 100.
const MISSED_LOOKED_AT: usize = 10_000;

/// The occurrences of `recurrence` from `due` (its next, no later than
/// `now`) to `now`: those at most `grace` old fire; older ones are missed,
/// and `missed` says what becomes of them. None fires past `ends_at`.
pub fn firing(
    recurrence: &Recurrence,
    due: Occurrence,
    now: DateTime<Utc>,
    grace: TimeDelta,
    missed: Missed,
    ends_at: Option<DateTime<Utc>>,
) -> Firing {
    let within_end = |o: &Occurrence| ends_at.is_none_or(|end| o.at <= end);
    let (mut on_time, mut late) = (Vec::new(), Vec::new());
    let mut next = Some(due);
    let mut looked_at = 0;
    while let Some(occurrence) = next.filter(|o| o.at <= now && within_end(o)) {
        looked_at += 1;
        if looked_at > MISSED_LOOKED_AT {
            next = recurrence.first_after(now);
            break;
        }
        if now - occurrence.at <= grace {
            on_time.push(occurrence)
        } else {
            late.push(occurrence)
        }
        next = recurrence.after(&occurrence);
    }
    let caught_up = match missed {
        Missed::Skip => 0,
        Missed::CatchUp { limit } => late.len().min(limit as usize),
    };
    let mut fire: Vec<Occurrence> = late.split_off(late.len() - caught_up);
    fire.extend(on_time);
    Firing { fire, next: next.filter(within_end) }
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDate;

    use super::*;

    fn utc(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    /// The first `n` occurrences after `from`, as RFC 3339 instants.
    fn instants(cron: &str, zone: &str, from: &str, n: usize) -> Vec<String> {
        let recurrence = Recurrence::parse(cron, zone).unwrap();
        let mut occurrence = recurrence.first_after(utc(from)).unwrap();
        let mut out = vec![occurrence.at.to_rfc3339()];
        for _ in 1..n {
            occurrence = recurrence.after(&occurrence).unwrap();
            out.push(occurrence.at.to_rfc3339());
        }
        out
    }

    #[test]
    fn a_daily_time_in_the_spring_gap_fires_when_the_clock_jumps_and_in_the_autumn_fold_once() {
        // Paris: 2026-03-29 02:00 CET → 03:00 CEST; 2026-10-25 03:00 CEST → 02:00 CET.
        let spring = instants("30 2 * * *", "Europe/Paris", "2026-03-27T12:00:00Z", 4);
        assert_eq!(
            spring,
            [
                "2026-03-28T01:30:00+00:00", // 02:30 CET
                "2026-03-29T01:00:00+00:00", // no 02:30 that day: 03:00 CEST, when the clock jumps
                "2026-03-30T00:30:00+00:00", // 02:30 CEST
                "2026-03-31T00:30:00+00:00",
            ]
        );
        let autumn = instants("30 2 * * *", "Europe/Paris", "2026-10-23T12:00:00Z", 4);
        assert_eq!(
            autumn,
            [
                "2026-10-24T00:30:00+00:00", // 02:30 CEST
                "2026-10-25T00:30:00+00:00", // 02:30 happens twice: the first (CEST), once
                "2026-10-26T01:30:00+00:00", // 02:30 CET
                "2026-10-27T01:30:00+00:00",
            ]
        );
        // New York: 2026-03-08 02:00 EST → 03:00 EDT; 2026-11-01 02:00 EDT → 01:00 EST.
        let spring = instants("30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z", 2);
        assert_eq!(spring, ["2026-03-08T07:00:00+00:00", "2026-03-09T06:30:00+00:00"]);
        let autumn = instants("30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", 2);
        assert_eq!(autumn, ["2026-11-01T05:30:00+00:00", "2026-11-02T06:30:00+00:00"]);
    }

    #[test]
    fn an_hourly_schedule_fires_once_per_real_hour_across_the_autumn_fold() {
        let hours = instants("0 * * * *", "Europe/Paris", "2026-10-24T22:30:00Z", 6);
        // 01:00 CEST, 02:00 CEST, 02:00 CET, 03:00 CET, …: one per real hour, none twice.
        assert_eq!(
            hours,
            [
                "2026-10-24T23:00:00+00:00",
                "2026-10-25T00:00:00+00:00",
                "2026-10-25T01:00:00+00:00",
                "2026-10-25T02:00:00+00:00",
                "2026-10-25T03:00:00+00:00",
                "2026-10-25T04:00:00+00:00",
            ]
        );
        let spring = instants("@hourly", "Europe/Paris", "2026-03-28T23:30:00Z", 3);
        assert_eq!(spring, ["2026-03-29T00:00:00+00:00", "2026-03-29T01:00:00+00:00", "2026-03-29T02:00:00+00:00"]);
    }

    #[test]
    fn first_after_starts_after_an_instant_inside_a_repeated_hour() {
        let recurrence = Recurrence::parse("0 * * * *", "Europe/Paris").unwrap();
        // 02:30 CET, the second 02:30 of the day: next is 03:00 CET.
        let next = recurrence.first_after(utc("2026-10-25T01:30:00Z")).unwrap();
        assert_eq!(next.at, utc("2026-10-25T02:00:00Z"));
        let wall = NaiveDate::from_ymd_opt(2026, 10, 25).unwrap().and_hms_opt(3, 0, 0).unwrap();
        assert_eq!(next.local, wall);
    }

    #[test]
    fn occurrences_fall_on_whole_minutes_whatever_the_instant_they_follow() {
        let recurrence = Recurrence::parse("*/15 * * * *", "UTC").unwrap();
        let next = recurrence.first_after(utc("2026-12-01T10:07:31.123456Z")).unwrap();
        assert_eq!(next.at, utc("2026-12-01T10:15:00Z"));
        assert_eq!(recurrence.after(&next).unwrap().at, utc("2026-12-01T10:30:00Z"));
    }

    #[test]
    fn bad_expressions_and_zones_are_refused_naming_the_field() {
        for cron in ["", "* * * *", "0 0 * * * *", "61 * * * *", "@fortnightly", "a b c d e"] {
            assert_eq!(Recurrence::parse(cron, "UTC").unwrap_err().field, "cron", "{cron:?}");
        }
        assert_eq!(Recurrence::parse("@daily", "Mars/Olympus").unwrap_err().field, "timezone");
        assert!(Recurrence::parse("@DAILY", " Europe/Paris ").is_ok());
    }

    #[test]
    fn missed_occurrences_are_skipped_or_the_latest_caught_up() {
        let recurrence = Recurrence::parse("@hourly", "UTC").unwrap();
        let due = recurrence.first_after(utc("2026-12-01T09:30:00Z")).unwrap(); // 10:00
        let now = utc("2026-12-01T13:00:30Z"); // 10:00, 11:00 and 12:00 missed; 13:00 on time
        let grace = TimeDelta::minutes(5);
        let at = |f: &Firing| f.fire.iter().map(|o| o.at.to_rfc3339()).collect::<Vec<_>>();
        let skipped = firing(&recurrence, due, now, grace, Missed::Skip, None);
        assert_eq!(at(&skipped), ["2026-12-01T13:00:00+00:00"]);
        assert_eq!(skipped.next.unwrap().at, utc("2026-12-01T14:00:00Z"));
        let caught = firing(&recurrence, due, now, grace, Missed::CatchUp { limit: 2 }, None);
        assert_eq!(
            at(&caught),
            ["2026-12-01T11:00:00+00:00", "2026-12-01T12:00:00+00:00", "2026-12-01T13:00:00+00:00"]
        );
        let ended = firing(&recurrence, due, now, grace, Missed::Skip, Some(utc("2026-12-01T12:30:00Z")));
        assert!(ended.fire.is_empty() && ended.next.is_none(), "{ended:?}");
    }
}
