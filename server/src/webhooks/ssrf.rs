//! What webhooks may reach (docs/api/event_destinations.md, SSRF): only public addresses.
//! Without `--allow-private-webhooks` a webhook may not target loopback, private (RFC 1918,
//! carrier-grade NAT 100.64/10, IPv6 unique-local fc00::/7), link-local (169.254/16, fe80::/10,
//! where cloud metadata services answer), unspecified, multicast, broadcast or reserved
//! addresses, those reserved for documentation, benchmarks and protocols (192.0.2/24,
//! 198.18/15, 2001:db8::/32, …), nor those written in IPv6 forms embedding an IPv4 address (mapped, compatible,
//! NAT64, 6to4), nor a metadata host name. Otherwise any API key holder could make the server
//! send requests into its own network.
//!
//! Checked twice: when a URL is stored (a name that does not resolve yet is accepted: it may
//! resolve later) and at every send, where [`PublicOnly`] is the HTTP client's resolver, so the
//! client connects only to addresses that passed the check (a name re-pointed to a private
//! address after the first check gets nothing), and literal-IP hosts (which no resolver sees)
//! are checked by [`check_literal`].

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

/// The flag that lifts the rule, named in refusals.
const FLAG: &str = "--allow-private-webhooks";

/// How long the check at creation waits for a name to resolve.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(3);

/// Why webhooks may not reach `ip`; `None` for a public address.
pub fn forbidden(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => forbidden_v6(v6),
    }
}

/// What the special-purpose registries reserve for documentation, benchmarks and protocols:
/// never a webhook receiver's public address, and some labs and proxies use them inside.
const TESTING: &str = "documentation, benchmarking or protocol";

fn forbidden_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_private() || (a == 100 && (64..128).contains(&b)) {
        Some("private")
    } else if ip.is_link_local() {
        Some("link-local (cloud metadata)")
    } else if a == 0 {
        Some("unspecified")
    } else if ip.is_multicast() || ip.is_broadcast() || a >= 240 {
        Some("multicast, broadcast or reserved")
    } else if matches!(
        (a, b, c),
        // 192.0.0/24 protocol assignments, 192.0.2/24, 198.51.100/24 and 203.0.113/24 for
        // documentation, 192.88.99/24 the retired 6to4 relays, 198.18/15 benchmarking.
        (192, 0, 0 | 2) | (198, 51, 100) | (203, 0, 113) | (192, 88, 99) | (198, 18 | 19, _)
    ) {
        Some(TESTING)
    } else {
        None
    }
}

fn forbidden_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let segments = ip.segments();
    if ip.is_loopback() {
        return Some("loopback");
    }
    if ip.is_unspecified() {
        return Some("unspecified");
    }
    if let Some(v4) = embedded_v4(ip) {
        return forbidden_v4(v4);
    }
    if segments[0] & 0xfe00 == 0xfc00 || segments[..3] == [0x64, 0xff9b, 1] {
        // fc00::/7 unique local; 64:ff9b:1::/48 the local-use NAT64 prefix, which a network's
        // own translator may map to any of its IPv4 addresses (where in the address depends on
        // the prefix length it chose, so the whole prefix).
        Some("private")
    } else if segments[0] & 0xffc0 == 0xfe80 {
        Some("link-local (cloud metadata)")
    } else if ip.is_multicast() {
        Some("multicast, broadcast or reserved")
    } else if segments[0] & 0xffc0 == 0xfec0 {
        // The retired site-local fec0::/10, private in effect.
        Some("private")
    } else if (segments[0], segments[1]) == (0x2001, 0x0db8)
        || segments[0] & 0xfff0 == 0x3ff0
        || segments[..4] == [0x0100, 0, 0, 0]
    {
        // 2001:db8::/32 and 3fff::/20 for documentation, 100::/64 to discard.
        Some(TESTING)
    } else {
        None
    }
}

/// The IPv4 address an IPv6 address stands for: mapped (`::ffff:a.b.c.d`), translated
/// (`::ffff:0:a.b.c.d`), compatible (`::a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`) and 6to4
/// (`2002:aabb:ccdd::`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    match s {
        [0, 0, 0, 0, 0, 0xffff, _, _]
        | [0, 0, 0, 0, 0xffff, 0, _, _]
        | [0, 0, 0, 0, 0, 0, _, _] => Some(low),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(low),
        [0x2002, hi, lo, ..] => Some(Ipv4Addr::new(
            (hi >> 8) as u8,
            hi as u8,
            (lo >> 8) as u8,
            lo as u8,
        )),
        _ => None,
    }
}

/// Host names of cloud metadata services, refused by name whatever they resolve to (`localhost`
/// and the like are refused by what they resolve to).
fn forbidden_name(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "metadata.google.internal" || host == "metadata"
}

