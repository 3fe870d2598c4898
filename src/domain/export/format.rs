//! The file formats an export writes. A job's format is part of what was
//! asked for: chosen by the request (`?format=xlsx`) among those its type
//! offers, kept with the job, and part of its fingerprint.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The file format of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ExportFormat {
    /// RFC 4180 CSV with a header row, UTF-8.
    #[serde(rename = "csv")]
    Csv,
    /// The same CSV, gzip-compressed as it streams.
    #[serde(rename = "csv.gz")]
    CsvGz,
    /// An Excel workbook: a header row, frozen; numbers, dates and booleans
    /// as such, all other cells as text (never a formula).
    #[serde(rename = "xlsx")]
    Xlsx,
    /// One JSON object per line.
    #[serde(rename = "ndjson")]
    Ndjson,
}

impl ExportFormat {
    /// Every format, in the order the API documents them.
    pub const ALL: [ExportFormat; 4] = [Self::Csv, Self::CsvGz, Self::Xlsx, Self::Ndjson];

    /// The format's name in the API and the configuration (`csv.gz`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Csv => "csv",
            Self::CsvGz => "csv.gz",
            Self::Xlsx => "xlsx",
            Self::Ndjson => "ndjson",
        }
    }

    /// The file name's extension (the format's name).
    pub fn extension(self) -> &'static str {
        self.as_str()
    }

    /// The file's media type, as downloads are served.
    pub fn content_type(self) -> &'static str {
        match self {
            Self::Csv => "text/csv; charset=utf-8",
            Self::CsvGz => "application/gzip",
            Self::Xlsx => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            Self::Ndjson => "application/x-ndjson",
        }
    }
}

impl fmt::Display for ExportFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A format name errand does not write.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format {0:?}: csv, csv.gz, xlsx or ndjson")]
pub struct UnknownFormat(pub String);

impl FromStr for ExportFormat {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|f| f.as_str() == s).ok_or_else(|| UnknownFormat(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_as_the_format_they_name() {
        for format in ExportFormat::ALL {
            assert_eq!(format.as_str().parse::<ExportFormat>(), Ok(format));
            assert_eq!(serde_json::to_value(format).unwrap(), format.as_str());
        }
        assert!("CSV".parse::<ExportFormat>().is_err());
        assert!("gz".parse::<ExportFormat>().is_err());
    }
}
