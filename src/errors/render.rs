//! An error as the client receives it: the contract's JSON body, written directly (a test holds
//! it equal to serde's serialization of [`ErrorEnvelope`](super::ErrorEnvelope)), the status,
//! and the error's own headers (`Allow`, `Retry-After`), set on a response.

use std::fmt;

use actix_web::HttpResponse;
use actix_web::body::BoxBody;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};

use super::ApiError;
use super::catalogue::ErrorCode;
use super::schema::{ErrorEnvelope, ErrorObject};
use crate::request_id::RequestId;

impl ApiError {
    /// The complete response a client sees: status, headers and the contract's JSON body.
    pub fn to_response(&self, request_id: &RequestId, docs: DocsOrigin<'_>) -> HttpResponse {
        self.rendered(request_id, docs).into_new_response()
    }

    /// What this error's response consists of, written while the error is only borrowed (it
    /// is often attached to the very response that [`Rendered::into_response`] then rewrites).
    pub fn rendered(&self, request_id: &RequestId, docs: DocsOrigin<'_>) -> Rendered {
        Rendered {
            status: self.status(),
            allow: self.0.allow.clone(),
            retry_after_secs: self.0.retry_after_secs,
            challenge: challenge(self.code()),
            body: self.json(request_id.as_str(), docs),
        }
    }

    /// The body, exactly as serde serializes [`ErrorEnvelope`] (a test holds them equal), but
    /// written directly: every error response, 429s in a flood among them, pays for it, and serde
    /// escapes each string byte by byte (BENCHMARKS.md, "Speed tricks re-measured"). Every
    /// message is checked for what needs escaping, whoever wrote it.
    pub fn json(&self, request_id: &str, docs: DocsOrigin<'_>) -> Vec<u8> {
        let details = &*self.0;
        error_json(
            details.code,
            JsonText::Unchecked(&details.message),
            details.param.as_deref(),
            request_id,
            docs,
        )
    }

    /// The JSON body: `{"error": {...}}`.
    pub fn envelope<'a>(&'a self, request_id: &'a str, docs: DocsOrigin<'_>) -> ErrorEnvelope<'a> {
        let details = &*self.0;
        let spec = details.code.spec();
        ErrorEnvelope {
            error: ErrorObject {
                error_type: spec.error_type,
                code: details.code,
                message: &details.message,
                param: details.param.as_deref(),
                doc_url: format!("{docs}/docs/errors#{}", spec.code),
                request_id,
            },
        }
    }
}

/// A string for the error body: `Catalogue` for a catalogue's default message, which the
/// compiler has checked needs no escaping (`catalogue.rs` asserts it in a constant), so it is
/// copied without a scan; anything else is `Unchecked`.
enum JsonText<'a> {
    Catalogue(ErrorCode),
    Unchecked(&'a str),
}

/// The error body of [`ApiError::json`], from its parts.
fn error_json(
    code: ErrorCode,
    message: JsonText<'_>,
    param: Option<&str>,
    request_id: &str,
    docs: DocsOrigin<'_>,
) -> Vec<u8> {
    let spec = code.spec();
    let message_text = match message {
        JsonText::Catalogue(code) => code.spec().default_message,
        JsonText::Unchecked(text) => text,
    };
    let param_len = param.map_or(4, |param| param.len() + 2);
    // The fixed text is 93 bytes; an escaped string grows, and then the Vec does too.
    let mut out = Vec::with_capacity(
        93 + spec.error_type.as_str().len()
            + 2 * spec.code.len()
            + message_text.len()
            + 2
            + param_len
            + docs.len()
            + request_id.len(),
    );
    out.extend_from_slice(b"{\"error\":{\"type\":\"");
    out.extend_from_slice(spec.error_type.as_str().as_bytes());
    out.extend_from_slice(b"\",\"code\":\"");
    out.extend_from_slice(spec.code.as_bytes());
    out.extend_from_slice(b"\",\"message\":");
    match message {
        JsonText::Catalogue(_) => {
            out.push(b'"');
            out.extend_from_slice(message_text.as_bytes());
            out.push(b'"');
        }
        JsonText::Unchecked(message) => write_json_string(&mut out, message),
    }
    out.extend_from_slice(b",\"param\":");
    match param {
        Some(param) => write_json_string(&mut out, param),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"doc_url\":");
    if docs.plain {
        out.push(b'"');
        out.extend_from_slice(docs.pieces[0].as_bytes());
        out.extend_from_slice(docs.pieces[1].as_bytes());
        out.extend_from_slice(b"/docs/errors#");
        out.extend_from_slice(spec.code.as_bytes());
        out.push(b'"');
    } else {
        write_json_string(&mut out, &format!("{docs}/docs/errors#{}", spec.code));
    }
    // A request id is `req_` and hex digits: nothing to escape.
    out.extend_from_slice(b",\"request_id\":\"");
    out.extend_from_slice(request_id.as_bytes());
    out.extend_from_slice(b"\"}}");
    out
}

