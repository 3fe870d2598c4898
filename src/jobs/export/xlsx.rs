//! XLSX: an Excel workbook written in constant memory (`rust_xlsxwriter`'s
//! constant-memory worksheets spill each row to a temporary file as soon as
//! the next begins), on a blocking thread fed rows through a channel, its
//! bytes handed back through another as the workbook is zipped.
//!
//! Numbers, booleans, dates and timestamps are written as such, every other
//! cell as text: nothing is ever written as a formula, so no cell of the
//! source can run. A header row (bold, frozen) names the columns. Excel holds
//! 1,048,576 rows a sheet: an export longer than that goes on in `Sheet2`,
//! with the header again.

use std::io::{self, Write};

use actix_web::web::Bytes;
use chrono::{Datelike, NaiveDate, NaiveDateTime, Timelike};
use rust_xlsxwriter::{ExcelDateTime, Format, Workbook, Worksheet, XlsxError};
use tokio::sync::mpsc;
use tokio_postgres::types::{Kind, Type};
use tokio_postgres::{Column, Row};

use super::copy::after_key_filter;
use super::query::quote_identifier;

/// Data rows of one sheet: Excel's 1,048,576 less the header.
const ROWS_PER_SHEET: u32 = 1_048_575;
/// Excel's longest text cell, in characters: longer text is cut there.
const MAX_TEXT_CHARS: usize = 32_767;
/// Bytes of the workbook gathered before they are handed to the upload.
const CHUNK: usize = 64 * 1024;

/// How a column's cells are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cell {
    Number,
    Boolean,
    Date,
    DateTime,
    Text,
}

impl Cell {
    fn of(column: &Type) -> Self {
        if let Kind::Domain(inner) = column.kind() {
            return Self::of(inner);
        }
        match *column {
            Type::INT2 | Type::INT4 | Type::INT8 | Type::FLOAT4 | Type::FLOAT8 | Type::NUMERIC | Type::OID => {
                Self::Number
            }
            Type::BOOL => Self::Boolean,
            Type::DATE => Self::Date,
            Type::TIMESTAMP | Type::TIMESTAMPTZ => Self::DateTime,
            _ => Self::Text,
        }
    }
}

/// How each of `columns`' cells is written.
pub(super) fn kinds(columns: &[Column]) -> Vec<Cell> {
    columns.iter().map(|c| Cell::of(c.type_())).collect()
}

/// The statement that reads `query`'s rows for a workbook: every column as
/// text (read back by its kind), a timestamp with time zone as the wall
/// clock of the session's time zone (Excel has no time zones; the CSV of
/// the same export shows the same time with its offset); then the resume
/// key's columns (by position, `keys`) as PostgreSQL writes them, which
/// the writer leaves out (see [`key_of`]); only the rows after the key in
/// the read's settings when `after_key`.
pub(super) fn select(query: &str, columns: &[Column], keys: &[usize], after_key: bool) -> String {
    if columns.is_empty() {
        return query.to_owned();
    }
    let cells = columns.iter().enumerate().map(|(i, column)| {
        let cell = format!("q.c{}", i + 1);
        let text = match *column.type_() {
            Type::TIMESTAMPTZ => format!("({cell} AT TIME ZONE current_setting('TimeZone'))::text"),
            _ => format!("{cell}::text"),
        };
        format!("{text} AS {}", quote_identifier(&format!("c{}", i + 1)))
    });
    let key_cells = keys.iter().map(|&i| format!("q.c{}::text", i + 1));
    let cells: Vec<String> = cells.chain(key_cells).collect();
    let aliases: Vec<String> = (1..=columns.len()).map(|i| format!("c{i}")).collect();
    let filter = if after_key { after_key_filter(columns, keys) } else { String::new() };
    format!("SELECT {} FROM ({query}) AS q ({}){filter}", cells.join(", "), aliases.join(", "))
}

/// The resume key of a row read by [`select`] with `keys` key columns
/// after its `cells` (`None` where a key is NULL: nothing can be read
/// after it).
pub(super) fn key_of(row: &Row, cells: usize, keys: usize) -> Option<Vec<String>> {
    (cells..cells + keys).map(|i| row.try_get::<_, Option<String>>(i).ok().flatten()).collect()
}

/// What the feeding side sends the writer.
pub(super) enum Feed {
    Rows(Vec<Row>),
    /// Every row was sent: save the workbook. A feed that stops without it
    /// failed, and no workbook is saved.
    End,
}

/// Writes the workbook of `rows` (read by [`select`]) under `header` to
/// `out`. Blocking: run it on a blocking thread. An error ends `out` with
/// it, so the upload fails rather than store a cut-short file.
pub(super) fn write(
    header: Vec<String>,
    kinds: Vec<Cell>,
    rows: mpsc::Receiver<Feed>,
    out: mpsc::Sender<Result<Bytes, String>>,
) -> Result<(), String> {
    let mut out = ChannelWriter { out, buffer: Vec::with_capacity(CHUNK) };
    let written = write_workbook(&header, &kinds, rows, &mut out);
    if let Err(error) = &written {
        // The upload may already have stopped; then there is no one to tell.
        let _ = out.out.blocking_send(Err(error.clone()));
    }
    written
}

