//! The one origin every link the service gives out names: `doc_url` in error bodies, and the
//! served documents' server, code samples, contact and feed. Decided once, at start: the
//! configured public URL, else the listener's own origin, where a wildcard listener (`0.0.0.0`,
//! `[::]`) is named by the loopback address of its family (start-up says so, and that
//! `--public-url` is what partners need). Never a request's `Host` nor a scheme a proxy
//! forwarded: no client can choose where the links given to another point, and every answer
//! names the same origin as the document.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use crate::errors::DocsOrigin;

/// Where the links point: an origin (with an optional path prefix), without a trailing slash.
#[derive(Clone, Debug)]
pub struct DocLinks {
    base: Arc<str>,
    configured: bool,
}

impl DocLinks {
    /// A configured origin (`--public-url`).
    pub fn fixed(base: Arc<str>) -> DocLinks {
        DocLinks {
            base,
            configured: true,
        }
    }

    /// The listener's own origin: `scheme` (`http` or `https`) and the bound address, a
    /// wildcard one as its loopback address.
    pub fn own_origin(scheme: &'static str, local_addr: SocketAddr) -> DocLinks {
        DocLinks {
            base: format!("{scheme}://{}", reachable_locally(local_addr)).into(),
            configured: false,
        }
    }

    /// The origin, for the served documents and everything written from them.
    pub fn document_origin(&self) -> Arc<str> {
        Arc::clone(&self.base)
    }

    /// The configured public URL, when there is one.
    pub fn configured(&self) -> Option<&str> {
        self.configured.then_some(&*self.base)
    }

    /// The origin of one answer's `doc_url`, borrowed: a flood of error responses allocates
    /// nothing for it.
    pub(crate) fn resolve(&self) -> DocsOrigin<'_> {
        DocsOrigin::from_parts(&self.base, "")
    }
}

/// `address` as a client on this machine reaches it: an unspecified address (`0.0.0.0`, `::`)
/// becomes the loopback address of its family.
pub fn reachable_locally(address: SocketAddr) -> SocketAddr {
    let mut address = address;
    if address.ip().is_unspecified() {
        address.set_ip(match address {
            SocketAddr::V4(_) => Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => Ipv6Addr::LOCALHOST.into(),
        });
    }
    address
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wildcard_listener_is_named_by_its_loopback_address() {
        let named = |scheme, address: &str| {
            DocLinks::own_origin(scheme, address.parse().unwrap())
                .resolve()
                .to_string()
        };
        assert_eq!(named("http", "0.0.0.0:8080"), "http://127.0.0.1:8080");
        assert_eq!(named("https", "[::]:8443"), "https://[::1]:8443");
        assert_eq!(named("http", "192.0.2.7:80"), "http://192.0.2.7:80");
        let own = DocLinks::own_origin("http", "0.0.0.0:8080".parse().unwrap());
        assert_eq!(own.configured(), None);
        assert_eq!(&*own.document_origin(), "http://127.0.0.1:8080");
    }

    #[test]
    fn a_configured_origin_is_every_links() {
        let fixed = DocLinks::fixed("https://partners.example.test/api".into());
        assert_eq!(
            fixed.configured(),
            Some("https://partners.example.test/api")
        );
        assert_eq!(
            fixed.resolve().to_string(),
            "https://partners.example.test/api"
        );
    }
}
