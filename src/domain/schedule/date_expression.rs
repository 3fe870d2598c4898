//! Dates that move with a schedule's occurrence: in a schedule's params,
//! `{"$date": "<expression>"}` becomes, for each job it makes, the date the
//! expression names as of the occurrence's nominal time on the schedule's
//! wall clock (`YYYY-MM-DD`), and `{"$datetime": "<expression>"}` that
//! instant (RFC 3339, with the zone's offset then). So "every Monday at
//! 08:00, last week's sales" is `{"from": {"$date": "start_of_previous_week"},
//! "to": {"$date": "end_of_previous_week"}}`.
//!
//! The grammar, with no spaces:
//!
//! ```text
//! expression = anchor [ ("+" | "-") count unit ]      count: 1 to 9999
//! anchor     = "today" | "now"                          now: $datetime only
//!            | ("start" | "end") "_of_" [ "previous_" ] ("week" | "month" | "year")
//! unit       = "d" | "w" | "m" | "y" | "h"              days, weeks, months, years; hours: $datetime only
//! ```
//!
//! Weeks begin on Monday (ISO 8601). A month moved past its last day keeps
//! to the last day (`end_of_month+1m` on 31 January is 28 or 29 February).
//! A `$datetime` of a day (every anchor but `now`) is its first instant,
//! 00:00 on the zone's wall clock (or the first instant after, where a
//! clock change skips midnight).

use chrono::{DateTime, Datelike, Days, Duration, Months, NaiveDate, NaiveDateTime, NaiveTime, TimeZone};
use chrono_tz::Tz;
use serde_json::Value;

/// Where an occurrence stands: its nominal time on the schedule's wall
/// clock, and the schedule's zone.
#[derive(Debug, Clone, Copy)]
pub struct Occasion {
    pub local: NaiveDateTime,
    pub zone: Tz,
}

/// An expression that names no date, with where it is in the params.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct DateExpressionError {
    /// A JSON pointer to the expression's object within the params (`/from`).
    pub field: String,
    pub reason: String,
}

/// Whether `params` hold any `$date` or `$datetime` expression.
pub fn holds_date_expressions(params: &Value) -> bool {
    match params {
        Value::Object(map) => expression_of(map).is_some() || map.values().any(holds_date_expressions),
        Value::Array(items) => items.iter().any(holds_date_expressions),
        _ => false,
    }
}

/// `params` with every expression replaced by what it names at `occasion`.
pub fn resolve_dates(params: &Value, occasion: Occasion) -> Result<Value, DateExpressionError> {
    resolve_at(params, occasion, String::new())
}

fn resolve_at(value: &Value, occasion: Occasion, at: String) -> Result<Value, DateExpressionError> {
    let refused =
        |reason: String| DateExpressionError { field: if at.is_empty() { "/".into() } else { at.clone() }, reason };
    match value {
        Value::Object(map) => {
            if let Some((kind, text)) = expression_of(map) {
                if map.len() != 1 {
                    return Err(refused(format!("an object with {kind} holds nothing else")));
                }
                let Value::String(text) = text else {
                    return Err(refused(format!("{kind} takes an expression as a string, e.g. \"today-7d\"")));
                };
                return evaluate(kind, text, occasion).map(Value::String).map_err(refused);
            }
            let mut resolved = serde_json::Map::with_capacity(map.len());
            for (key, item) in map {
                let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                resolved.insert(key.clone(), resolve_at(item, occasion, here)?);
            }
            Ok(Value::Object(resolved))
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| resolve_at(item, occasion, format!("{at}/{i}")))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        other => Ok(other.clone()),
    }
}

/// The object's expression, if it has a `$date` or `$datetime` key.
fn expression_of(map: &serde_json::Map<String, Value>) -> Option<(&'static str, &Value)> {
    ["$date", "$datetime"].into_iter().find_map(|kind| map.get(kind).map(|value| (kind, value)))
}

