//! Where errand may send requests that a tenant chose the address of (its
//! webhook endpoints): HTTPS only, and never to a private, loopback,
//! link-local or otherwise non-public address, which would let a tenant
//! reach errand's own network (SSRF). Checked when an endpoint is registered,
//! and on every connection: the HTTP client resolves names through
//! [`CheckedResolver`], so it connects only to addresses that passed the
//! check (a name that answers a public address to a check and 127.0.0.1 to
//! the connection after it, DNS rebinding, gets nowhere). Hosts on
//! `[webhooks] allow_hosts` are exempt from both rules (development, tests).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

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
    // What a name resolves to is never said: an internal name's addresses
    // are none of the caller's business.
    #[error("{host} is not a public address")]
    NotPublic { host: String },
    #[error("{0} could not be resolved")]
    Unresolvable(String),
}

/// A stub resolver's answers, name by name.
#[cfg(test)]
type StubAnswers = Arc<dyn Fn(&str) -> Vec<IpAddr> + Send + Sync>;

/// Names to addresses: the system's resolver, or (in tests) a stub.
#[derive(Clone, Default)]
enum Lookup {
    #[default]
    System,
    #[cfg(test)]
    Stub(StubAnswers),
}

impl Lookup {
    async fn addresses(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, Refused> {
        match self {
            Self::System => Ok(tokio::net::lookup_host((host, port))
                .await
                .map_err(|_| Refused::Unresolvable(host.to_owned()))?
                .collect()),
            #[cfg(test)]
            Self::Stub(answer) => Ok(answer(host).into_iter().map(|ip| SocketAddr::new(ip, port)).collect()),
        }
    }
}

/// The rules, and the hosts exempt from them.
#[derive(Clone, Default)]
pub struct OutboundPolicy {
    allow_hosts: Arc<[String]>,
    lookup: Lookup,
}

impl std::fmt::Debug for OutboundPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutboundPolicy").field("allow_hosts", &self.allow_hosts).finish_non_exhaustive()
    }
}

impl OutboundPolicy {
    pub fn new(allow_hosts: impl IntoIterator<Item = String>) -> Self {
        Self {
            allow_hosts: allow_hosts.into_iter().map(|host| host.to_ascii_lowercase()).collect(),
            lookup: Lookup::System,
        }
    }

