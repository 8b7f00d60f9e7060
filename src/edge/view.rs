//! One view of a request, decided once at the edge (by the request-conventions middleware,
//! before anything else looks at the request) and read by everything after it: the path as
//! the router decodes and matches it, the route that path matches (or none), and the client.
//! The rate limiter picks its policy from it, the 404 and the 405 with `Allow` are answered
//! from it, the metrics label the request by its route and the access line logs its path.
//!
//! Why one view: when each part reads the raw request for itself, two spellings of one
//! request are two requests. `GET /v%31/ping` reached ping through the router, which decodes
//! `%31` to `1`, but the limiter read the raw path, saw no `/v1` and counted it under the
//! generous docs policy: a client got four times its quota by encoding one character.

use std::net::IpAddr;

use actix_web::HttpRequest;
use actix_web::dev::ServiceRequest;
use actix_web::http::Method;
use actix_web::http::uri::Uri;

use super::client::ClientResolver;
use super::routes::{API_PREFIX, RouteIndex, RouteTable};
use crate::auth::Caller;
use crate::auth::store::KeyStore;

/// What the service decided a request is; see the module documentation.
#[derive(Debug)]
pub struct RequestView {
    method: Method,
    /// The request target as sent: when it needed no decoding, the path.
    uri: Uri,
    /// The path as the router decoded it, when that differs from the path as sent.
    decoded: Option<Box<str>>,
    route: Option<RouteIndex>,
    client: Option<IpAddr>,
    /// Who the request's `Authorization` header says it comes from (`auth`).
    caller: Caller,
}

impl RequestView {
    /// Decides the view of `request`: the decoded path is the router's own (actix-web decodes
    /// every percent-encoded byte but `%`, `/` and `+` before matching, and the middleware
    /// runs after that), so the route found here is the one the router will take.
    /// Its key, when it has one, is looked up in `keys` once, here.
    pub fn of(
        request: &ServiceRequest,
        routes: &RouteTable,
        clients: &ClientResolver,
        keys: &KeyStore,
    ) -> Self {
        let uri = request.uri().clone();
        let routed = routed_path(request.request());
        let decoded = (routed != uri.path()).then(|| Box::from(routed));
        let route = routes.find(routed);
        let peer = request.peer_addr().map(|peer| peer.ip().to_canonical());
        let mut authorization = request
            .headers()
            .get_all(actix_web::http::header::AUTHORIZATION)
            .peekable();
        // Most requests carry no key: no clock is read for them.
        let caller = match authorization.peek() {
            None => Caller::Anonymous,
            Some(_) => Caller::of(authorization, keys, jiff::Timestamp::now()),
        };
        RequestView {
            caller,
            method: request.method().clone(),
            client: clients.resolve(peer, request.headers()),
            uri,
            decoded,
            route,
        }
    }

    pub fn method(&self) -> &Method {
        &self.method
    }

    /// The path as the router decoded and matched it. It may hold any byte a client
    /// percent-encoded (a line break, a quote): [`write_path_for_log`] writes it safely.
    pub fn path(&self) -> &str {
        self.decoded.as_deref().unwrap_or_else(|| self.uri.path())
    }

    /// The request target as sent.
    pub fn uri(&self) -> &Uri {
        &self.uri
    }

    /// The route the path matches, whatever the method; `None` when no route has this path.
    pub fn route(&self) -> Option<RouteIndex> {
        self.route
    }

    /// The client's address, from the socket or the one header a trusted proxy writes.
    pub fn client(&self) -> Option<IpAddr> {
        self.client
    }

    /// Who the request comes from, by its key.
    pub fn caller(&self) -> &Caller {
        &self.caller
    }

    /// Whether the request is for the API (its path, decoded, is under `/v1`) rather than the
    /// documentation or nothing at all.
    pub fn is_api(&self) -> bool {
        self.path()
            .strip_prefix(API_PREFIX)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    }
}