/// What `text` names as a `kind` at `occasion`, written as the API writes it.
fn evaluate(kind: &str, text: &str, occasion: Occasion) -> Result<String, String> {
    let datetime = kind == "$datetime";
    let (anchor, offset) = split(text);
    let today = occasion.local.date();
    let day = |date: Option<NaiveDate>| date.ok_or_else(|| format!("{text:?} is out of the calendar's range"));
    let start: NaiveDateTime = match anchor {
        "now" if datetime => occasion.local,
        "now" => return Err("\"now\" is a $datetime anchor; a $date uses \"today\"".into()),
        "today" => today.and_time(NaiveTime::MIN),
        other => day(period_edge(other, today).ok_or_else(|| unknown_anchor(other))?)?.and_time(NaiveTime::MIN),
    };
    let moved = match offset {
        None => Some(start),
        Some(offset) => {
            let (sign, count, unit) = parse_offset(offset)?;
            if unit == 'h' && !datetime {
                return Err("hours move a $datetime only".into());
            }
            shift(start, sign, count, unit)
        }
    }
    .ok_or_else(|| format!("{text:?} is out of the calendar's range"))?;
    if !datetime {
        return Ok(moved.date().format("%Y-%m-%d").to_string());
    }
    let instant: DateTime<Tz> = occasion
        .zone
        .from_local_datetime(&moved)
        .earliest()
        // Midnight skipped by a clock change: the first instant after it.
        .or_else(|| occasion.zone.from_local_datetime(&(moved + Duration::hours(1))).earliest())
        .ok_or_else(|| format!("{text:?} names no instant in {}", occasion.zone))?;
    Ok(instant.to_rfc3339())
}

/// `today-7d` → (`today`, `-7d`); an anchor alone has no offset.
fn split(text: &str) -> (&str, Option<&str>) {
    match text.find(['+', '-']) {
        Some(i) => (&text[..i], Some(&text[i..])),
        None => (text, None),
    }
}

fn unknown_anchor(anchor: &str) -> String {
    format!(
        "{anchor:?} is not a date: use today, now ($datetime), or start_of_/end_of_ week, month or year, \
         optionally previous_ (e.g. start_of_previous_month), then an offset such as -7d"
    )
}

/// The first or last day of the week, month or year `anchor` names, seen from `today`.
fn period_edge(anchor: &str, today: NaiveDate) -> Option<Option<NaiveDate>> {
    let (edge, rest) = anchor.split_once("_of_")?;
    let (previous, period) = match rest.strip_prefix("previous_") {
        Some(period) => (true, period),
        None => (false, rest),
    };
    let start = match period {
        "week" => today.checked_sub_days(Days::new(u64::from(today.weekday().num_days_from_monday()))),
        "month" => today.with_day(1),
        "year" => NaiveDate::from_ymd_opt(today.year(), 1, 1),
        _ => return None,
    };
    let step = |date: NaiveDate, back: bool| match (period, back) {
        ("week", true) => date.checked_sub_days(Days::new(7)),
        ("week", false) => date.checked_add_days(Days::new(7)),
        ("month", true) => date.checked_sub_months(Months::new(1)),
        ("month", false) => date.checked_add_months(Months::new(1)),
        (_, true) => date.checked_sub_months(Months::new(12)),
        (_, false) => date.checked_add_months(Months::new(12)),
    };
    let start = if previous { start.and_then(|s| step(s, true)) } else { start };
    Some(match edge {
        "start" => start,
        "end" => start.and_then(|s| step(s, false)).and_then(|next| next.pred_opt()),
        _ => return None,
    })
}

/// `-7d` → (-1, 7, 'd').
fn parse_offset(offset: &str) -> Result<(i8, u32, char), String> {
    let refused = || format!("{offset:?} is not an offset: a sign, 1 to 9999, and d, w, m, y or h (e.g. -7d)");
    let sign = if offset.starts_with('-') { -1 } else { 1 };
    let body = &offset[1..];
    let unit = body.chars().last().filter(|u| "dwmyh".contains(*u)).ok_or_else(refused)?;
    let digits = &body[..body.len() - 1];
    if digits.is_empty() || digits.len() > 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(refused());
    }
    Ok((sign, digits.parse().map_err(|_| refused())?, unit))
}

