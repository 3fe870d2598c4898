//! Counting the rows of an export's text as it streams past.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use actix_web::web::Bytes;

use crate::domain::ExportFormat;

/// Counts records as the bytes stream past: newlines outside quotes, less the
/// CSV header (counted before a csv.gz is compressed). Quoted CSV fields
/// may hold newlines; NDJSON lines never do.
pub(super) struct RowCounter {
    format: ExportFormat,
    rows: Arc<AtomicU64>,
    in_quotes: bool,
    header_pending: bool,
}

impl RowCounter {
    pub(super) fn new(format: ExportFormat, rows: Arc<AtomicU64>) -> Self {
        Self { format, rows, in_quotes: false, header_pending: format != ExportFormat::Ndjson }
    }

    pub(super) fn count(&mut self, bytes: &Bytes) {
        let mut lines = 0u64;
        for &b in bytes.iter() {
            match b {
                b'"' if self.format != ExportFormat::Ndjson => self.in_quotes = !self.in_quotes,
                b'\n' if !self.in_quotes => {
                    if std::mem::take(&mut self.header_pending) {
                        continue;
                    }
                    lines += 1;
                }
                _ => {}
            }
        }
        self.rows.fetch_add(lines, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn quoted_newlines_do_not_count_as_rows() {
        let rows = Arc::new(AtomicU64::new(0));
        let mut counter = RowCounter::new(ExportFormat::Csv, rows.clone());
        counter.count(&Bytes::from_static(b"a,b\n1,\"two\nlines\"\n"));
        counter.count(&Bytes::from_static(b"2,\"split "));
        counter.count(&Bytes::from_static(b"quote\"\n"));
        assert_eq!(rows.load(Ordering::Relaxed), 2);
    }

    proptest! {
        #[test]
        fn rows_count_the_same_however_the_stream_is_cut(rows in 0usize..40, cut in 1usize..64) {
            let mut csv = String::from("id,note\n");
            for i in 0..rows {
                csv.push_str(&format!("{i},\"line\nbreak, and \"\"quotes\"\"\"\n"));
            }
            let total = Arc::new(AtomicU64::new(0));
            let mut counter = RowCounter::new(ExportFormat::Csv, total.clone());
            for piece in csv.as_bytes().chunks(cut) {
                counter.count(&Bytes::copy_from_slice(piece));
            }
            prop_assert_eq!(total.load(Ordering::Relaxed), rows as u64);
        }
    }
}
