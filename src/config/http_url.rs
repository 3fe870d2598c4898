//! An `http://` or `https://` URL read from configuration, parsed when the
//! configuration loads, so a bad one stops errand naming its key.

use std::fmt;

use serde::{Deserialize, Deserializer};
use url::Url;

/// An absolute `http` or `https` URL with a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpUrl(Url);

impl HttpUrl {
    /// Parses `raw`, saying what is wrong in words fit for a configuration error.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let url = Url::parse(raw).map_err(|e| format!("{raw:?} is not a URL ({e})"))?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
            return Err(format!("{raw:?} must be an http:// or https:// URL with a host"));
        }
        Ok(Self(url))
    }

    /// The URL as parsed (`url` adds a `/` path to a bare host).
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// Whether its host is this machine's own (`localhost`, 127.0.0.0/8, `::1`):
    /// nobody else can reach it, and nothing sent to it crosses a network.
    pub fn is_loopback(&self) -> bool {
        is_loopback_host(self.0.host_str().unwrap_or_default())
    }

    /// Whether it is plain `http://` to a host other than this machine's.
    pub fn is_plain_http_off_loopback(&self) -> bool {
        self.0.scheme() == "http" && !self.is_loopback()
    }

    /// Whether it carries a `?query` or `#fragment`: a base for links must not.
    pub fn has_query_or_fragment(&self) -> bool {
        self.0.query().is_some() || self.0.fragment().is_some()
    }

    /// `path` (which starts with `/`) below this URL's own path, so a base of
    /// `https://example.com/errand` makes `https://example.com/errand/jobs/1`.
    pub fn join_path(&self, path: &str) -> String {
        format!("{}{path}", self.0.as_str().trim_end_matches('/'))
    }
}

/// Whether `host` (a name, an IPv4 address or a bracketed IPv6 one) is this machine's own.
pub fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

impl fmt::Display for HttpUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for HttpUrl {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        Self::parse(&raw).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_join_below_the_base_path_with_one_slash() {
        for (base, link) in [
            ("https://errand.example.com", "https://errand.example.com/jobs/1"),
            ("https://errand.example.com/", "https://errand.example.com/jobs/1"),
            ("https://example.com/errand", "https://example.com/errand/jobs/1"),
            ("https://example.com/errand/", "https://example.com/errand/jobs/1"),
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080/jobs/1"),
        ] {
            assert_eq!(HttpUrl::parse(base).unwrap().join_path("/jobs/1"), link, "{base}");
        }
    }

    #[test]
    fn only_http_urls_with_a_host_are_accepted() {
        for bad in ["errand.example.com", "ftp://example.com", "mailto:a@example.com", "http://", "file:///tmp"] {
            assert!(HttpUrl::parse(bad).is_err(), "{bad}");
        }
        assert!(HttpUrl::parse("https://example.com/?a=1").unwrap().has_query_or_fragment());
        assert!(!HttpUrl::parse("https://example.com/errand").unwrap().has_query_or_fragment());
    }
}