fn shift(start: NaiveDateTime, sign: i8, count: u32, unit: char) -> Option<NaiveDateTime> {
    let months = |n: u32| Months::new(n);
    match (unit, sign > 0) {
        ('d', true) => start.checked_add_days(Days::new(count.into())),
        ('d', false) => start.checked_sub_days(Days::new(count.into())),
        ('w', true) => start.checked_add_days(Days::new(u64::from(count) * 7)),
        ('w', false) => start.checked_sub_days(Days::new(u64::from(count) * 7)),
        ('m', true) => start.checked_add_months(months(count)),
        ('m', false) => start.checked_sub_months(months(count)),
        ('y', true) => start.checked_add_months(months(count.checked_mul(12)?)),
        ('y', false) => start.checked_sub_months(months(count.checked_mul(12)?)),
        ('h', true) => start.checked_add_signed(Duration::hours(count.into())),
        ('h', false) => start.checked_sub_signed(Duration::hours(count.into())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// Wednesday 2026-12-09, 08:00 in Paris.
    fn occasion() -> Occasion {
        let local = NaiveDate::from_ymd_opt(2026, 12, 9).unwrap().and_hms_opt(8, 0, 0).unwrap();
        Occasion { local, zone: chrono_tz::Europe::Paris }
    }

    fn date(expression: &str) -> Result<String, String> {
        evaluate("$date", expression, occasion())
    }

    #[test]
    fn each_anchor_names_its_day() {
        let named = [
            ("today", "2026-12-09"),
            ("start_of_week", "2026-12-07"),
            ("end_of_week", "2026-12-13"),
            ("start_of_previous_week", "2026-11-30"),
            ("end_of_previous_week", "2026-12-06"),
            ("start_of_month", "2026-12-01"),
            ("end_of_month", "2026-12-31"),
            ("start_of_previous_month", "2026-11-01"),
            ("end_of_previous_month", "2026-11-30"),
            ("start_of_year", "2026-01-01"),
            ("end_of_previous_year", "2025-12-31"),
            ("today-7d", "2026-12-02"),
            ("today+1d", "2026-12-10"),
            ("today-2w", "2026-11-25"),
            ("end_of_previous_month-1m", "2026-10-30"),
            ("start_of_month+1y", "2027-12-01"),
        ];
        for (expression, expected) in named {
            assert_eq!(date(expression).as_deref(), Ok(expected), "{expression}");
        }
    }

    #[test]
    fn datetimes_carry_the_zone_s_offset_of_their_day() {
        let at = |e| evaluate("$datetime", e, occasion());
        assert_eq!(at("now").as_deref(), Ok("2026-12-09T08:00:00+01:00"));
        assert_eq!(at("now-2h").as_deref(), Ok("2026-12-09T06:00:00+01:00"));
        assert_eq!(at("start_of_month").as_deref(), Ok("2026-12-01T00:00:00+01:00"));
        // A day in summer time has its own offset.
        assert_eq!(at("start_of_year+6m").as_deref(), Ok("2026-07-01T00:00:00+02:00"));
    }

    #[test]
    fn what_names_no_date_is_refused() {
        for bad in
            ["yesterday", "today - 7d", "today-7", "today-d", "today-12345d", "now", "today+1h", "start_of_day", ""]
        {
            assert!(date(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn expressions_are_replaced_wherever_they_are_and_errors_name_their_field() {
        let params = json!({"from": {"$date": "today-7d"}, "to": {"$date": "today"}, "n": 3,
                            "deep": [{"at": {"$datetime": "now"}}], "plain": {"x": "$date"}});
        assert!(holds_date_expressions(&params));
        let resolved = resolve_dates(&params, occasion()).unwrap();
        assert_eq!(
            resolved,
            json!({"from": "2026-12-02", "to": "2026-12-09", "n": 3,
                   "deep": [{"at": "2026-12-09T08:00:00+01:00"}], "plain": {"x": "$date"}})
        );
        assert!(!holds_date_expressions(&resolved));
        let bad = json!({"from": {"$date": "today-7x"}});
        assert_eq!(resolve_dates(&bad, occasion()).unwrap_err().field, "/from");
        let mixed = json!({"a": [{"$date": "today", "other": 1}]});
        assert_eq!(resolve_dates(&mixed, occasion()).unwrap_err().field, "/a/0");
        let number = json!({"to": {"$date": 7}});
        assert!(resolve_dates(&number, occasion()).is_err());
    }

    proptest! {
        #[test]
        fn a_week_runs_monday_to_sunday_around_today(days in 0u64..40_000) {
            let local = NaiveDate::from_ymd_opt(1970, 1, 1).unwrap() + Days::new(days);
            let occasion = Occasion { local: local.and_time(NaiveTime::MIN), zone: chrono_tz::UTC };
            let day = |e| NaiveDate::parse_from_str(&evaluate("$date", e, occasion).unwrap(), "%Y-%m-%d").unwrap();
            let (start, end) = (day("start_of_week"), day("end_of_week"));
            prop_assert_eq!(start.weekday(), chrono::Weekday::Mon);
            prop_assert_eq!((end - start).num_days(), 6);
            prop_assert!(start <= local && local <= end);
            prop_assert_eq!(day("end_of_previous_month") + Days::new(1), day("start_of_month"));
            prop_assert_eq!(day("start_of_previous_week") + Days::new(7), start);
        }
    }
}