/// An error response's parts, from [`ApiError::rendered`] or [`Rendered::rate_limited`].
pub struct Rendered {
    status: StatusCode,
    allow: Option<HeaderValue>,
    retry_after_secs: Option<u64>,
    /// `WWW-Authenticate` of a 401 or 403 ([`challenge`]).
    challenge: Option<HeaderValue>,
    body: Vec<u8>,
}

impl Rendered {
    /// The 429 for a refused request, written straight from the catalogue: the one error a
    /// flood produces, so it allocates no `ApiError` on the way (BENCHMARKS.md, "Speed tricks
    /// re-measured").
    pub fn rate_limited(
        retry_after_secs: u64,
        request_id: &RequestId,
        docs: DocsOrigin<'_>,
    ) -> Self {
        let code = ErrorCode::RateLimited;
        let spec = code.spec();
        let message = JsonText::Catalogue(code);
        Rendered {
            status: spec.status,
            allow: None,
            retry_after_secs: Some(retry_after_secs.max(1)),
            challenge: None,
            body: error_json(code, message, None, request_id.as_str(), docs),
        }
    }

    /// The response on its own.
    pub fn into_new_response(self) -> HttpResponse {
        let status = self.status;
        self.into_response(HttpResponse::new(status))
    }

    /// Turns `response` (an error response that a handler, extractor or middleware built, or
    /// a new one) into this error's response: its status, body and the error's own headers are
    /// replaced; other headers already set on it are kept.
    pub fn into_response<B>(self, mut response: HttpResponse<B>) -> HttpResponse {
        *response.status_mut() = self.status;
        let headers = response.headers_mut();
        headers.remove(header::CONTENT_LENGTH);
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if let Some(allow) = self.allow {
            headers.insert(header::ALLOW, allow);
        }
        if let Some(secs) = self.retry_after_secs {
            headers.insert(header::RETRY_AFTER, seconds_header(secs));
        }
        if let Some(challenge) = self.challenge {
            headers.insert(header::WWW_AUTHENTICATE, challenge);
        }
        response.set_body(BoxBody::new(self.body))
    }
}

/// The `WWW-Authenticate` challenge of a refused key. RFC 9110 (15.5.2): a 401 MUST carry one;
/// RFC 6750 (3.1) words it for bearer tokens: no error attribute when the request sent no key,
/// `invalid_token` for a key that cannot be used, and `insufficient_scope` (on the 403) for a
/// valid key without the scope. The scope's name is in the body's message.
fn challenge(code: ErrorCode) -> Option<HeaderValue> {
    let value = match code {
        ErrorCode::KeyMissing => r#"Bearer realm="partner-api""#,
        ErrorCode::KeyMalformed
        | ErrorCode::KeyUnknown
        | ErrorCode::KeyExpired
        | ErrorCode::KeyRevoked => r#"Bearer realm="partner-api", error="invalid_token""#,
        ErrorCode::KeyScopeMissing => r#"Bearer realm="partner-api", error="insufficient_scope""#,
        _ => return None,
    };
    Some(HeaderValue::from_static(value))
}

