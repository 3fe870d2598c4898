//! The records of an export's `COPY` text as it streams past: counted;
//! text cells that begin like a formula defused (CSV); fields the statement
//! appended for the resume key cut off (NDJSON); and the resume key of the
//! last record kept, as written. Records are CSV-quoted with the
//! statement's quote and delimiter bytes; a quoted field may hold newlines.
//!
//! Defusing follows OWASP's rule for CSV injection: a text cell beginning
//! with one of `domain::FORMULA_STARTS` is written with a leading `'`
//! (inside its quotes, if it is quoted), so that no spreadsheet runs it.
//! The header, and cells of other types, are left as they are.

use crate::domain::FORMULA_STARTS;

/// How one statement's records are quoted and delimited.
#[derive(Debug, Clone, Copy)]
pub(super) struct Dialect {
    pub quote: u8,
    pub delimiter: u8,
}

impl Dialect {
    /// PostgreSQL's CSV.
    pub const CSV: Dialect = Dialect { quote: b'"', delimiter: b',' };
    /// The NDJSON statement's: bytes JSON text never holds raw.
    pub const NDJSON: Dialect = Dialect { quote: 0x01, delimiter: 0x02 };
}

/// Reads records, passing each on as the file has it.
pub(super) struct Records {
    dialect: Dialect,
    /// Trailing fields appended by the statement, cut from each record.
    cut: usize,
    /// The fields (by position, counting those cut) that hold the resume key.
    key_fields: Vec<usize>,
    /// Which fields are text cells to defuse.
    defused: Vec<bool>,
    /// The first record is a header: passed on as it is, not counted.
    header_pending: bool,
    in_quotes: bool,
    /// A record split across chunks, until its end.
    current: Vec<u8>,
    /// Where the record's delimiters outside quotes are.
    delimiters: Vec<usize>,
    /// Records passed on, the header apart.
    pub rows: u64,
    /// The key fields of the last record, as written (see `last_key`).
    last_fields: Vec<Vec<u8>>,
    /// Nothing to defuse, cut or keep: records are only counted.
    passes_through: bool,
}

impl Records {
    pub(super) fn new(dialect: Dialect, cut: usize, key_fields: Vec<usize>, defused: Vec<bool>, header: bool) -> Self {
        let last_fields = vec![Vec::new(); key_fields.len()];
        let passes_through = cut == 0 && key_fields.is_empty() && !defused.contains(&true);
        Self {
            dialect,
            cut,
            key_fields,
            defused,
            header_pending: header,
            in_quotes: false,
            current: Vec::new(),
            delimiters: Vec::new(),
            rows: 0,
            last_fields,
            passes_through,
        }
    }

    /// Reads `chunk`, appending what is passed on to `out`.
    pub(super) fn feed(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        if self.passes_through {
            self.count(chunk);
            out.extend_from_slice(chunk);
            return;
        }
        // COPY sends one record per message: one that is whole is read
        // where it lies, without being copied first.
        if self.current.is_empty() && !self.in_quotes && self.whole_record(chunk) {
            self.pass_on(chunk, out);
            return;
        }
        for &b in chunk {
            self.current.push(b);
            if b == self.dialect.quote {
                self.in_quotes = !self.in_quotes;
            } else if !self.in_quotes && b == self.dialect.delimiter {
                self.delimiters.push(self.current.len() - 1);
            } else if !self.in_quotes && b == b'\n' {
                let record = std::mem::take(&mut self.current);
                self.pass_on(&record, out);
                self.current = record;
                self.current.clear();
            }
        }
    }

    /// Counts the records of `chunk` (newlines outside quotes).
    fn count(&mut self, chunk: &[u8]) {
        for &b in chunk {
            if b == self.dialect.quote {
                self.in_quotes = !self.in_quotes;
            } else if b == b'\n' && !self.in_quotes && !std::mem::take(&mut self.header_pending) {
                self.rows += 1;
            }
        }
    }

    /// Whether `chunk` is exactly one record; if so, its delimiters are in
    /// `delimiters`.
    fn whole_record(&mut self, chunk: &[u8]) -> bool {
        let Some((&b'\n', body)) = chunk.split_last() else { return false };
        self.delimiters.clear();
        let mut in_quotes = false;
        for (i, &b) in body.iter().enumerate() {
            if b == self.dialect.quote {
                in_quotes = !in_quotes;
            } else if !in_quotes && b == self.dialect.delimiter {
                self.delimiters.push(i);
            } else if !in_quotes && b == b'\n' {
                self.delimiters.clear();
                return false;
            }
        }
        if in_quotes {
            self.delimiters.clear();
        }
        !in_quotes
    }

