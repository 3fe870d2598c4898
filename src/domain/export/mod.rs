//! What an export's file is: its format (`format.rs`) and the cells a
//! spreadsheet would run as formulas (`spreadsheet.rs`).

pub mod format;
pub mod spreadsheet;