    /// A resolver for the HTTP client that sends to these URLs: it answers
    /// only addresses this policy lets errand connect to.
    pub fn resolver(&self) -> Arc<CheckedResolver> {
        Arc::new(CheckedResolver { policy: self.clone() })
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
                Err(Refused::NotPublic { host: url.host_str().unwrap_or_default().to_owned() })
            }
            _ => Ok(url),
        }
    }

    /// [`Self::check_form`], then every address the host resolves to must
    /// be public (unless the host is allowed). At registration, so a caller
    /// hears at once; a connection checks again (see [`CheckedResolver`]).
    pub async fn check(&self, raw: &str) -> Result<Url, Refused> {
        let url = self.check_form(raw)?;
        if let Some(Host::Domain(host)) = url.host() {
            self.addresses(host, url.port_or_known_default().unwrap_or(443)).await?;
        }
        Ok(url)
    }

    /// What `host` resolves to, if errand may connect to all of it: an
    /// allowed host's addresses as they are; another's only if every one is
    /// public (one private answer among public ones refuses the name).
    async fn addresses(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, Refused> {
        let addresses = self.lookup.addresses(host, port).await?;
        if addresses.is_empty() {
            return Err(Refused::Unresolvable(host.to_owned()));
        }
        if !self.is_allowed(&Host::Domain(host)) && addresses.iter().any(|a| !is_public(a.ip())) {
            return Err(Refused::NotPublic { host: host.to_owned() });
        }
        Ok(addresses)
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

/// Resolves names for an HTTP client to addresses errand may connect to
/// (reqwest's `dns_resolver`): the check and the connection see the same
/// answer, because it is the same lookup.
pub struct CheckedResolver {
    policy: OutboundPolicy,
}

impl reqwest::dns::Resolve for CheckedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let (policy, host) = (self.policy.clone(), name.as_str().to_owned());
        Box::pin(async move {
            // Port 0: reqwest puts the URL's port in.
            let addresses = policy.addresses(&host, 0).await?;
            Ok(Box::new(addresses.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// The refusal of errand's own behind an HTTP client's error, if that is what it is.
pub fn refusal_in<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a Refused> {
    std::iter::successors(Some(error), |e| e.source()).find_map(|e| e.downcast_ref::<Refused>())
}

/// Whether `ip` is an address of the public internet: not private,
/// loopback, link-local, shared (CGNAT), unspecified, broadcast,
/// multicast, documentation or reserved; IPv4-mapped IPv6 as its IPv4, and
/// no IPv6 form that carries IPv4 traffic elsewhere (see `is_public_v6`).
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

/// IPv6 that is neither special-purpose nor a tunnel into IPv4 space: the
/// embedded IPv4 address of those could be anything, a private one too.
fn is_public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    let ipv4_compatible = s[..6] == [0; 6]; // ::a.b.c.d (deprecated), :: and ::1 too
    let nat64 = s[..6] == [0x64, 0xff9b, 0, 0, 0, 0]; // 64:ff9b::/96
    let local_nat64 = s[..3] == [0x64, 0xff9b, 1]; // 64:ff9b:1::/48
    let discard = s[..4] == [0x100, 0, 0, 0]; // 100::/64
    let teredo = s[..2] == [0x2001, 0]; // 2001::/32
    let documentation = s[..2] == [0x2001, 0x0db8]; // 2001:db8::/32
    let six_to_four = s[0] == 0x2002; // 2002::/16
    let site_local = s[0] & 0xffc0 == 0xfec0; // fec0::/10 (deprecated)
    !(ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || ip.is_unique_local()
        || ip.is_unicast_link_local()
        || ipv4_compatible
        || nat64
        || local_nat64
        || discard
        || teredo
        || documentation
        || six_to_four
        || site_local)
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
    async fn a_name_is_refused_for_what_it_resolves_to_without_saying_what() {
        let strict = OutboundPolicy::default();
        let refused = strict.check("https://localhost/in").await.unwrap_err();
        assert_eq!(refused.to_string(), "localhost is not a public address");
        assert!(policy().check("http://localhost:9/in").await.is_ok(), "an allowed host is not resolved");
    }

    #[test]
    fn ipv6_forms_that_reach_ipv4_or_local_space_are_not_public() {
        let strict = OutboundPolicy::default();
        for tunnelled in [
            "https://[::127.0.0.1]/",
            "https://[::8.8.8.8]/",
            "https://[2002:7f00:1::1]/",
            "https://[64:ff9b::7f00:1]/",
            "https://[64:ff9b:1::a00:1]/",
            "https://[2001::1]/",
            "https://[2001:0:4136:e378::1]/",
            "https://[fec0::1]/",
            "https://[100::1]/",
            "https://[2001:db8::1]/",
        ] {
            assert!(matches!(strict.check_form(tunnelled), Err(Refused::NotPublic { .. })), "{tunnelled}");
        }
        assert!(strict.check_form("https://[2606:4700:4700::1111]/").is_ok());
        assert!(strict.check_form("https://[2001:4860:4860::8888]/").is_ok());
    }

    /// A name whose first answer is public and every later one this machine.
    fn rebinding(public: IpAddr) -> OutboundPolicy {
        let asked = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let lookup = Lookup::Stub(Arc::new(move |_| {
            let again = asked.swap(true, std::sync::atomic::Ordering::SeqCst);
            vec![if again { IpAddr::V4(Ipv4Addr::LOCALHOST) } else { public }]
        }));
        OutboundPolicy { allow_hosts: Arc::from([]), lookup }
    }

    #[tokio::test]
    async fn a_name_that_rebinds_to_this_machine_after_the_check_gets_no_connection() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let policy = rebinding("93.184.216.34".parse().unwrap());
        assert!(policy.check("https://rebind.test/in").await.is_ok(), "the first answer is public");

        let client = reqwest::Client::builder().no_proxy().dns_resolver(policy.resolver()).build().unwrap();
        let error = client.get(format!("http://rebind.test:{port}/in")).send().await.unwrap_err();
        assert_eq!(refusal_in(&error), Some(&Refused::NotPublic { host: "rebind.test".into() }), "{error:?}");
        let accepted = listener.accept();
        assert!(matches!(accepted, Err(ref e) if e.kind() == std::io::ErrorKind::WouldBlock), "{accepted:?}");
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