fn refusal(host: &str, ip: Option<IpAddr>, why: &str) -> String {
    // "an unspecified address", "a private address"
    let a = if why.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    match ip {
        // A host given as an address is not said twice ("`127.0.0.1` is 127.0.0.1").
        Some(ip) if host.trim_matches(['[', ']']) == ip.to_string() => format!(
            "refused: the webhook host `{host}` is {a} {why} address; webhooks may only reach public addresses (unless the server runs with {FLAG})"
        ),
        Some(ip) => format!(
            "refused: the webhook host `{host}` is {ip}, {a} {why} address; webhooks may only reach public addresses (unless the server runs with {FLAG})"
        ),
        None => format!(
            "refused: the webhook host `{host}` is {why}; webhooks may only reach public addresses (unless the server runs with {FLAG})"
        ),
    }
}

/// The check of a literal-IP host or a forbidden name in `url`, which needs no resolution:
/// `Err` with the refusal in words.
pub fn check_literal(url: &str) -> Result<(), String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("the webhook url is invalid: {e}"))?;
    match parsed.host() {
        Some(url::Host::Ipv4(ip)) => check_ip(&ip.to_string(), ip.into()),
        Some(url::Host::Ipv6(ip)) => check_ip(&ip.to_string(), ip.into()),
        Some(url::Host::Domain(name)) if forbidden_name(name) => {
            Err(refusal(name, None, "a cloud metadata host name"))
        }
        Some(url::Host::Domain(_)) => Ok(()),
        None => Err("the webhook url has no host".into()),
    }
}

fn check_ip(host: &str, ip: IpAddr) -> Result<(), String> {
    match forbidden(ip) {
        Some(why) => Err(refusal(host, Some(ip), why)),
        None => Ok(()),
    }
}

/// The check of a URL being stored: [`check_literal`], then every address its host resolves to
/// must be public. A name that does not resolve (now) is accepted; the send-time check applies.
pub async fn check_url(url: &str) -> Result<(), String> {
    check_literal(url)?;
    let parsed = url::Url::parse(url).map_err(|e| e.to_string())?;
    let Some(url::Host::Domain(name)) = parsed.host() else {
        return Ok(());
    };
    let port = parsed.port_or_known_default().unwrap_or(443);
    let resolved = tokio::time::timeout(RESOLVE_TIMEOUT, tokio::net::lookup_host((name, port)));
    let Ok(Ok(addrs)) = resolved.await else {
        return Ok(());
    };
    for addr in addrs {
        check_ip(name, addr.ip())?;
    }
    Ok(())
}

/// The HTTP client's resolver when private addresses are not allowed: the public addresses of a
/// name, an error naming the refused ones when it has none.
#[derive(Debug, Clone, Copy, Default)]
pub struct PublicOnly;

impl reqwest::dns::Resolve for PublicOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            if forbidden_name(&host) {
                return Err(refusal(&host, None, "a cloud metadata host name").into());
            }
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let public: Vec<SocketAddr> = addrs
                .iter()
                .copied()
                .filter(|a| forbidden(a.ip()).is_none())
                .collect();
            match (public.is_empty(), addrs.first()) {
                (false, _) => Ok(Box::new(public.into_iter()) as reqwest::dns::Addrs),
                (true, Some(first)) => {
                    let why = forbidden(first.ip()).unwrap_or("non-public");
                    Err(refusal(&host, Some(first.ip()), why).into())
                }
                (true, None) => Err(format!("`{host}` resolves to no address").into()),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_every_non_public_form() {
        for ip in [
            "127.0.0.1",
            "127.8.9.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "100.64.0.1",
            "100.127.255.255",
            "169.254.169.254",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fc00::1",
            "fd00:ec2::254",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::ffff:10.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::a00:1",
            "64:ff9b:1:a00:1::",
            "::ffff:0:a00:1",
            "::ffff:0:7f00:1",
            "2002:7f00:1::",
            "192.0.0.1",
            "192.0.2.1",
            "198.18.0.1",
            "198.19.255.254",
            "198.51.100.1",
            "203.0.113.1",
            "192.88.99.1",
            "2001:db8::1",
            "3fff::1",
            "100::1",
            "fec0::1",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert!(forbidden(ip).is_some(), "{ip} should be refused");
        }
        for ip in [
            "93.184.216.34",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "192.0.3.1",
            "198.17.255.1",
            "198.20.0.1",
            "203.0.114.1",
            "2001:db9::1",
            "100:0:0:1::1",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(forbidden(ip), None, "{ip} should be allowed");
        }
    }

    #[test]
    fn literal_hosts_and_names() {
        assert!(check_literal("http://127.0.0.1:9/h").is_err());
        let said = check_literal("http://0.0.0.0/h").unwrap_err();
        assert!(said.contains("is an unspecified address"), "{said}");
        let said = check_literal("http://10.0.0.1/h").unwrap_err();
        assert!(said.contains("is a private address"), "{said}");
        assert!(check_literal("http://[::ffff:7f00:1]/h").is_err());
        assert!(check_literal("http://169.254.169.254/latest").is_err());
        assert!(check_literal("http://metadata.google.internal/x").is_err());
        assert!(check_literal("http://METADATA.google.internal./x").is_err());
        assert!(check_literal("https://example.com/h").is_ok());
        let why = check_literal("http://10.0.0.1/").unwrap_err();
        assert!(why.contains("private") && why.contains(FLAG), "{why}");
        assert!(why.contains("`10.0.0.1` is a private address"), "{why}");
    }
}
