//! The trace a job belongs to: the W3C Trace Context `traceparent` of the
//! request that recorded it (or made its schedule), kept with the job so
//! that its first attempt, its webhook deliveries and an external worker's
//! calls join the trace of the click that asked for it, and later work
//! links to it (`telemetry::traces` says how).

use std::fmt;

/// A `traceparent` (W3C Trace Context, level 1): version, trace id, parent
/// span id, flags. Held in version 00's form, 55 characters, lower case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceParent(String);

/// The length of a version-00 `traceparent`.
const LENGTH: usize = 55;

impl TraceParent {
    /// Reads a `traceparent` header as the recommendation says a receiver
    /// should: version `ff` and all-zero ids are invalid, a later version may
    /// carry more fields after a `-` (kept out: errand speaks version 00).
    /// Anything else is not a trace parent, and is ignored, never refused.
    pub fn parse(header: &str) -> Option<Self> {
        let header = header.trim_matches([' ', '\t']);
        let (version, rest) = header.split_once('-')?;
        if version.len() != 2 || !is_lower_hex(version) || version == "ff" {
            return None;
        }
        let fields = rest.get(..LENGTH - 3)?;
        let extra = &rest[LENGTH - 3..];
        match (version, extra.chars().next()) {
            ("00", None) => {}
            (v, Some('-')) if v != "00" => {}
            (v, None) if v != "00" => {}
            _ => return None,
        }
        let mut parts = fields.split('-');
        let (trace_id, span_id, flags) = (parts.next()?, parts.next()?, parts.next()?);
        let valid = trace_id.len() == 32
            && span_id.len() == 16
            && flags.len() == 2
            && [trace_id, span_id, flags].iter().all(|part| is_lower_hex(part))
            && !is_all_zero(trace_id)
            && !is_all_zero(span_id);
        valid.then(|| Self(format!("00-{trace_id}-{span_id}-{flags}")))
    }

    /// From a trace id and a span id (lower-case hex) and whether it is sampled.
    pub fn new(trace_id: &str, span_id: &str, sampled: bool) -> Option<Self> {
        Self::parse(&format!("00-{trace_id}-{span_id}-{}", if sampled { "01" } else { "00" }))
    }

    /// The 32 hex digits naming the trace.
    pub fn trace_id(&self) -> &str {
        &self.0[3..35]
    }

    /// The 16 hex digits naming the span this one continues.
    pub fn span_id(&self) -> &str {
        &self.0[36..52]
    }

    /// Whether the caller recorded its span (the `sampled` flag).
    pub fn sampled(&self) -> bool {
        u8::from_str_radix(&self.0[53..55], 16).is_ok_and(|flags| flags & 1 == 1)
    }

    /// The header's value, as stored.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TraceParent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A job's trace as its work sees it: the request's `traceparent`, and
/// whether work for the job may continue that trace at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobTrace {
    pub parent: TraceParent,
    /// Only linked to, never continued: a schedule's occurrence (the trace is
    /// the schedule's creation, maybe months before) or a run an operator
    /// retried.
    pub linked: bool,
}

impl JobTrace {
    /// Whether work done for attempt `attempt` (the one running, or the one
    /// that ended the job) continues the trace, as a child; else it starts a
    /// trace of its own, linked to it. Only a request's job's first attempt
    /// does: a retry after hours of backoff must not stretch the click's trace.
    pub fn continued_by(&self, attempt: i64) -> bool {
        !self.linked && attempt <= 1
    }

    /// The parent that work for attempt `attempt` continues, if it continues
    /// the trace at all (else it may only link to [`Self::parent`]).
    pub fn parent_for(&self, attempt: i64) -> Option<&TraceParent> {
        self.continued_by(attempt).then_some(&self.parent)
    }
}

fn is_lower_hex(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn is_all_zero(s: &str) -> bool {
    s.bytes().all(|b| b == b'0')
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn the_specification_s_example_is_read_into_its_parts() {
        let parent = TraceParent::parse(VALID).unwrap();
        assert_eq!(parent.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(parent.span_id(), "00f067aa0ba902b7");
        assert!(parent.sampled());
        assert_eq!(parent.as_str(), VALID);
    }

    #[test]
    fn invalid_headers_are_not_trace_parents() {
        for header in [
            "",
            "00",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",
            "0-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
        ] {
            assert_eq!(TraceParent::parse(header), None, "{header:?}");
        }
    }

    #[test]
    fn a_later_version_is_read_as_version_00_without_its_extra_fields() {
        let later = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-what-comes-next";
        let parent = TraceParent::parse(later).unwrap();
        assert_eq!(parent.as_str(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
        assert!(!parent.sampled());
    }

    #[test]
    fn only_a_request_s_job_s_first_attempt_continues_its_trace() {
        let parent = TraceParent::parse(VALID).unwrap();
        let asked = JobTrace { parent: parent.clone(), linked: false };
        assert!(asked.continued_by(1));
        assert!(!asked.continued_by(2));
        assert!(!JobTrace { parent, linked: true }.continued_by(1));
    }

    proptest! {
        #[test]
        fn any_ids_round_trip_through_the_header(trace in "[0-9a-f]{32}", span in "[0-9a-f]{16}", sampled: bool) {
            prop_assume!(!is_all_zero(&trace) && !is_all_zero(&span));
            let parent = TraceParent::new(&trace, &span, sampled).unwrap();
            prop_assert_eq!(TraceParent::parse(parent.as_str()), Some(parent.clone()));
            prop_assert_eq!(parent.trace_id(), trace.as_str());
            prop_assert_eq!(parent.span_id(), span.as_str());
            prop_assert_eq!(parent.sampled(), sampled);
        }

        #[test]
        fn no_header_makes_the_parser_panic(header in "\\PC{0,80}") {
            if let Some(parent) = TraceParent::parse(&header) {
                prop_assert_eq!(parent.as_str().len(), LENGTH);
            }
        }
    }
}