/// A number of seconds as a header value; the usual waits (under ten seconds) are static text
/// rather than an allocation, since a flood of 429s sends one each (BENCHMARKS.md, "Speed tricks
/// re-measured").
fn seconds_header(secs: u64) -> HeaderValue {
    const DIGITS: [&str; 10] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];
    match DIGITS.get(secs as usize) {
        Some(digit) => HeaderValue::from_static(digit),
        None => HeaderValue::from(secs),
    }
}

/// Where `doc_url` points: an origin (with an optional path prefix, without a trailing
/// slash), in two pieces that are written one after the other, so that the usual
/// `scheme://` and `Host` need not be joined into a new string per error (BENCHMARKS.md, "Speed
/// tricks re-measured").
#[derive(Clone, Copy, Debug)]
pub struct DocsOrigin<'a> {
    pieces: [&'a str; 2],
    /// Neither piece needs escaping in a JSON string, so the body copies them as they are.
    plain: bool,
}

impl<'a> DocsOrigin<'a> {
    /// `first` then `second`; whether they need escaping is checked here, on every build.
    pub fn from_parts(first: &'a str, second: &'a str) -> Self {
        DocsOrigin {
            pieces: [first, second],
            plain: !needs_escaping(first) && !needs_escaping(second),
        }
    }

    fn len(&self) -> usize {
        self.pieces[0].len() + self.pieces[1].len()
    }
}

impl<'a> From<&'a str> for DocsOrigin<'a> {
    fn from(origin: &'a str) -> Self {
        DocsOrigin::from_parts(origin, "")
    }
}

impl fmt::Display for DocsOrigin<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.pieces[0])?;
        f.write_str(self.pieces[1])
    }
}

fn needs_escaping(text: &str) -> bool {
    text.bytes()
        .any(|byte| byte < 0x20 || byte == b'"' || byte == b'\\')
}

/// A JSON string: copied as it is when nothing in it needs escaping (the usual case), else
/// escaped by serde_json.
fn write_json_string(out: &mut Vec<u8>, text: &str) {
    if !needs_escaping(text) {
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
    } else {
        serde_json::to_writer(&mut *out, text).expect("writing to a Vec cannot fail");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::Method;

    use crate::errors::ApiError;

    #[test]
    fn catalogue_messages_need_no_escaping() {
        for code in ErrorCode::ALL {
            assert!(!needs_escaping(code.spec().default_message), "{code:?}");
        }
    }

    #[test]
    fn the_direct_json_is_what_serde_writes_for_the_envelope() {
        let mut errors: Vec<ApiError> = ErrorCode::ALL.into_iter().map(ApiError::new).collect();
        errors.push(ApiError::parameter_unknown("nested.field"));
        errors.push(ApiError::parameter_unknown("quote\"back\\slash\u{1}ctrl é"));
        errors.push(ApiError::resource_missing(
            &Method::GET,
            "/v1/\"odd\"\n/path",
        ));
        for error in errors {
            for doc_links in ["https://api.example.com", "http://127.0.0.1:8080/pre\"fix"] {
                let docs = DocsOrigin::from(doc_links);
                let expected = serde_json::to_vec(
                    &error.envelope("req_0123456789abcdef0123456789abcdef", docs),
                )
                .unwrap();
                let written = error.json("req_0123456789abcdef0123456789abcdef", docs);
                // Sized exactly up front, unless something had to be escaped.
                if !written.contains(&b'\\') {
                    assert_eq!(written.capacity(), written.len(), "{error}");
                }
                assert_eq!(
                    String::from_utf8(written).unwrap(),
                    String::from_utf8(expected).unwrap()
                );
            }
        }
    }

    #[test]
    fn a_refusal_renders_like_the_rate_limited_error() {
        let docs = DocsOrigin::from("https://api.example.com");
        let refusal = Rendered::rate_limited(3, &RequestId::EXAMPLE, docs);
        let error = ApiError::rate_limited(3).rendered(&RequestId::EXAMPLE, docs);
        assert_eq!(refusal.status, error.status);
        assert_eq!(refusal.retry_after_secs, Some(3));
        assert_eq!(refusal.allow, None);
        assert_eq!(refusal.body, error.body);
        assert_eq!(
            Rendered::rate_limited(0, &RequestId::EXAMPLE, docs).retry_after_secs,
            Some(1)
        );
    }
}