fn write_workbook(
    header: &[String],
    kinds: &[Cell],
    mut rows: mpsc::Receiver<Feed>,
    out: &mut ChannelWriter,
) -> Result<(), String> {
    let failed = |error: XlsxError| format!("writing the workbook: {error}");
    let formats = Formats::new();
    let mut workbook = Workbook::new();
    let mut sheet = 0;
    add_sheet(&mut workbook, header, &formats).map_err(failed)?;
    let mut row_in_sheet: u32 = 0;
    loop {
        match rows.blocking_recv() {
            Some(Feed::Rows(batch)) => {
                for row in batch {
                    if row_in_sheet == ROWS_PER_SHEET {
                        add_sheet(&mut workbook, header, &formats).map_err(failed)?;
                        sheet += 1;
                        row_in_sheet = 0;
                    }
                    row_in_sheet += 1;
                    let worksheet = workbook.worksheet_from_index(sheet).map_err(failed)?;
                    for (col, kind) in kinds.iter().enumerate() {
                        let text: Option<&str> = row.try_get(col).map_err(|e| format!("reading a row: {e}"))?;
                        if let Some(text) = text {
                            // Columns are at most 1,664 in PostgreSQL; Excel takes 16,384.
                            write_cell(worksheet, row_in_sheet, col as u16, *kind, text, &formats).map_err(failed)?;
                        }
                    }
                }
            }
            Some(Feed::End) => break,
            None => return Err("the rows stopped before their end".into()),
        }
    }
    workbook.save_to_writer(&mut *out).map_err(failed)?;
    out.flush().map_err(|e| format!("handing the workbook over: {e}"))
}

struct Formats {
    header: Format,
    date: Format,
    datetime: Format,
}

impl Formats {
    fn new() -> Self {
        Self {
            header: Format::new().set_bold(),
            date: Format::new().set_num_format("yyyy-mm-dd"),
            datetime: Format::new().set_num_format("yyyy-mm-dd hh:mm:ss"),
        }
    }
}

/// A new constant-memory sheet, its header written and frozen.
fn add_sheet(workbook: &mut Workbook, header: &[String], formats: &Formats) -> Result<(), XlsxError> {
    let sheet = workbook.add_worksheet_with_constant_memory()?;
    for (col, name) in header.iter().enumerate() {
        sheet.write_string_with_format(0, col as u16, truncated(name), &formats.header)?;
    }
    sheet.set_freeze_panes(1, 0)?;
    Ok(())
}

fn write_cell(
    sheet: &mut Worksheet,
    row: u32,
    col: u16,
    kind: Cell,
    text: &str,
    formats: &Formats,
) -> Result<(), XlsxError> {
    match kind {
        Cell::Number => match text.parse::<f64>() {
            Ok(number) if number.is_finite() => return sheet.write_number(row, col, number).map(drop),
            _ => {}
        },
        // `bool::text` writes `true` and `false`.
        Cell::Boolean if text == "true" || text == "false" => {
            return sheet.write_boolean(row, col, text == "true").map(drop);
        }
        Cell::Date => {
            if let Some(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d").ok().and_then(excel_date) {
                return sheet.write_datetime_with_format(row, col, &date, &formats.date).map(drop);
            }
        }
        Cell::DateTime => {
            if let Some(at) = NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f").ok().and_then(excel_datetime)
            {
                return sheet.write_datetime_with_format(row, col, &at, &formats.datetime).map(drop);
            }
        }
        Cell::Boolean | Cell::Text => {}
    }
    // Text, and any value its kind cannot hold (NaN, infinity, a date
    // before 1900): as the text PostgreSQL wrote.
    sheet.write_string(row, col, truncated(text)).map(drop)
}

/// A date Excel can show (1900 to 9999).
fn excel_date(date: NaiveDate) -> Option<ExcelDateTime> {
    let year = u16::try_from(date.year()).ok().filter(|y| (1900..=9999).contains(y))?;
    ExcelDateTime::from_ymd(year, date.month() as u8, date.day() as u8).ok()
}

fn excel_datetime(at: NaiveDateTime) -> Option<ExcelDateTime> {
    let seconds = f64::from(at.second()) + f64::from(at.nanosecond()) / 1e9;
    excel_date(at.date())?.and_hms(at.hour() as u16, at.minute() as u8, seconds).ok()
}

/// `text`, cut to Excel's longest cell.
fn truncated(text: &str) -> &str {
    match text.char_indices().nth(MAX_TEXT_CHARS) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

/// The workbook's bytes, handed to the upload in chunks as they are written.
struct ChannelWriter {
    out: mpsc::Sender<Result<Bytes, String>>,
    buffer: Vec<u8>,
}

impl ChannelWriter {
    fn send(&mut self) -> io::Result<()> {
        let chunk = Bytes::from(std::mem::replace(&mut self.buffer, Vec::with_capacity(CHUNK)));
        self.out.blocking_send(Ok(chunk)).map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the upload stopped"))
    }
}

impl Write for ChannelWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buffer.extend_from_slice(data);
        if self.buffer.len() >= CHUNK {
            self.send()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buffer.is_empty() { Ok(()) } else { self.send() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_to_excel_s_longest_cell_on_a_character() {
        let long = "é".repeat(MAX_TEXT_CHARS + 5);
        assert_eq!(truncated(&long).chars().count(), MAX_TEXT_CHARS);
        assert_eq!(truncated("short"), "short");
    }

    #[test]
    fn dates_excel_cannot_show_stay_text() {
        let date = |text| NaiveDate::parse_from_str(text, "%Y-%m-%d").ok().and_then(excel_date);
        assert!(date("2026-12-05").is_some());
        assert!(date("1899-12-31").is_none());
        assert!(date("infinity").is_none());
    }
}
