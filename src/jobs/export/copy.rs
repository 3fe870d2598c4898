//! The `COPY … TO STDOUT` statement of a text export (CSV, csv.gz, NDJSON),
//! built per attempt around the query as described in the attempt's
//! transaction: its columns by position (so duplicate or odd names are kept
//! as they were), text cells defused, the resume key's columns appended, and
//! a resumed attempt's rows after the last key written.

use tokio_postgres::Column;
use tokio_postgres::types::{Kind, Type};

use super::query::quote_identifier;
use super::records::Dialect;
use crate::domain::{ExportFormat, FORMULA_STARTS};

/// What the statement writes beside the query's rows.
pub(super) struct TextCopy<'a> {
    pub query: &'a str,
    pub columns: &'a [Column],
    pub format: ExportFormat,
    /// Text cells a spreadsheet would run get a leading `'` (CSV).
    pub defuse: bool,
    /// The resume key's columns, by position: appended to each row as
    /// fields of their own (`Records` cuts them off).
    pub keys: &'a [usize],
    /// Only rows after the key in the settings `errand.key_1`, `errand.key_2`, …
    /// (a resumed attempt's; it writes no header).
    pub after_key: bool,
}

impl TextCopy<'_> {
    /// How its records are quoted.
    pub(super) fn dialect(&self) -> Dialect {
        if self.format == ExportFormat::Ndjson { Dialect::NDJSON } else { Dialect::CSV }
    }

    /// Whether its first record is a header.
    pub(super) fn header(&self) -> bool {
        self.format != ExportFormat::Ndjson && !self.after_key
    }

    pub(super) fn statement(&self) -> String {
        let query = self.query;
        let keys: Vec<String> = self.keys.iter().map(|&i| format!("q.c{}::text", i + 1)).collect();
        let filter = if self.after_key {
            let bounds: Vec<String> = self
                .keys
                .iter()
                .enumerate()
                .map(|(n, &i)| {
                    format!("CAST(current_setting('errand.key_{}') AS {})", n + 1, type_name(self.columns[i].type_()))
                })
                .collect();
            let columns: Vec<String> = self.keys.iter().map(|&i| format!("q.c{}", i + 1)).collect();
            format!(" WHERE ({}) > ({})", columns.join(", "), bounds.join(", "))
        } else {
            String::new()
        };
        let aliases: Vec<String> = (1..=self.columns.len()).map(|i| format!("c{i}")).collect();
        let from = format!("FROM ({query}) AS q ({}){filter}", aliases.join(", "));
        let select = match self.format {
            // The object's keys are the query's column names: built from
            // them, not from the positional aliases.
            ExportFormat::Ndjson => {
                let pairs: Vec<String> = self
                    .columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| format!("{}, q.c{}", literal(c.name()), i + 1))
                    .collect();
                std::iter::once(format!("json_build_object({})::text", pairs.join(", ")))
                    .chain(keys)
                    .collect::<Vec<_>>()
            }
            _ => self.cells().chain(keys).collect(),
        };
        let options = match self.format {
            ExportFormat::Ndjson => "FORMAT csv, QUOTE e'\\x01', DELIMITER e'\\x02', ENCODING 'UTF8'".to_owned(),
            _ => format!("FORMAT csv, HEADER {}, ENCODING 'UTF8'", self.header()),
        };
        format!("COPY (SELECT {} {from}) TO STDOUT WITH ({options})", select.join(", "))
    }

    /// Each CSV column, under the query's own name: a text column's cells
    /// defused when asked (a cell beginning like a formula,
    /// `domain::FORMULA_STARTS`, gets a leading `'`, so no spreadsheet runs
    /// it; a text cell is written as `text`, so a `char(n)` loses its
    /// padding), any other as it is.
    fn cells(&self) -> impl Iterator<Item = String> + '_ {
        // The first characters of a formula as an SQL array of chr() calls,
        // so no quoting can slip.
        let starts = format!(
            "ARRAY[{}]",
            FORMULA_STARTS.iter().map(|c| format!("chr({})", u32::from(*c))).collect::<Vec<_>>().join(", ")
        );
        self.columns.iter().enumerate().map(move |(i, column)| {
            let (cell, name) = (format!("q.c{}", i + 1), quote_identifier(column.name()));
            if self.defuse && is_text(column.type_()) {
                format!(
                    "CASE WHEN left({cell}::text, 1) = ANY ({starts}) THEN '''' || {cell}::text ELSE {cell}::text END \
                     AS {name}"
                )
            } else {
                format!("{cell} AS {name}")
            }
        })
    }
}

/// The `COPY` of a query with no columns (nothing to rename or defuse).
pub(super) fn bare_copy(query: &str, format: ExportFormat) -> String {
    match format {
        ExportFormat::Ndjson => format!(
            "COPY (SELECT row_to_json(q) FROM ({query}) q) TO STDOUT \
             WITH (FORMAT csv, QUOTE e'\\x01', DELIMITER e'\\x02', ENCODING 'UTF8')"
        ),
        _ => format!("COPY ({query}) TO STDOUT WITH (FORMAT csv, HEADER true, ENCODING 'UTF8')"),
    }
}

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
