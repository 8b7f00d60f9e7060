//! How many header fields a request may have and how many bytes they may take: the same
//! limits on HTTP/1.1 and HTTP/2, answered with the catalogue's 431.

use actix_web::http::header::HeaderMap;

use crate::errors::{ApiError, ErrorCode};

/// How many header fields a request may have and how many bytes they may take, on HTTP/1.1 and
/// HTTP/2 alike. HTTP/2 announces the byte limit and its `h2` layer refuses a larger header
/// list before keeping it; the field count, which HTTP/2 has no setting for, and both limits
/// below the HTTP/1.1 parser's own (96 fields, 128 KiB) are held here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeaderLimits {
    pub fields: usize,
    /// Counted as HTTP/2 counts a header list (RFC 9113, 6.5.2): each field's name and value
    /// plus 32 bytes.
    pub bytes: usize,
}

impl HeaderLimits {
    /// The limits HTTP/1.1's parser applies by itself.
    pub const HTTP1: HeaderLimits = HeaderLimits {
        fields: 96,
        bytes: 128 * 1024,
    };

    /// The 431 for a head refused before its fields could be counted (by the HTTP/1.1
    /// parser's own limits, or HTTP/2's announced list size): the message gives the limits, as
    /// the catalogue promises, since which one was passed is not known. HTTP/1.1's parser
    /// counts the whole head as sent, the request line included.
    pub fn refusal(&self) -> ApiError {
        ApiError::new(ErrorCode::RequestHeaderTooLarge).with_message(format!(
            "The request head is over a limit: at most {} header fields are accepted, taking at \
             most {} bytes (each field's name and value plus 32); over HTTP/1.1 the whole head, \
             request line included, may take at most {} bytes.",
            self.fields,
            self.bytes,
            HeaderLimits::HTTP1.bytes
        ))
    }

    /// The 431 for `headers`, when they are over a limit.
    pub fn check(&self, headers: &HeaderMap) -> Option<ApiError> {
        if headers.len() > self.fields {
            return Some(
                ApiError::new(ErrorCode::RequestHeaderTooLarge).with_message(format!(
                    "The request has {} header fields; at most {} are accepted.",
                    headers.len(),
                    self.fields
                )),
            );
        }
        let bytes: usize = headers
            .iter()
            .map(|(name, value)| name.as_str().len() + value.len() + 32)
            .sum();
        (bytes > self.bytes).then(|| {
            ApiError::new(ErrorCode::RequestHeaderTooLarge).with_message(format!(
                "The request's header fields take {bytes} bytes (each field's name and value \
                 plus 32); at most {} are accepted.",
                self.bytes
            ))
        })
    }
}
