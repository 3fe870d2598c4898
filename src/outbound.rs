//! Where errand may send requests that a tenant chose the address of (its
//! webhook endpoints): HTTPS only, and never to a private, loopback,
//! link-local or otherwise non-public address, which would let a tenant
//! reach errand's own network (SSRF). Checked when an endpoint is registered
//! and again before each delivery, since DNS can change in between. Hosts
//! on `[webhooks] allow_hosts` are exempt from both rules (development,
//! tests).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

/// Why an address is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("the url is not a URL errand can call: {0}")]
    NotAUrl(String),
    #[error("the url must use https (its host is not on webhooks.allow_hosts)")]
    NotHttps,
    #[error("the url must not carry a user name or password")]
    Credentials,
    #[error("{host} resolves to {address}, which is not a public address")]
    NotPublic { host: String, address: IpAddr },
    #[error("{0} could not be resolved")]
    Unresolvable(String),
}

/// The rules, and the hosts exempt from them.
#[derive(Debug, Clone, Default)]
pub struct OutboundPolicy {
    allow_hosts: Vec<String>,
}

impl OutboundPolicy {
    pub fn new(allow_hosts: impl IntoIterator<Item = String>) -> Self {
        Self { allow_hosts: allow_hosts.into_iter().map(|host| host.to_ascii_lowercase()).collect() }
    }

    /// `raw` as a URL errand may call, by its form: absolute, HTTPS (HTTP for
    /// an allowed host), no credentials, and a literal address only if public.
    pub fn check_form(&self, raw: &str) -> Result<Url, Refused> {
        let url = Url::parse(raw).map_err(|e| Refused::NotAUrl(e.to_string()))?;
        let host = url.host().ok_or_else(|| Refused::NotAUrl("it has no host".into()))?;
        let allowed = self.is_allowed(&host);
        match url.scheme() {
            "https" => {}
            "http" if allowed => {}
            "http" => return Err(Refused::NotHttps),
            other => return Err(Refused::NotAUrl(format!("the scheme {other} is not http(s)"))),
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(Refused::Credentials);
        }
        let literal = match host {
            Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
            Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
            Host::Domain(_) => None,
        };
        match literal {
            Some(address) if !allowed && !is_public(address) => {
                Err(Refused::NotPublic { host: url.host_str().unwrap_or_default().to_owned(), address })
            }
            _ => Ok(url),
        }
    }

    /// [`Self::check_form`], then every address the host resolves to must
    /// be public (unless the host is allowed).
    pub async fn check(&self, raw: &str) -> Result<Url, Refused> {
        let url = self.check_form(raw)?;
        let host = url.host_str().unwrap_or_default().trim_start_matches('[').trim_end_matches(']').to_owned();
        if url.host().is_some_and(|h| self.is_allowed(&h)) {
            return Ok(url);
        }
        let port = url.port_or_known_default().unwrap_or(443);
        let addresses: Vec<_> = tokio::net::lookup_host((host.as_str(), port))
            .await
            .map_err(|_| Refused::Unresolvable(host.clone()))?
            .collect();
        if addresses.is_empty() {
            return Err(Refused::Unresolvable(host));
        }
        match addresses.iter().map(|a| a.ip()).find(|ip| !is_public(*ip)) {
            Some(address) => Err(Refused::NotPublic { host, address }),
            None => Ok(url),
        }
    }

    fn is_allowed(&self, host: &Host<&str>) -> bool {
        let name = match host {
            Host::Domain(name) => name.to_ascii_lowercase(),
            Host::Ipv4(ip) => ip.to_string(),
            Host::Ipv6(ip) => ip.to_string(),
        };
        self.allow_hosts.iter().any(|allowed| allowed.trim_start_matches('[').trim_end_matches(']') == name)
    }
}

/// Whether `ip` is an address of the public internet: not private,
/// loopback, link-local, shared (CGNAT), unspecified, broadcast,
/// multicast, documentation or reserved; IPv4-mapped IPv6 as its IPv4.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    let shared = a == 100 && (64..128).contains(&b); // 100.64.0.0/10
    let this_network = a == 0; // 0.0.0.0/8
    let reserved = a >= 240; // 240.0.0.0/4, broadcast included
    let benchmarking = a == 198 && (b == 18 || b == 19); // 198.18.0.0/15
    let protocol_assignments = a == 192 && b == 0 && ip.octets()[2] == 0; // 192.0.0.0/24
    !(ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_multicast()
        || ip.is_documentation()
        || shared
        || this_network
        || reserved
        || benchmarking
        || protocol_assignments)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let documentation = ip.segments()[0] == 0x2001 && ip.segments()[1] == 0x0db8; // 2001:db8::/32
    let nat64 = ip.segments()[..6] == [0x64, 0xff9b, 0, 0, 0, 0]; // 64:ff9b::/96 reaches IPv4 space
    !(ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || ip.is_unique_local()
        || ip.is_unicast_link_local()
        || documentation
        || nat64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn policy() -> OutboundPolicy {
        OutboundPolicy::new(["localhost".to_owned(), "127.0.0.1".to_owned()])
    }

    #[test]
    fn only_https_to_public_addresses_unless_the_host_is_allowed() {
        let strict = OutboundPolicy::default();
        assert!(strict.check_form("https://hooks.example.com/in").is_ok());
        assert!(strict.check_form("https://93.184.216.34/in").is_ok());
        assert_eq!(strict.check_form("http://hooks.example.com/in"), Err(Refused::NotHttps));
        assert_eq!(strict.check_form("https://u:p@hooks.example.com/"), Err(Refused::Credentials));
        for private in [
            "https://127.0.0.1/",
            "https://10.1.2.3/",
            "https://[::1]/",
            "https://169.254.169.254/latest",
            "https://[::ffff:192.168.1.1]/",
            "https://100.64.0.1/",
            "https://0.0.0.0/",
            "https://[fd00::1]/",
        ] {
            assert!(matches!(strict.check_form(private), Err(Refused::NotPublic { .. })), "{private}");
        }
        assert!(matches!(strict.check_form("ftp://hooks.example.com/"), Err(Refused::NotAUrl(_))));
        assert!(matches!(strict.check_form("not a url"), Err(Refused::NotAUrl(_))));
        // Allowed hosts may use http and private addresses: development and tests.
        assert!(policy().check_form("http://127.0.0.1:9000/in").is_ok());
        assert!(policy().check_form("http://LOCALHOST:9000/in").is_ok());
        assert_eq!(policy().check_form("http://10.0.0.1/in"), Err(Refused::NotHttps));
    }

    #[tokio::test]
    async fn a_name_is_refused_for_what_it_resolves_to() {
        let strict = OutboundPolicy::default();
        assert!(matches!(strict.check("https://localhost/in").await, Err(Refused::NotPublic { .. })));
        assert!(policy().check("http://localhost:9/in").await.is_ok(), "an allowed host is not resolved");
    }

    proptest! {
        #[test]
        fn private_loopback_link_local_and_shared_v4_ranges_are_never_public(
            host in any::<u32>(), range in 0usize..6,
        ) {
            let (base, bits): (u32, u32) = [
                (0x0a00_0000, 8), (0xac10_0000, 12), (0xc0a8_0000, 16), (0x7f00_0000, 8), (0xa9fe_0000, 16), (0x6440_0000, 10),
            ][range];
            let ip = Ipv4Addr::from(base | (host >> bits));
            prop_assert!(!is_public(IpAddr::V4(ip)), "{}", ip);
            prop_assert!(!is_public(IpAddr::V6(ip.to_ipv6_mapped())), "{} mapped", ip);
        }
    }
}
