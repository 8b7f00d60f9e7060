//! Who the client is. Normally the peer's IP address. When the peer is one of the configured
//! trusted proxies, the client is the rightmost address that is not itself a trusted proxy in
//! the one header the operator named as the one their proxy writes ([`ClientIpHeader`]:
//! `X-Forwarded-For` by default, or `Forwarded`, RFC 7239), as nginx's `real_ip_header` and
//! Envoy's `xff_num_trusted_hops` do. The other header is ignored entirely, whoever sent it: a
//! proxy appends to the header it writes and passes the other one on untouched, so a client
//! that sends `Forwarded` through a proxy that writes only `X-Forwarded-For` would otherwise
//! choose its own address, and with it its own rate-limit bucket. From a peer that is not a
//! trusted proxy both headers are ignored, because anyone can send them. The address is
//! resolved once per request, into the request view, and used by the access log and the rate
//! limiter alike.

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};
use std::str::FromStr;
use std::sync::Arc;

use actix_web::http::header::{self, HeaderMap, HeaderName};

/// An IP network in CIDR notation, e.g. `10.0.0.0/8` or `2001:db8::/32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpNetwork {
    address: IpAddr,
    prefix: u8,
}

impl IpNetwork {
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.address, ip.to_canonical()) {
            (IpAddr::V4(network), IpAddr::V4(ip)) => prefix_matches(
                network.to_bits().into(),
                ip.to_bits().into(),
                self.prefix,
                32,
            ),
            (IpAddr::V6(network), IpAddr::V6(ip)) => {
                prefix_matches(network.to_bits(), ip.to_bits(), self.prefix, 128)
            }
            _ => false,
        }
    }
}

fn prefix_matches(network: u128, ip: u128, prefix: u8, width: u8) -> bool {
    if prefix == 0 {
        return true;
    }
    let shift = width - prefix;
    (network >> shift) == (ip >> shift)
}

impl FromStr for IpNetwork {
    type Err = String;

    fn from_str(input: &str) -> Result<Self, String> {
        let (address, prefix) = match input.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (input, None),
        };
        let address: IpAddr = address
            .trim()
            .parse()
            .map_err(|_| format!("{input:?} is not an IP address or CIDR network"))?;
        let address = address.to_canonical();
        let width = if address.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => width,
            Some(prefix) => prefix
                .trim()
                .parse::<u8>()
                .ok()
                .filter(|prefix| *prefix <= width)
                .ok_or_else(|| format!("{input:?} has a prefix length outside 0..={width}"))?,
        };
        Ok(IpNetwork { address, prefix })
    }
}

impl fmt::Display for IpNetwork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.address, self.prefix)
    }
}

/// The one header the trusted proxies write the client's address into.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClientIpHeader {
    /// `X-Forwarded-For`: what HAProxy's `option forwardfor`, nginx's
    /// `$proxy_add_x_forwarded_for`, Envoy and the cloud load balancers write; the default.
    #[default]
    XForwardedFor,
    /// `Forwarded` (RFC 7239): HAProxy's `option forwarded` (2.7 and later), or a proxy told
    /// to write it.
    Forwarded,
}

impl ClientIpHeader {
    pub fn name(self) -> &'static str {
        match self {
            ClientIpHeader::XForwardedFor => "x-forwarded-for",
            ClientIpHeader::Forwarded => "forwarded",
        }
    }
}

impl ClientIpHeader {
    fn header_name(&self) -> &'static HeaderName {
        match self {
            ClientIpHeader::XForwardedFor => &X_FORWARDED_FOR,
            ClientIpHeader::Forwarded => &header::FORWARDED,
        }
    }
}

impl FromStr for ClientIpHeader {
    type Err = String;

    fn from_str(input: &str) -> Result<Self, String> {
        match input.trim().to_ascii_lowercase().as_str() {
            "x-forwarded-for" => Ok(ClientIpHeader::XForwardedFor),
            "forwarded" => Ok(ClientIpHeader::Forwarded),
            _ => Err(format!(
                "{input:?} is not x-forwarded-for or forwarded (the header the trusted proxies \
                 write)"
            )),
        }
    }
}

impl fmt::Display for ClientIpHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Resolves the client address of a request; cheap to clone into every worker.
#[derive(Clone, Debug, Default)]
pub struct ClientResolver {
    trusted_proxies: Arc<[IpNetwork]>,
    header: ClientIpHeader,
}

static X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");

impl ClientResolver {
    pub fn new(trusted_proxies: Vec<IpNetwork>, header: ClientIpHeader) -> Self {
        ClientResolver {
            trusted_proxies: trusted_proxies.into(),
            header,
        }
    }

    fn is_trusted(&self, ip: IpAddr) -> bool {
        self.trusted_proxies
            .iter()
            .any(|network| network.contains(ip))
    }

