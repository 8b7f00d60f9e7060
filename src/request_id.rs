//! Request ids: `req_` followed by 32 lowercase hex digits, fresh for every request. The id is
//! sent in the `Service-Request-Id` header, repeated as `request_id` in error bodies, and
//! written in the access log line, so a partner quoting it lets an operator find the request.
//! It is built on the stack from a random UUID (thread-local generator, no lock, no syscall).

use actix_web::http::header::HeaderValue;

const PREFIX: &[u8; 4] = b"req_";
const LEN: usize = PREFIX.len() + uuid::fmt::Simple::LENGTH;

/// One request's id.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RequestId([u8; LEN]);

impl RequestId {
    /// A fixed id for examples in the documentation.
    pub const EXAMPLE: RequestId = RequestId(*b"req_8f2d0c6e4b1a4f3e9d7c5b3a1f0e2d4c");

    /// A new random id.
    pub fn generate() -> Self {
        let mut bytes = [0u8; LEN];
        bytes[..PREFIX.len()].copy_from_slice(PREFIX);
        uuid::Uuid::new_v4()
            .simple()
            .encode_lower(&mut bytes[PREFIX.len()..]);
        RequestId(bytes)
    }

    pub fn as_str(&self) -> &str {
        // The bytes are the ASCII prefix and lowercase hex digits written above.
        std::str::from_utf8(&self.0).expect("request ids are ASCII")
    }

    /// The header value, marked for HTTP/2 (HPACK) as never to be indexed: an id never
    /// repeats, so adding it to the connection's header table would only push out entries
    /// that do repeat.
    pub fn to_header_value(self) -> HeaderValue {
        let mut value = HeaderValue::from_bytes(&self.0).expect("request ids are visible ASCII");
        value.set_sensitive(true);
        value
    }
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn has_the_contract_shape_and_is_fresh() {
        let first = RequestId::generate();
        let second = RequestId::generate();
        for id in [first, second] {
            let hex = id.as_str().strip_prefix("req_").unwrap();
            assert_eq!(hex.len(), 32);
            assert!(
                hex.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            );
            assert_eq!(id.to_header_value().to_str().unwrap(), id.as_str());
            assert!(id.to_header_value().is_sensitive());
        }
        assert_ne!(first, second);
    }
}