    /// `record` (ending in its newline, its delimiters in `delimiters`) is
    /// whole: passes it on, defused and cut, and keeps its key.
    fn pass_on(&mut self, record: &[u8], out: &mut Vec<u8>) {
        let end = record.len() - 1; // the newline
        let header = std::mem::take(&mut self.header_pending);
        let fields = self.delimiters.len() + 1;
        let bounds = |i: usize, delimiters: &[usize]| {
            (if i == 0 { 0 } else { delimiters[i - 1] + 1 }, if i + 1 == fields { end } else { delimiters[i] })
        };
        // Fewer fields than are cut: not a record this statement writes.
        let kept = fields.saturating_sub(self.cut).max(1);
        let kept_end = bounds(kept - 1, &self.delimiters).1;
        let mut written = 0;
        if !header {
            self.rows += 1;
            for (i, &defused) in self.defused.iter().enumerate().take(kept) {
                let (start, _) = bounds(i, &self.delimiters);
                let first = if record.get(start) == Some(&self.dialect.quote) { start + 1 } else { start };
                if defused && first < kept_end && FORMULA_STARTS.contains(&char::from(record[first])) {
                    out.extend_from_slice(&record[written..first]);
                    out.push(b'\'');
                    written = first;
                }
            }
            for (k, &i) in self.key_fields.iter().enumerate() {
                let field = if i < fields { bounds(i, &self.delimiters) } else { (end, end) };
                self.last_fields[k].clear();
                self.last_fields[k].extend_from_slice(&record[field.0..field.1]);
            }
        }
        out.extend_from_slice(&record[written..kept_end]);
        out.push(b'\n');
        self.delimiters.clear();
    }

    /// The key fields of the last record, unquoted; `None` in a field that
    /// was NULL (unquoted and empty), which no key may be.
    pub(super) fn last_key(&self) -> Vec<Option<String>> {
        self.last_fields.iter().map(|field| unquote(field, self.dialect.quote)).collect()
    }
}

/// A field's text: without its quotes, a doubled quote one; `None` for an
/// unquoted empty field (NULL).
fn unquote(field: &[u8], quote: u8) -> Option<String> {
    if field.is_empty() {
        return None;
    }
    if field.len() >= 2 && field[0] == quote && field[field.len() - 1] == quote {
        let inner = &field[1..field.len() - 1];
        let mut text = Vec::with_capacity(inner.len());
        let mut i = 0;
        while i < inner.len() {
            text.push(inner[i]);
            i += if inner[i] == quote { 2 } else { 1 };
        }
        return Some(String::from_utf8_lossy(&text).into_owned());
    }
    Some(String::from_utf8_lossy(field).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn passed(records: &mut Records, chunks: &[&[u8]]) -> String {
        let mut out = Vec::new();
        for chunk in chunks {
            records.feed(chunk, &mut out);
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn quoted_newlines_do_not_count_as_rows() {
        let mut records = Records::new(Dialect::CSV, 0, Vec::new(), Vec::new(), true);
        let text = passed(&mut records, &[b"a,b\n1,\"two\nlines\"\n", b"2,\"split ", b"quote\"\n"]);
        assert_eq!(records.rows, 2);
        assert_eq!(text, "a,b\n1,\"two\nlines\"\n2,\"split quote\"\n");
    }

    #[test]
    fn text_cells_that_begin_like_a_formula_are_defused_inside_their_quotes() {
        let mut records = Records::new(Dialect::CSV, 0, vec![0], vec![false, true, true, false], true);
        let text = passed(
            &mut records,
            &[
                b"=id,=note,other,n\n",
                b"-1,\"=HYPERLINK(\"\"x\"\")\",\t@tab,-5\n",
                b"2,plain,\"\",\n",
                b"3,\"+split",
                b"\",@x,1\n",
            ],
        );
        assert_eq!(
            text, "=id,=note,other,n\n-1,\"'=HYPERLINK(\"\"x\"\")\",'\t@tab,-5\n2,plain,\"\",\n3,\"'+split\",'@x,1\n",
            "the header and typed cells as they are"
        );
        assert_eq!(records.rows, 3);
        assert_eq!(records.last_key(), [Some("3".to_owned())], "a key as written, not as defused");
    }

    #[test]
    fn appended_keys_are_cut_and_the_last_one_kept_unquoted() {
        let mut records = Records::new(Dialect::NDJSON, 2, vec![1, 2], Vec::new(), false);
        let text = passed(&mut records, &[b"{\"a\":\"x,y\"}\x027\x02k\n", b"{\"a\":1}\x02\x018\x02\x01\x02\n"]);
        assert_eq!(text, "{\"a\":\"x,y\"}\n{\"a\":1}\n");
        assert_eq!(records.last_key(), [Some("8\x02".to_owned()), None]);
    }

    proptest! {
        #[test]
        fn rows_and_keys_come_out_the_same_however_the_stream_is_cut(rows in 1usize..40, cut in 1usize..64) {
            let mut csv = String::from("id,note,key\n");
            for i in 0..rows {
                csv.push_str(&format!("{i},\"=line\nbreak, and \"\"quotes\"\"\",\"k,{i}\"\n"));
            }
            let mut records = Records::new(Dialect::CSV, 0, vec![2], vec![false, true, false], true);
            let mut out = Vec::new();
            for piece in csv.as_bytes().chunks(cut) {
                records.feed(piece, &mut out);
            }
            prop_assert_eq!(records.rows, rows as u64);
            let last = format!("k,{}", rows - 1);
            prop_assert_eq!(records.last_key(), vec![Some(last)]);
            let out = String::from_utf8(out).unwrap();
            prop_assert_eq!(out.matches("\"'=line").count(), rows);
            prop_assert_eq!(out.replace("\"'=line", "\"=line"), csv);
        }
    }
}
