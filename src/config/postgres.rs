//! How errand reaches PostgreSQL: a database URL read as libpq reads it,
//! TLS included, for the pool and the listener alike.
//!
//! tokio-postgres knows `sslmode` `disable`, `prefer` and `require` and no
//! root certificate, so errand takes libpq's five modes and `sslrootcert`
//! out of the URL itself, hands tokio-postgres the rest, and connects
//! through rustls (`tokio-postgres-rustls`), verifying what the mode asks:
//!
//! | `sslmode` | TLS | the server's certificate |
//! |---|---|---|
//! | `disable` | never | |
//! | `prefer` (the default, as libpq's) | if the server offers it | not verified |
//! | `require` | always | not verified; with `sslrootcert`, as `verify-ca` (as libpq) |
//! | `verify-ca` | always | chains to `sslrootcert` |
//! | `verify-full` | always | chains to `sslrootcert` and names the host |
//!
//! `sslrootcert` is a PEM file of CA certificates, or `system` for the
//! Mozilla roots (`webpki-roots`) that public services' certificates chain to.

use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

/// libpq's `sslmode`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(text: &str) -> Result<Self, UrlError> {
        Ok(match text {
            "disable" => Self::Disable,
            "prefer" => Self::Prefer,
            "require" => Self::Require,
            "verify-ca" => Self::VerifyCa,
            "verify-full" => Self::VerifyFull,
            other => return Err(UrlError::SslMode(other.to_owned())),
        })
    }
}

/// Why a database URL cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum UrlError {
    #[error("{0}")]
    Parse(#[source] tokio_postgres::Error),
    #[error("sslmode {0:?} is none of disable, prefer, require, verify-ca, verify-full")]
    SslMode(String),
    #[error(
        "sslmode={0} verifies the server's certificate: give sslrootcert (a PEM file of CA certificates, or system)"
    )]
    NoRootCert(&'static str),
    #[error("sslrootcert {path}: {reason}")]
    RootCert { path: String, reason: String },
    #[error("TLS: {0}")]
    Tls(#[from] rustls::Error),
}

/// A database URL made ready to connect with.
#[derive(Clone)]
pub struct Connection {
    pub config: tokio_postgres::Config,
    pub tls: MakeRustlsConnect,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The config holds the password.
        f.debug_struct("Connection").field("hosts", &self.config.get_hosts()).finish_non_exhaustive()
    }
}

impl Connection {
    /// Reads `url` (a `postgres://` URL or libpq's `key=value` form).
    pub fn parse(url: &str) -> Result<Self, UrlError> {
        let (rest, mode, root) = take_tls_options(url);
        let mut config: tokio_postgres::Config = rest.parse().map_err(UrlError::Parse)?;
        let mode = mode.as_deref().map_or(Ok(SslMode::Prefer), SslMode::parse)?;
        config.ssl_mode(match mode {
            SslMode::Disable => tokio_postgres::config::SslMode::Disable,
            SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => tokio_postgres::config::SslMode::Require,
        });
        Ok(Self { config, tls: MakeRustlsConnect::new(client_config(mode, root.as_deref())?) })
    }
}

/// `url` without its `sslmode` and `sslrootcert`, and their values
/// (percent-decoded in a URL's query).
fn take_tls_options(url: &str) -> (String, Option<String>, Option<String>) {
    let (mut mode, mut root) = (None, None);
    let mut take = |key: &str, value: String| match key {
        "sslmode" => {
            mode = Some(value);
            true
        }
        "sslrootcert" => {
            root = Some(value);
            true
        }
        _ => false,
    };
    let decode = |text: &str| percent_encoding::percent_decode_str(text).decode_utf8_lossy().into_owned();
    let rest = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        match url.split_once('?') {
            Some((base, query)) => {
                let kept: Vec<&str> = query
                    .split('&')
                    .filter(|pair| {
                        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                        !take(&decode(key), decode(value))
                    })
                    .collect();
                if kept.is_empty() { base.to_owned() } else { format!("{base}?{}", kept.join("&")) }
            }
            None => url.to_owned(),
        }
    } else {
        let kept: Vec<&str> = url
            .split_whitespace()
            .filter(|word| {
                let (key, value) = word.split_once('=').unwrap_or((word, ""));
                !take(key.trim(), value.trim_matches('\'').to_owned())
            })
            .collect();
        kept.join(" ")
    };
    (rest, mode, root)
}

/// The rustls configuration `mode` asks for, trusting `root`.
fn client_config(mode: SslMode, root: Option<&str>) -> Result<ClientConfig, UrlError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone()).with_safe_default_protocol_versions()?;
    let roots = root.map(roots_from).transpose()?;
    let verifier: Arc<dyn ServerCertVerifier> = match (mode, roots) {
        (SslMode::VerifyFull, Some(roots)) => {
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider).build().map_err(tls_error)?
        }
        (SslMode::VerifyCa | SslMode::Require, Some(roots)) => Arc::new(ChainOnly(
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider).build().map_err(tls_error)?,
        )),
        (SslMode::VerifyFull, None) => return Err(UrlError::NoRootCert("verify-full")),
        (SslMode::VerifyCa, None) => return Err(UrlError::NoRootCert("verify-ca")),
        (SslMode::Disable | SslMode::Prefer | SslMode::Require, _) => {
            Arc::new(Unverified(provider.signature_verification_algorithms))
        }
    };
    Ok(builder.dangerous().with_custom_certificate_verifier(verifier).with_no_client_auth())
}

fn tls_error(error: rustls::client::VerifierBuilderError) -> UrlError {
    UrlError::Tls(rustls::Error::General(error.to_string()))
}

