//! Where `doc_url` in error bodies points: the configured public URL, or the origin the client
//! addressed when it is a plain host (with the scheme a trusted proxy recorded, else the
//! listener's), else the address the service listens on.

use std::net::SocketAddr;
use std::sync::Arc;

use crate::edge::byte_set::ByteSet;
use crate::edge::client::ForwardedScheme;
use crate::errors::DocsOrigin;

/// The bytes of a `Host` echoed into a link: a name, an IPv4 address or a bracketed IPv6
/// address, and a port.
static PLAIN_HOST: ByteSet = ByteSet::alphanumeric_and(b".-:[]");

/// Where the `doc_url` links of error bodies point: the rule, decided at start; for one
/// response, [`DocLinks::resolve`] gives the origin itself (`errors::DocsOrigin`).
#[derive(Clone, Debug)]
pub enum DocLinks {
    /// A configured origin (and optional path prefix), without a trailing slash.
    Fixed { base: Arc<str> },
    /// The origin the client addressed: `scheme://<Host header>`, or the listening address
    /// when the request has no usable `Host`.
    OwnOrigin {
        /// `http://` or `https://`.
        scheme_prefix: &'static str,
        /// `<scheme>://<listening address>`, written once.
        listening: Arc<str>,
    },
}

impl DocLinks {
    /// A configured origin.
    pub fn fixed(base: Arc<str>) -> DocLinks {
        DocLinks::Fixed { base }
    }

    /// The origin the served OpenAPI documents name: the configured public URL, else the
    /// listener's own (`http://127.0.0.1:8080` for a local run). Never a request's `Host`: a
    /// document is the same for every client and cacheable.
    pub fn document_origin(&self) -> Arc<str> {
        match self {
            DocLinks::Fixed { base } => Arc::clone(base),
            DocLinks::OwnOrigin { listening, .. } => Arc::clone(listening),
        }
    }

    /// The configured public URL, when there is one.
    pub fn configured(&self) -> Option<&str> {
        match self {
            DocLinks::Fixed { base } => Some(base),
            DocLinks::OwnOrigin { .. } => None,
        }
    }

    /// The client's view of this server: `scheme` (`http` or `https`) and the bound address.
    pub fn own_origin(scheme: &'static str, local_addr: SocketAddr) -> DocLinks {
        DocLinks::OwnOrigin {
            scheme_prefix: if scheme == "https" {
                "https://"
            } else {
                "http://"
            },
            listening: format!("{scheme}://{local_addr}").into(),
        }
    }

    /// The origin for a request addressed to `host` (its `Host`, or HTTP/2's `:authority`)
    /// that a trusted proxy says came over `forwarded` (behind a proxy that ends TLS, the
    /// listener's own `http` is not what the client used), borrowed in pieces: a flood of
    /// error responses allocates nothing for it.
    pub(crate) fn resolve<'a>(
        &'a self,
        host: Option<&'a [u8]>,
        forwarded: Option<ForwardedScheme>,
    ) -> DocsOrigin<'a> {
        match self {
            DocLinks::Fixed { base } => DocsOrigin::from_parts(base, ""),
            DocLinks::OwnOrigin {
                scheme_prefix,
                listening,
            } => {
                // Only a plain host[:port] that addressing accepts is echoed (one reading of
                // `Host`: a value refused with a 400 is never linked to); anything else falls
                // back to our address.
                let host = host
                    .filter(|host| {
                        !host.is_empty()
                            && super::addressing::is_host(host)
                            && host.iter().all(|byte| PLAIN_HOST.contains(*byte))
                    })
                    .and_then(|host| std::str::from_utf8(host).ok());
                let scheme_prefix = match forwarded {
                    Some(ForwardedScheme::Https) => "https://",
                    Some(ForwardedScheme::Http) => "http://",
                    None => scheme_prefix,
                };
                match host {
                    Some(host) => DocsOrigin::from_parts(scheme_prefix, host),
                    None => DocsOrigin::from_parts(listening, ""),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_origin_follows_a_valid_host_header_only() {
        let base = DocLinks::own_origin("http", "127.0.0.1:8080".parse().unwrap());
        assert_eq!(
            base.resolve(Some(b"api.example.test:8443"), None)
                .to_string(),
            "http://api.example.test:8443"
        );
        assert_eq!(
            base.resolve(Some(b"evil.test/path?x"), None).to_string(),
            "http://127.0.0.1:8080"
        );
        // Characters a host may have, but a port out of range or a colon too many: refused
        // with a 400 by addressing, so never echoed.
        for refused in [&b"evil.example:99999"[..], b"evil.example:80:80", b"[::1"] {
            assert_eq!(
                base.resolve(Some(refused), None).to_string(),
                "http://127.0.0.1:8080",
                "{}",
                String::from_utf8_lossy(refused)
            );
        }
        assert_eq!(
            base.resolve(None, None).to_string(),
            "http://127.0.0.1:8080"
        );
        let base = DocLinks::own_origin("https", "[::1]:8443".parse().unwrap());
        assert_eq!(base.resolve(None, None).to_string(), "https://[::1]:8443");
    }

    /// Behind a proxy that ends TLS the listener speaks plain HTTP; the scheme the proxy
    /// recorded wins, and a configured URL wins over both.
    #[test]
    fn a_forwarded_scheme_replaces_the_listeners() {
        let base = DocLinks::own_origin("http", "127.0.0.1:8080".parse().unwrap());
        assert_eq!(
            base.resolve(Some(b"api.example.test"), Some(ForwardedScheme::Https))
                .to_string(),
            "https://api.example.test"
        );
        let fixed = DocLinks::fixed("https://partners.example.test".into());
        assert_eq!(
            fixed
                .resolve(Some(b"api.example.test"), Some(ForwardedScheme::Http))
                .to_string(),
            "https://partners.example.test"
        );
    }
}
