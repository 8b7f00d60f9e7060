//! W3C Trace Context (<https://www.w3.org/TR/trace-context/>): the trace id of a partner's
//! `traceparent` header, so that the access line of a request names the partner's trace and an
//! operator can find it from either side. Only a well-formed header counts; anything else is
//! ignored, never an error (the recommendation says a malformed `traceparent` is discarded).

use actix_web::http::header::{HeaderMap, HeaderName};

/// The request header that carries the trace context.
pub const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");

/// A trace id: 32 lowercase hex digits, not all zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceId([u8; 32]);

impl TraceId {
    /// The trace id of the request's `traceparent`, when it has one that is well formed.
    pub fn of(headers: &HeaderMap) -> Option<TraceId> {
        TraceId::parse(headers.get(TRACEPARENT)?.as_bytes())
    }

    /// Reads `version-traceid-parentid-flags` (`00-<32 hex>-<16 hex>-<2 hex>`). Version `ff` is
    /// invalid; a later version may append fields after a `-`, which are ignored, as the
    /// recommendation asks; an all-zero trace or parent id is invalid.
    pub fn parse(value: &[u8]) -> Option<TraceId> {
        if value.len() < 55 {
            return None;
        }
        let (version, trace, parent, flags) =
            (&value[0..2], &value[3..35], &value[36..52], &value[53..55]);
        let dashes = value[2] == b'-' && value[35] == b'-' && value[52] == b'-';
        let well_formed = dashes
            && [version, trace, parent, flags].iter().all(|field| {
                field
                    .iter()
                    .all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'))
            });
        if !well_formed || version == b"ff" {
            return None;
        }
        // Version 00 is exactly 55 characters; later versions may add fields after a dash.
        let rest = &value[55..];
        if (version == b"00" && !rest.is_empty()) || (!rest.is_empty() && rest[0] != b'-') {
            return None;
        }
        if trace.iter().all(|byte| *byte == b'0') || parent.iter().all(|byte| *byte == b'0') {
            return None;
        }
        Some(TraceId(trace.try_into().expect("32 bytes")))
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("checked to be hex digits")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_well_formed_header_gives_its_trace_id() {
        let id = TraceId::parse(VALID.as_bytes()).unwrap();
        assert_eq!(id.as_str(), "4bf92f3577b34da6a3ce929d0e0e4736");
        // A future version may carry more fields.
        let future = format!("cc{}-extra", &VALID[2..]);
        assert_eq!(
            TraceId::parse(future.as_bytes()).unwrap().as_str(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
    }

    #[test]
    fn anything_malformed_is_ignored() {
        for bad in [
            "",
            "garbage",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
            "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
        ] {
            assert_eq!(TraceId::parse(bad.as_bytes()), None, "{bad}");
        }
    }
}
