//! What a request says it addresses, held to RFC 9112 and RFC 9113 before it is routed: at most
//! one `Host` field, holding a host name or address with an optional port (RFC 9112, 3.2: "A
//! server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1 request message
//! that lacks a Host header field and to any request message that contains more than one Host
//! header field line or a Host header field with an invalid field value"); and, for HTTP/2,
//! a `:scheme` of `http` or `https`, the only ones this service answers for. The HTTP layer
//! checks neither: `Host: a b` and `:scheme foo` were served.
//!
//! An HTTP/2 request without `:authority` (it may use `Host`, or name no host) carries no
//! scheme here: `http::Uri` cannot hold a scheme without an authority, so h2 checks it is a
//! well-formed scheme and drops it. Such a request is served as the connection's own scheme;
//! nothing in the service reads the scheme another way, so there is no second view of it.

use actix_web::dev::ServiceRequest;
use actix_web::http::header;

use crate::edge::view::{is_sub_delim, is_unreserved_mark};
use crate::errors::{ApiError, ErrorCode};

/// The 400 for a request whose `Host` or scheme is not one this service can be addressed by.
pub(super) fn check(request: &ServiceRequest) -> Option<ApiError> {
    let mut hosts = request.headers().get_all(header::HOST);
    if let Some(host) = hosts.next()
        && (hosts.next().is_some() || !is_host(host.as_bytes()))
    {
        return Some(host_invalid());
    }
    // HTTP/2 carries the host in `:authority`, which may not have userinfo either (RFC 9113,
    // 8.3.1).
    if request
        .uri()
        .authority()
        .is_some_and(|authority| authority.as_str().contains('@'))
    {
        return Some(host_invalid());
    }
    if let Some(scheme) = request.uri().scheme_str()
        && !scheme.eq_ignore_ascii_case("http")
        && !scheme.eq_ignore_ascii_case("https")
    {
        return Some(
            ApiError::new(ErrorCode::RequestInvalid)
                .with_message("The request's scheme must be http or https."),
        );
    }
    None
}

fn host_invalid() -> ApiError {
    ApiError::new(ErrorCode::RequestInvalid).with_message(
        "The request must have one Host header holding a host name or address, with an \
         optional port.",
    )
}

/// `uri-host [ ":" port ]` (RFC 3986, 3.2.2 and 3.2.3): an IP literal in brackets, or a
/// registered name or IPv4 address of unreserved characters, percent-encodings and
/// sub-delimiters; the port all digits. An empty value is allowed (RFC 9112, 3.2: a request
/// whose target has no authority sends `Host` empty). `doc_url` links ([`super::origin`])
/// echo only a `Host` this accepts: a request refused for its `Host` is never pointed at it.
pub(super) fn is_host(value: &[u8]) -> bool {
    let (host, port) = match value.strip_prefix(b"[") {
        Some(literal) => match literal.iter().position(|byte| *byte == b']') {
            Some(end) => {
                // An IPv6 address, with a zone (RFC 6874, `%25` and the zone), or an
                // IPvFuture literal (`v1.x`).
                let address = &literal[..end];
                if address.is_empty() || !address.iter().all(|byte| is_ip_literal_byte(*byte)) {
                    return false;
                }
                match &literal[end + 1..] {
                    [] => return true,
                    [b':', port @ ..] => return is_port(port),
                    _ => return false,
                }
            }
            None => return false,
        },
        None => match value.iter().rposition(|byte| *byte == b':') {
            Some(colon) => (&value[..colon], &value[colon + 1..]),
            None => (value, &b""[..]),
        },
    };
    // An empty host with a port (`:80`) names no host: RFC 9110, 4.2.1, "A recipient that
    // processes such a URI reference MUST reject it as invalid". Only a wholly empty value is.
    (value.is_empty() || !host.is_empty())
        && is_port(port)
        && host.iter().all(|byte| is_reg_name_byte(*byte))
}

/// What may stand between the brackets of an IP literal.
fn is_ip_literal_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric()
        || is_unreserved_mark(byte)
        || is_sub_delim(byte)
        || matches!(byte, b':' | b'%')
}

/// What a registered name or an IPv4 address is made of.
fn is_reg_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || is_unreserved_mark(byte) || is_sub_delim(byte) || byte == b'%'
}

/// Empty, or digits naming a port (at most 65535).
fn is_port(port: &[u8]) -> bool {
    port.len() <= 5
        && port
            .iter()
            .try_fold(0_u32, |number, byte| {
                byte.is_ascii_digit()
                    .then(|| number * 10 + u32::from(byte - b'0'))
            })
            .is_some_and(|number| number <= 65_535)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_names_or_addresses_with_an_optional_port() {
        for good in [
            "localhost",
            "api.example.com",
            "api.example.com:8443",
            "127.0.0.1:8080",
            "[::1]",
            "[::1]:8080",
            "[2001:db8::1]:443",
            "[fe80::1%25lo]:80",
            "[v1.a]",
            "host:65535",
            "host:0",
            "host:00000",
            "[::1]:00080",
            "xn--bcher-kva.example",
            "",
            "host:",
        ] {
            assert!(is_host(good.as_bytes()), "{good:?}");
        }
        for bad in [
            "a b",
            "a\tb",
            "user@host",
            "host:80a",
            "[::1",
            "[::1]x",
            "[]",
            "[::1]:8a",
            "host/path",
            "h\u{e9}te",
            "a:b:c",
            "x:99999999999999999999",
            "host:65536",
            "host:99999",
            "host:000000",
            "host:+1",
            "host: 1",
            "host:1 ",
            "host:\u{661}",
            "[::1]:65536",
            ":80",
            ":",
        ] {
            assert!(!is_host(bad.as_bytes()), "{bad:?}");
        }
    }

    #[test]
    fn a_host_is_made_of_rfc_3986s_characters() {
        for byte in 0..=u8::MAX {
            let alphanumeric = byte.is_ascii_alphanumeric();
            assert_eq!(
                is_reg_name_byte(byte),
                alphanumeric || b"-._~%!$&'()*+,;=".contains(&byte),
                "reg-name byte {byte}"
            );
            assert_eq!(
                is_ip_literal_byte(byte),
                alphanumeric || b":.%-_~!$&'()*+,;=".contains(&byte),
                "IP literal byte {byte}"
            );
        }
    }
}