/// The path of `request` as the router decodes and matches it: the one reading of a request's
/// path, the view's and, for the handlers that ask, the request context's.
pub fn routed_path(request: &HttpRequest) -> &str {
    request.match_info().as_str()
}

/// Appends `path` to a log line, percent-encoding every byte that is not allowed as it is in
/// a URI path (RFC 3986, section 3.3: unreserved, sub-delims, `:`, `@`, `/`, and `%`): a
/// decoded path may hold a line break, a quote or a byte that is not ASCII, none of which
/// may reach a log line as it is. A path as sent needs no encoding, so it is copied.
pub fn write_path_for_log(out: &mut Vec<u8>, path: &str) {
    // A partner key a client put in its path is not logged (`redact`).
    match crate::redact::keys_masked(path) {
        std::borrow::Cow::Borrowed(path) => write_encoded(out, path),
        std::borrow::Cow::Owned(masked) => write_encoded(out, &masked),
    }
}

/// `path` as [`write_path_for_log`] writes it, keys masked already.
fn write_encoded(out: &mut Vec<u8>, path: &str) {
    if path.bytes().all(is_path_byte) {
        out.extend_from_slice(path.as_bytes());
        return;
    }
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for byte in path.bytes() {
        if is_path_byte(byte) {
            out.push(byte);
        } else {
            out.extend_from_slice(&[
                b'%',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 15)],
            ]);
        }
    }
}

/// The path as [`write_path_for_log`] writes it.
pub fn path_for_log(path: &str) -> String {
    let mut out = Vec::with_capacity(path.len());
    write_path_for_log(&mut out, path);
    String::from_utf8(out).expect("only ASCII is written")
}

/// The bytes a URI path holds as they are (RFC 3986, 3.3), and `%`.
fn is_path_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric()
        || is_unreserved_mark(byte)
        || is_sub_delim(byte)
        || matches!(byte, b':' | b'@' | b'/' | b'%')
}

/// RFC 3986, 2.3: `unreserved`, less the letters and digits.
pub fn is_unreserved_mark(byte: u8) -> bool {
    matches!(byte, b'-' | b'.' | b'_' | b'~')
}

/// RFC 3986, 2.2: `sub-delims`, `!$&'()*+,;=` (`&` to `,` are one run of ASCII).
pub fn is_sub_delim(byte: u8) -> bool {
    matches!(byte, b'!' | b'$' | b'&'..=b',' | b';' | b'=')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_character_classes_are_rfc_3986s_lists() {
        for byte in 0..=u8::MAX {
            assert_eq!(is_unreserved_mark(byte), b"-._~".contains(&byte), "{byte}");
            assert_eq!(is_sub_delim(byte), b"!$&'()*+,;=".contains(&byte), "{byte}");
            assert_eq!(
                is_path_byte(byte),
                byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/%".contains(&byte),
                "path byte {byte}"
            );
        }
    }

    #[test]
    fn a_path_as_sent_is_logged_as_it_is() {
        for path in ["/v1/ping", "/docs/", "/v1/things/th_1;a=b", "/%25/%2F"] {
            assert_eq!(path_for_log(path), path);
        }
    }

    #[test]
    fn a_key_in_a_path_is_masked() {
        let key = format!("pak_{}", "k".repeat(38));
        assert_eq!(
            path_for_log(&format!("/v1/{key}")),
            "/v1/pak_%5Bredacted%5D"
        );
    }

    #[test]
    fn bytes_that_would_break_a_log_line_are_encoded() {
        assert_eq!(path_for_log("/v1/a\nb"), "/v1/a%0Ab");
        assert_eq!(path_for_log("/\"x\" \\"), "/%22x%22%20%5C");
        assert_eq!(path_for_log("/caf\u{e9}"), "/caf%C3%A9");
        assert_eq!(path_for_log("/\u{0}\u{7f}"), "/%00%7F");
    }
}