    /// Whether `peer` is one of the trusted proxies, whose connections carry many clients.
    pub fn is_trusted_proxy(&self, peer: IpAddr) -> bool {
        self.is_trusted(peer.to_canonical())
    }

    /// The client's address, or `None` when it cannot be determined (no peer address, or a
    /// trusted proxy that forwarded no usable address).
    pub fn resolve(&self, peer: Option<IpAddr>, headers: &HeaderMap) -> Option<IpAddr> {
        let peer = peer?.to_canonical();
        if self.trusted_proxies.is_empty() || !self.is_trusted(peer) {
            return Some(peer);
        }
        self.walk_hops(peer, headers).0
    }

    /// The walk of [`ClientResolver::resolve`] behind the trusted proxy `peer`: the client,
    /// and the place, counted from 0 at the right, of the element the walk settled on: the one
    /// the outermost trusted proxy wrote (the client's own record, or, when every hop is
    /// trusted, the leftmost; 0 when there is no element at all).
    fn walk_hops(&self, peer: IpAddr, headers: &HeaderMap) -> (Option<IpAddr>, usize) {
        // Hops are listed client first; walk back from the proxy nearest to us, reading each
        // element only when the walk reaches it: a client can make the header as long as it
        // likes, but only the hops from the last untrusted one rightwards are ever parsed. Only
        // the header the proxies write is read.
        let parse: fn(&str) -> Option<IpAddr> = match self.header {
            ClientIpHeader::Forwarded => forwarded_for,
            ClientIpHeader::XForwardedFor => parse_node,
        };
        let mut client = None;
        let mut read = 0;
        for (place, hop) in elements_from_the_right(headers, self.header.header_name())
            .map(parse)
            .enumerate()
        {
            read = place;
            match hop {
                Some(ip) if self.is_trusted(ip) => client = Some(ip),
                Some(ip) => return (Some(ip), place),
                // An obfuscated or unknown hop cannot be trusted or keyed.
                None => return (None, place),
            }
        }
        // Every hop is a trusted proxy: the leftmost is the furthest we know; with no
        // forwarding header at all, the trusted peer is all we have.
        (client.or(Some(peer)), read)
    }
}

/// The comma-separated elements of every line of a header, in order, split on the raw bytes.
/// An element that is not text counts as one that names no address, and only that element: a
/// proxy that merges lines (nginx's `$proxy_add_x_forwarded_for`) puts the client's bytes and
/// its own record on one line, and the proxy's record must still be read, or the client could
/// make itself the proxy, or unknown, with one odd byte.
/// They come last line first, each line's last element first: the order the walk reads them.
fn elements_from_the_right<'a>(
    headers: &'a HeaderMap,
    name: &'a HeaderName,
) -> impl Iterator<Item = &'a str> + 'a {
    headers
        .get_all(name)
        .rev()
        .flat_map(|value| value.as_bytes().rsplit(|byte| *byte == b','))
        .map(|element| std::str::from_utf8(element).map_or("unknown", str::trim))
        .filter(|element| !element.is_empty())
}

/// The `for=` node of one `Forwarded` element (RFC 7239, section 4).
fn forwarded_for(element: &str) -> Option<IpAddr> {
    element
        .split(';')
        .filter_map(|pair| pair.split_once('='))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("for"))
        .and_then(|(_, value)| parse_node(value.trim().trim_matches('"')))
}

