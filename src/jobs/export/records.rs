//! The records of an export's `COPY` text as it streams past: counted, and,
//! for an export that resumes, cut of their trailing key fields (the
//! statement appends the resume key's columns to each row, so that the key
//! of the last row written is known without parsing anything else), the
//! key of the last one kept. Records are CSV-quoted with the statement's
//! quote and delimiter bytes; a quoted field may hold newlines.

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

/// Splits records, passing each on without its last `keys` fields.
pub(super) struct Records {
    dialect: Dialect,
    keys: usize,
    /// The first record is a header: passed on, not counted.
    header_pending: bool,
    in_quotes: bool,
    /// The record being read (only while keys are cut).
    current: Vec<u8>,
    /// Where `current`'s delimiters outside quotes are.
    delimiters: Vec<usize>,
    /// Records passed on, the header apart.
    pub rows: u64,
    /// The key fields of the last record, as written (see `last_key`).
    last_raw: Vec<u8>,
}

impl Records {
    pub(super) fn new(dialect: Dialect, keys: usize, header: bool) -> Self {
        Self {
            dialect,
            keys,
            header_pending: header,
            in_quotes: false,
            current: Vec::new(),
            delimiters: Vec::new(),
            rows: 0,
            last_raw: Vec::new(),
        }
    }

    /// Reads `chunk`, appending what is passed on to `out`.
    pub(super) fn feed(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        if self.keys == 0 {
            // Nothing to cut: the bytes go on as they are; only count.
            for &b in chunk {
                self.step(b, None);
            }
            out.extend_from_slice(chunk);
            return;
        }
        // COPY sends one record per message: one that is whole is cut
        // where it lies, without being copied first.
        if self.current.is_empty() && !self.in_quotes && self.whole_record(chunk, out) {
            return;
        }
        for &b in chunk {
            self.current.push(b);
            self.step(b, Some(out));
        }
    }

    /// Passes `chunk` on as one record, if it is exactly one; `false` (and
    /// nothing done) otherwise.
    fn whole_record(&mut self, chunk: &[u8], out: &mut Vec<u8>) -> bool {
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
            return false;
        }
        self.end_record(chunk, out);
        true
    }

    fn step(&mut self, b: u8, out: Option<&mut Vec<u8>>) {
        if b == self.dialect.quote {
            self.in_quotes = !self.in_quotes;
        } else if !self.in_quotes && b == self.dialect.delimiter && out.is_some() {
            self.delimiters.push(self.current.len() - 1);
        } else if !self.in_quotes && b == b'\n' {
            match out {
                Some(out) => {
                    let record = std::mem::take(&mut self.current);
                    self.end_record(&record, out);
                    self.current = record;
                    self.current.clear();
                }
                None => self.count_record(),
            }
        }
    }

    fn count_record(&mut self) {
        if !std::mem::take(&mut self.header_pending) {
            self.rows += 1;
        }
    }

    /// `record` (ending in its newline, its delimiters in `delimiters`) has
    /// ended: pass it on without its keys.
    fn end_record(&mut self, record: &[u8], out: &mut Vec<u8>) {
        let end = record.len() - 1; // the newline
        let cut = match self.delimiters.len().checked_sub(self.keys) {
            Some(i) => self.delimiters[i],
            // Fewer fields than keys: not a record this statement writes.
            None => end,
        };
        out.extend_from_slice(&record[..cut]);
        out.push(b'\n');
        if !std::mem::take(&mut self.header_pending) {
            self.rows += 1;
            // Kept as they are; read (`last_key`) only when a checkpoint is written.
            self.last_raw.clear();
            self.last_raw.extend_from_slice(&record[(cut + 1).min(end)..end]);
        }
        self.delimiters.clear();
    }

    /// The key fields of the last record, unquoted; `None` in a field that
    /// was NULL (unquoted and empty), which no key may be.
    pub(super) fn last_key(&self) -> Vec<Option<String>> {
        let mut fields = Vec::with_capacity(self.keys);
        let (mut start, mut in_quotes) = (0, false);
        for (i, &b) in self.last_raw.iter().enumerate() {
            if b == self.dialect.quote {
                in_quotes = !in_quotes;
            } else if !in_quotes && b == self.dialect.delimiter {
                fields.push(unquote(&self.last_raw[start..i], self.dialect.quote));
                start = i + 1;
            }
        }
        fields.push(unquote(&self.last_raw[start..], self.dialect.quote));
        fields
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
        let mut records = Records::new(Dialect::CSV, 0, true);
        let text = passed(&mut records, &[b"a,b\n1,\"two\nlines\"\n", b"2,\"split ", b"quote\"\n"]);
        assert_eq!(records.rows, 2);
        assert_eq!(text, "a,b\n1,\"two\nlines\"\n2,\"split quote\"\n");
    }

    #[test]
    fn keys_are_cut_from_each_record_and_the_last_one_kept_unquoted() {
        let mut records = Records::new(Dialect::CSV, 2, true);
        let text = passed(
            &mut records,
            &[b"id,note,k1,k2\n", b"1,\"a, b\",2026-01-01,1\n", b"2,x,\"2026-01-02 \"\"q\"\"\",", b"\n"],
        );
        assert_eq!(text, "id,note\n1,\"a, b\"\n2,x\n");
        assert_eq!(records.rows, 2);
        assert_eq!(records.last_key(), [Some("2026-01-02 \"q\"".to_owned()), None]);
    }

    #[test]
    fn ndjson_records_are_cut_on_their_own_bytes() {
        let mut records = Records::new(Dialect::NDJSON, 1, false);
        let text = passed(&mut records, &[b"{\"a\":\"x,y\"}\x027\n", b"{\"a\":1}\x02\x018\x02\x01\n"]);
        assert_eq!(text, "{\"a\":\"x,y\"}\n{\"a\":1}\n");
        assert_eq!(records.last_key(), [Some("8\x02".to_owned())]);
    }

    proptest! {
        #[test]
        fn rows_and_keys_come_out_the_same_however_the_stream_is_cut(rows in 1usize..40, cut in 1usize..64) {
            let mut csv = String::from("id,note,key\n");
            for i in 0..rows {
                csv.push_str(&format!("{i},\"line\nbreak, and \"\"quotes\"\"\",\"k,{i}\"\n"));
            }
            let mut records = Records::new(Dialect::CSV, 1, true);
            let mut out = Vec::new();
            for piece in csv.as_bytes().chunks(cut) {
                records.feed(piece, &mut out);
            }
            prop_assert_eq!(records.rows, rows as u64);
            let last = format!("k,{}", rows - 1);
            prop_assert_eq!(records.last_key(), vec![Some(last)]);
            prop_assert_eq!(String::from_utf8(out).unwrap().lines().count(), 1 + 2 * rows);
        }
    }
}