/// The CA certificates of `path` (PEM), or the Mozilla roots for `system`.
fn roots_from(path: &str) -> Result<RootCertStore, UrlError> {
    if path == "system" {
        return Ok(RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() });
    }
    let unreadable = |reason: String| UrlError::RootCert { path: path.to_owned(), reason };
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(path).map_err(|e| unreadable(e.to_string()))? {
        roots.add(cert.map_err(|e| unreadable(e.to_string()))?).map_err(|e| unreadable(e.to_string()))?;
    }
    if roots.is_empty() {
        return Err(unreadable("holds no certificate".into()));
    }
    Ok(roots)
}

/// `verify-ca`: the chain is verified, the name is not (a certificate is
/// checked for its name only after its chain, so a wrong name means a good chain).
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.0.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            verified => verified,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// `prefer` and `require` without a root certificate: encrypted, the
/// server not authenticated (as libpq). The handshake's signatures are
/// still checked, against the certificate the server sent.
#[derive(Debug)]
struct Unverified(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

/// What the server said, with its SQLSTATE (`FATAL: role "x" does not exist
/// (SQLSTATE 28000)`), or what stood between errand and the server, with
/// every cause (`error connecting to server: Connection refused (os error 111)`):
/// tokio-postgres's own message alone is "db error".
pub fn detail(error: &tokio_postgres::Error) -> String {
    if let Some(db) = error.as_db_error() {
        return format!("{}: {} (SQLSTATE {})", db.severity(), db.message(), db.code().code());
    }
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn only_the_tls_options_leave_a_url_and_the_rest_keeps_its_order(
            others in proptest::collection::vec(("[a-z_]{1,12}", "[A-Za-z0-9%.-]{0,12}"), 0..6),
            at in 0usize..7,
            mode in "(disable|prefer|require|verify-ca|verify-full)",
        ) {
            let others: Vec<(String, String)> =
                others.into_iter().filter(|(k, _)| k != "sslmode" && k != "sslrootcert").collect();
            let mut pairs: Vec<String> = others.iter().map(|(k, v)| format!("{k}={v}")).collect();
            pairs.insert(at.min(pairs.len()), format!("sslmode={mode}"));
            let (rest, taken, root) = take_tls_options(&format!("postgres://u@h/db?{}", pairs.join("&")));
            let kept: Vec<String> = others.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let expected = if kept.is_empty() { "postgres://u@h/db".to_owned() } else { format!("postgres://u@h/db?{}", kept.join("&")) };
            prop_assert_eq!(rest, expected);
            prop_assert_eq!(taken, Some(mode));
            prop_assert_eq!(root, None);
        }
    }

    #[test]
    fn the_tls_options_are_taken_out_of_either_form() {
        let (rest, mode, root) = take_tls_options(
            "postgres://u:p@db1:5432,db2:5432/e?sslmode=verify-full&connect_timeout=3&sslrootcert=%2Fca.pem",
        );
        assert_eq!(rest, "postgres://u:p@db1:5432,db2:5432/e?connect_timeout=3");
        assert_eq!((mode.as_deref(), root.as_deref()), (Some("verify-full"), Some("/ca.pem")));
        let (rest, mode, root) = take_tls_options("host=db user=u sslmode=require dbname=e");
        assert_eq!((rest.as_str(), mode.as_deref(), root), ("host=db user=u dbname=e", Some("require"), None));
        let (rest, mode, _) = take_tls_options("postgres://u@db/e?sslmode=disable");
        assert_eq!((rest.as_str(), mode.as_deref()), ("postgres://u@db/e", Some("disable")));
    }

    #[test]
    fn modes_map_to_what_tokio_postgres_negotiates() {
        use tokio_postgres::config::SslMode as Negotiated;
        let negotiated = |url: &str| Connection::parse(url).unwrap().config.get_ssl_mode();
        assert_eq!(negotiated("postgres://u@db/e"), Negotiated::Prefer);
        assert_eq!(negotiated("postgres://u@db/e?sslmode=disable"), Negotiated::Disable);
        assert_eq!(negotiated("postgres://u@db/e?sslmode=require"), Negotiated::Require);
        assert_eq!(negotiated("postgres://u@db/e?sslmode=verify-full&sslrootcert=system"), Negotiated::Require);
    }

    #[test]
    fn a_multi_host_url_keeps_its_hosts_and_timeouts_beside_the_tls_options() {
        let connection = Connection::parse(
            "postgres://errand@db1:5432,db2:5433/errand?target_session_attrs=read-write&connect_timeout=3\
             &sslmode=verify-full&sslrootcert=system&keepalives_idle=10&tcp_user_timeout=10",
        )
        .unwrap();
        let config = &connection.config;
        assert_eq!(config.get_hosts().len(), 2);
        assert_eq!(config.get_ports(), [5432, 5433]);
        assert_eq!(config.get_target_session_attrs(), tokio_postgres::config::TargetSessionAttrs::ReadWrite);
        assert_eq!(config.get_connect_timeout(), Some(&std::time::Duration::from_secs(3)));
        assert_eq!(config.get_tcp_user_timeout(), Some(&std::time::Duration::from_secs(10)));
        assert_eq!(config.get_ssl_mode(), tokio_postgres::config::SslMode::Require);
    }

    #[test]
    fn bad_tls_options_say_which_and_why() {
        let error = |url: &str| Connection::parse(url).unwrap_err().to_string();
        assert!(error("postgres://u@db/e?sslmode=always").contains("sslmode \"always\""));
        assert!(error("postgres://u@db/e?sslmode=verify-ca").contains("give sslrootcert"));
        let missing = error("postgres://u@db/e?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem");
        assert!(missing.starts_with("sslrootcert /nonexistent/ca.pem: "), "{missing}");
    }
}