/// A node: `192.0.2.1`, `192.0.2.1:443`, `[2001:db8::1]`, `[2001:db8::1]:443` or `2001:db8::1`.
fn parse_node(node: &str) -> Option<IpAddr> {
    let node = node.trim();
    if let Some(rest) = node.strip_prefix('[') {
        return rest
            .split(']')
            .next()?
            .parse::<Ipv6Addr>()
            .ok()
            .map(IpAddr::V6);
    }
    if let Ok(ip) = node.parse::<IpAddr>() {
        return Some(ip.to_canonical());
    }
    let (host, _port) = node.rsplit_once(':')?;
    host.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                HeaderName::from_static(name),
                HeaderValue::from_static(value),
            );
        }
        map
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn networks_parse_and_match() {
        let network: IpNetwork = "10.1.0.0/16".parse().unwrap();
        assert!(network.contains(ip("10.1.255.3")));
        assert!(!network.contains(ip("10.2.0.1")));
        assert!(network.contains(ip("::ffff:10.1.0.9")));
        let network: IpNetwork = "2001:db8::/32".parse().unwrap();
        assert!(network.contains(ip("2001:db8:1::5")));
        assert!(!network.contains(ip("2001:db9::5")));
        let single: IpNetwork = "192.0.2.7".parse().unwrap();
        assert_eq!(single.to_string(), "192.0.2.7/32");
        assert!(
            "0.0.0.0/0"
                .parse::<IpNetwork>()
                .unwrap()
                .contains(ip("8.8.8.8"))
        );
        for bad in ["10.0.0.0/33", "nope", "::/129", "10.0.0.0/x"] {
            assert!(bad.parse::<IpNetwork>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_header_setting_parses() {
        assert_eq!("X-Forwarded-For".parse(), Ok(ClientIpHeader::XForwardedFor));
        assert_eq!("forwarded".parse(), Ok(ClientIpHeader::Forwarded));
        assert!("x-real-ip".parse::<ClientIpHeader>().is_err());
    }

    #[test]
    fn without_trusted_proxies_forwarding_headers_are_ignored() {
        let resolver = ClientResolver::default();
        let spoofed = headers(&[("x-forwarded-for", "1.2.3.4"), ("forwarded", "for=5.6.7.8")]);
        assert_eq!(
            resolver.resolve(Some(ip("203.0.113.9")), &spoofed),
            Some(ip("203.0.113.9"))
        );
        assert_eq!(resolver.resolve(None, &spoofed), None);
    }

    #[test]
    fn an_untrusted_peer_cannot_spoof() {
        let resolver = ClientResolver::new(
            vec!["10.0.0.0/8".parse().unwrap()],
            ClientIpHeader::XForwardedFor,
        );
        let spoofed = headers(&[("x-forwarded-for", "1.2.3.4")]);
        assert_eq!(
            resolver.resolve(Some(ip("203.0.113.9")), &spoofed),
            Some(ip("203.0.113.9"))
        );
    }

    #[test]
    fn behind_trusted_proxies_the_rightmost_untrusted_hop_is_the_client() {
        let trusted = vec![
            "10.0.0.0/8".parse().unwrap(),
            "2001:db8:ffff::/48".parse().unwrap(),
        ];
        let resolver = ClientResolver::new(trusted.clone(), ClientIpHeader::XForwardedFor);
        let rfc7239 = ClientResolver::new(trusted, ClientIpHeader::Forwarded);
        let proxy = Some(ip("10.0.0.2"));
        // The client claims 1.1.1.1, the trusted proxies saw 198.51.100.7.
        let chain = headers(&[("x-forwarded-for", "1.1.1.1, 198.51.100.7, 10.0.0.9")]);
        assert_eq!(resolver.resolve(proxy, &chain), Some(ip("198.51.100.7")));
        let split = headers(&[
            ("x-forwarded-for", "1.1.1.1"),
            ("x-forwarded-for", "198.51.100.7"),
        ]);
        assert_eq!(resolver.resolve(proxy, &split), Some(ip("198.51.100.7")));
        let forwarded = headers(&[(
            "forwarded",
            "for=1.1.1.1, for=\"[2001:db8:cafe::17]:4711\";proto=https, for=10.0.0.3:80",
        )]);
        assert_eq!(
            rfc7239.resolve(proxy, &forwarded),
            Some(ip("2001:db8:cafe::17"))
        );
        // Only the named header counts: the other one is the client's own invention.
        let both = headers(&[
            ("forwarded", "for=192.0.2.60"),
            ("x-forwarded-for", "192.0.2.99"),
        ]);
        assert_eq!(resolver.resolve(proxy, &both), Some(ip("192.0.2.99")));
        assert_eq!(rfc7239.resolve(proxy, &both), Some(ip("192.0.2.60")));
        let forged = headers(&[("forwarded", "for=192.0.2.60")]);
        assert_eq!(resolver.resolve(proxy, &forged), proxy);
        // Only trusted hops: the leftmost; no header: the proxy itself.
        let internal = headers(&[("x-forwarded-for", "10.9.9.9, 10.0.0.5")]);
        assert_eq!(resolver.resolve(proxy, &internal), Some(ip("10.9.9.9")));
        assert_eq!(resolver.resolve(proxy, &HeaderMap::new()), proxy);
        // An obfuscated hop cannot be keyed.
        let hidden = headers(&[("forwarded", "for=_hidden")]);
        assert_eq!(rfc7239.resolve(proxy, &hidden), None);
        let garbage = headers(&[("x-forwarded-for", "not-an-address")]);
        assert_eq!(resolver.resolve(proxy, &garbage), None);
        // Bytes that are not text, merged on one line with what the proxy appended: the
        // proxy's record still names the client (never the proxy itself, never unknown).
        let mut unreadable = HeaderMap::new();
        unreadable.append(
            HeaderName::from_static("x-forwarded-for"),
            HeaderValue::from_bytes(b"\xff, 198.51.100.7").unwrap(),
        );
        assert_eq!(
            resolver.resolve(proxy, &unreadable),
            Some(ip("198.51.100.7"))
        );
        // The odd element alone is unknown.
        let mut alone = HeaderMap::new();
        alone.append(
            HeaderName::from_static("x-forwarded-for"),
            HeaderValue::from_bytes(b"198.51.100.7, \xff").unwrap(),
        );
        assert_eq!(resolver.resolve(proxy, &alone), None);
    }
}
