//! Cells a spreadsheet would run: a text cell that begins with one of
//! [`FORMULA_STARTS`] is read by Excel, LibreOffice and Google Sheets as a
//! formula (`=HYPERLINK(…)` in a customer's name). errand's CSV files
//! (exports, batch reports) write such a cell with a leading `'`, OWASP's
//! rule for CSV injection; numbers and other typed cells are left alone.

/// The first characters that make a text cell a formula.
pub const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// `cell`, defused: with a leading `'` if it would run as a formula.
pub fn defused(cell: &str) -> std::borrow::Cow<'_, str> {
    if cell.starts_with(FORMULA_STARTS) { format!("'{cell}").into() } else { cell.into() }
}
