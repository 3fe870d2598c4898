//! The `COPY … TO STDOUT` statement of a text export (CSV, csv.gz, NDJSON),
//! and how errand reads its records (`Records`), built per attempt around
//! the query as described in the attempt's transaction.
//!
//! PostgreSQL does as little as it can: a first CSV attempt copies the
//! query as it is. Formula cells are defused, and the resume key read, by
//! errand as the records stream past (a CSV's key columns are among its
//! own; NDJSON appends them as fields of their own, which errand cuts). A
//! resumed attempt copies the rows after the last key written, its columns
//! renamed by position inside (so duplicate or odd names are kept as they
//! were).

use tokio_postgres::Column;
use tokio_postgres::types::{Kind, Type};

use super::query::quote_identifier;
use super::records::{Dialect, Records};
use crate::domain::ExportFormat;

/// What the statement writes beside the query's rows.
pub(super) struct TextCopy<'a> {
    pub query: &'a str,
    pub columns: &'a [Column],
    pub format: ExportFormat,
    /// Text cells a spreadsheet would run get a leading `'` (CSV).
    pub defuse: bool,
    /// The resume key's columns, by position.
    pub keys: &'a [usize],
    /// Only rows after the key in the settings `errand.key_1`, `errand.key_2`, …
    /// (a resumed attempt's; it writes no header).
    pub after_key: bool,
}

impl TextCopy<'_> {
    pub(super) fn statement(&self) -> String {
        let query = self.query;
        if self.columns.is_empty() || (self.format != ExportFormat::Ndjson && !self.after_key) {
            return match self.format {
                ExportFormat::Ndjson => {
                    format!("COPY (SELECT row_to_json(q) FROM ({query}) q) TO STDOUT WITH ({NDJSON})")
                }
                _ => format!("COPY ({query}) TO STDOUT WITH (FORMAT csv, HEADER true, ENCODING 'UTF8')"),
            };
        }
        let filter = if self.after_key { after_key_filter(self.columns, self.keys) } else { String::new() };
        let aliases: Vec<String> = (1..=self.columns.len()).map(|i| format!("c{i}")).collect();
        let from = format!("FROM ({query}) AS q ({}){filter}", aliases.join(", "));
        match self.format {
            // The object's keys are the query's column names: built from
            // them, not from the positional aliases; the resume key after it.
            ExportFormat::Ndjson => {
                let pairs: Vec<String> = self
                    .columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| format!("{}, q.c{}", literal(c.name()), i + 1))
                    .collect();
                let keys = self.keys.iter().map(|&i| format!(", q.c{}::text", i + 1)).collect::<String>();
                format!(
                    "COPY (SELECT json_build_object({})::text{keys} {from}) TO STDOUT WITH ({NDJSON})",
                    pairs.join(", ")
                )
            }
            _ => {
                let cells: Vec<String> = self
                    .columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| format!("q.c{} AS {}", i + 1, quote_identifier(c.name())))
                    .collect();
                format!(
                    "COPY (SELECT {} {from}) TO STDOUT WITH (FORMAT csv, HEADER false, ENCODING 'UTF8')",
                    cells.join(", ")
                )
            }
        }
    }

    /// How the statement's records are read.
    pub(super) fn records(&self) -> Records {
        if self.format == ExportFormat::Ndjson {
            // The object, then the keys (when the query has columns).
            let keys = if self.columns.is_empty() { 0 } else { self.keys.len() };
            return Records::new(Dialect::NDJSON, keys, (1..=keys).collect(), Vec::new(), false);
        }
        let defused = self.columns.iter().map(|c| self.defuse && is_text(c.type_())).collect();
        Records::new(Dialect::CSV, 0, self.keys.to_vec(), defused, !self.after_key)
    }
}

/// ` WHERE (q.c<key>, …) > (…)`: the rows of `FROM (query) AS q (c1, c2, …)`
/// after the resume key in the read's settings `errand.key_1`, `errand.key_2`, …
/// (as PostgreSQL writes it, read back as its column's type).
pub(super) fn after_key_filter(columns: &[Column], keys: &[usize]) -> String {
    let bounds: Vec<String> = (keys.iter().enumerate())
        .map(|(n, &i)| format!("CAST(current_setting('errand.key_{}') AS {})", n + 1, type_name(columns[i].type_())))
        .collect();
    let columns: Vec<String> = keys.iter().map(|&i| format!("q.c{}", i + 1)).collect();
    format!(" WHERE ({}) > ({})", columns.join(", "), bounds.join(", "))
}

/// NDJSON's `COPY` options: CSV quoting with a quote and a delimiter that
/// JSON text never holds raw (it escapes control characters), so each
/// object is written verbatim.
const NDJSON: &str = "FORMAT csv, QUOTE e'\\x01', DELIMITER e'\\x02', ENCODING 'UTF8'";

/// Whether a column's cells are text a person typed (a number, a date or a
/// JSON document never starts a formula by being written out).
fn is_text(column: &Type) -> bool {
    match column.kind() {
        Kind::Enum(_) => true,
        Kind::Domain(inner) => is_text(inner),
        _ => {
            matches!(*column, Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN)
                || column.name() == "citext"
        }
    }
}

/// Whether a resume key may be of this type: one whose text reads back as
/// the same value and which compares in order (no arrays, records or ranges).
pub(super) fn can_be_key(column: &Type) -> bool {
    match column.kind() {
        Kind::Simple | Kind::Enum(_) => true,
        Kind::Domain(inner) => can_be_key(inner),
        _ => false,
    }
}

/// The type as SQL names it, schema-qualified and quoted.
fn type_name(column: &Type) -> String {
    format!("{}.{}", quote_identifier(column.schema()), quote_identifier(column.name()))
}

/// `text` as an SQL string literal.
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}
