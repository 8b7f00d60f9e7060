//! Request input parsed at the edge. [`Path<T>`], [`Query<T>`] and [`Body<T>`] are the only
//! ways an endpoint reads its path parameters, its query string and its JSON body. Each
//! endpoint declares its types with `#[serde(deny_unknown_fields)]` (ping's are empty), so a
//! parameter the endpoint does not know is refused with `parameter_unknown` instead of being
//! silently ignored. Every failure maps to
//! a catalogue code with `param` naming the field (`a.b` for nested body fields), so a client
//! can act on it without reading the message.

use std::future::{Ready, ready};
use std::time::Duration;

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::web::BytesMut;
use actix_web::{FromRequest, HttpMessage, HttpRequest};
use futures_util::StreamExt;
use futures_util::future::{Either, LocalBoxFuture};
use serde::de::DeserializeOwned;
use serde::de::value::MapDeserializer;

use crate::errors::{ApiError, ErrorCode};

/// The query of an endpoint that takes no parameters: anything sent is refused as
/// `parameter_unknown`, never ignored.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoQuery {}

/// The body of an endpoint that takes none: no body, an empty one or `{}` is accepted, any
/// field is refused as `parameter_unknown`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoBody {}

/// How a request body is read: the most bytes accepted, and the longest wait for its next
/// piece. Registered as app data by the app factory.
#[derive(Clone, Copy, Debug)]
pub struct BodyLimit {
    /// Largest body accepted, in bytes; larger ones are `payload_too_large`.
    pub bytes: usize,
    /// A body that makes no progress for this long is `request_timeout` (the client stalled
    /// mid-body, or announced more than it sends).
    pub stall: Duration,
}

impl Default for BodyLimit {
    fn default() -> Self {
        BodyLimit {
            bytes: 64 * 1024,
            stall: Duration::from_secs(10),
        }
    }
}

/// The query string, parsed strictly into `T`.
#[derive(Debug)]
pub struct Query<T>(pub T);

impl<T: DeserializeOwned> FromRequest for Query<T> {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let query = req.query_string();
        if query.is_empty()
            && let Some(value) = from_no_fields()
        {
            return ready(Ok(Query(value)));
        }
        ready(parse_query(query).map(Query))
    }
}

/// Parses a query string; an absent or empty query string parses like `{}`.
pub fn parse_query<T: DeserializeOwned>(query: &str) -> Result<T, ApiError> {
    let pairs = form_urlencoded::parse(query.as_bytes());
    serde_path_to_error::deserialize(serde_urlencoded::Deserializer::new(pairs))
        .map_err(|error| field_error(error.path(), &error.inner().to_string()))
}

/// The path's parameters (`{thing}` in `/v1/things/{thing}`), parsed strictly into `T`: a
/// struct with one field per parameter, named as in the route's template. A value that does
/// not parse (`/v1/things/x` where the field is a number, or a type that checks its own
/// shape) is `parameter_invalid` naming the parameter. The values are the router's, decoded
/// from percent-encoding except `%25`, `%2F` and `%2B`, which stay as sent (so no parameter
/// holds a `/`).
#[derive(Debug)]
pub struct Path<T>(pub T);

impl<T: DeserializeOwned> FromRequest for Path<T> {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        // The same strict parser as the query's, over the parameters as name=value pairs.
        let pairs = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(req.match_info().iter())
            .finish();
        ready(parse_query(&pairs).map(Path))
    }
}

/// The request body, read as JSON into `T`. An empty body reads like `{}`, so endpoints whose
/// body has no required fields (ping) accept requests without one.
#[derive(Debug)]
pub struct Body<T>(pub T);

impl<T: DeserializeOwned + 'static> FromRequest for Body<T> {
    type Error = ApiError;
    type Future =
        Either<Ready<Result<Self, ApiError>>, LocalBoxFuture<'static, Result<Self, ApiError>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        // A request without a body (the usual GET) needs no reading, so no boxed future.
        if matches!(payload, Payload::None) || is_bodiless_upgrade(req) {
            return Either::Left(ready(absent_body().map(Body)));
        }
        let BodyLimit {
            bytes: limit,
            stall,
        } = req.app_data::<BodyLimit>().copied().unwrap_or_default();
        let declared_json = is_json(req);
        let declared_length = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse::<usize>().ok());
        let upgrade_length = declared_length.filter(|_| req.head().upgrade());
        let mut payload = payload.take();
        Either::Right(Box::pin(async move {
            // Refuse an announced oversize body before reading any of it.
            if declared_length.is_some_and(|length| length > limit) {
                return Err(too_large(limit));
            }
            let mut bytes = BytesMut::new();
            // Each piece must come within `stall` of the one before (nginx's
            // client_body_timeout): a client that stops sending holds the request no longer.
            while let Some(chunk) = actix_web::rt::time::timeout(stall, payload.next())
                .await
                .map_err(|_| body_stalled(stall))?
            {
                let chunk = chunk.map_err(|error| unreadable_body(&error, limit))?;
                if bytes.len() + chunk.len() > limit {
                    return Err(too_large(limit));
                }
                bytes.extend_from_slice(&chunk);
                // A request asking to upgrade is handed over to the end of the connection,
                // whatever its Content-Length: its body ends at the announced length (RFC 9112,
                // 6.3), and what follows is not read.
                if let Some(length) = upgrade_length
                    && bytes.len() >= length
                {
                    bytes.truncate(length);
                    break;
                }
            }
            // Over HTTP/2 every request has a payload stream, so a bodiless GET ends here.
            if bytes.is_empty() {
                return absent_body().map(Body);
            }
            if !declared_json {
                return Err(ApiError::new(ErrorCode::ContentTypeUnsupported));
            }
            parse_json(&bytes).map(Body)
        }))
    }
}

/// `T` from no fields at all, which is what an empty query string or an absent body means,
/// built without running a parser, since nearly every request has neither (BENCHMARKS.md,
/// "Speed tricks re-measured"). `None` when `T` has a required field: then the caller's parser runs on the
/// empty input and words the error.
fn from_no_fields<T: DeserializeOwned>() -> Option<T> {
    let no_fields =
        MapDeserializer::<_, serde::de::value::Error>::new(std::iter::empty::<(&str, &str)>());
    T::deserialize(no_fields).ok()
}

/// What an absent or empty body reads as: `{}`, built without the parser when it can be.
fn absent_body<T: DeserializeOwned>() -> Result<T, ApiError> {
    from_no_fields().map_or_else(|| parse_json(b"{}"), Ok)
}

/// A request asking to switch protocols (`Upgrade`) with no `Transfer-Encoding` and no
/// `Content-Length` (or `Content-Length: 0`). This service switches to no other protocol, so it answers such a
/// request as HTTP/1.1, and by RFC 9112 (6.3) its body is empty; the HTTP layer instead hands
/// over whatever follows the head as the body, to the end of the connection.
fn is_bodiless_upgrade(req: &HttpRequest) -> bool {
    req.head().upgrade()
        && !req.headers().contains_key(header::TRANSFER_ENCODING)
        && req
            .headers()
            .get(header::CONTENT_LENGTH)
            .is_none_or(|length| length.as_bytes() == b"0")
}

/// The 408 of a body that made no progress for `stall`.
fn body_stalled(stall: Duration) -> ApiError {
    ApiError::new(ErrorCode::RequestTimeout).with_message(format!(
        "The request body stopped arriving: nothing more came within {} s.",
        stall.as_secs()
    ))
}

fn is_json(req: &HttpRequest) -> bool {
    matches!(req.mime_type(), Ok(Some(mime)) if mime.essence_str() == "application/json")
}

fn too_large(limit: usize) -> ApiError {
    ApiError::new(ErrorCode::PayloadTooLarge).with_message(format!(
        "The request body is larger than the limit of {limit} bytes."
    ))
}

/// Parses a JSON body strictly into `T`, trailing content included.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    // Syntax first, so a malformed body is always `json_invalid`, even when a field the
    // endpoint does not know comes before the fault.
    serde_json::from_slice::<serde::de::IgnoredAny>(bytes).map_err(|error| json_invalid(&error))?;
    if bytes.trim_ascii_start().first() != Some(&b'{') {
        return Err(ApiError::new(ErrorCode::ParameterInvalid)
            .with_message("The request body must be a JSON object."));
    }
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let (path, inner) = (error.path().clone(), error.into_inner());
        match inner.classify() {
            serde_json::error::Category::Data => field_error(&path, &inner.to_string()),
            _ => json_invalid(&inner),
        }
    })?;
    deserializer.end().map_err(|error| json_invalid(&error))?;
    Ok(value)
}

/// `json_invalid`, in this service's words: where parsing stopped, never serde's text.
fn json_invalid(error: &serde_json::Error) -> ApiError {
    let (line, column) = (error.line(), error.column());
    let message = match error.classify() {
        serde_json::error::Category::Eof => format!(
            "The request body is not valid JSON: it ends before the JSON does (line {line}, \
             column {column})."
        ),
        _ => format!(
            "The request body is not valid JSON: parsing failed at line {line}, column {column}."
        ),
    };
    ApiError::new(ErrorCode::JsonInvalid).with_message(message)
}

/// A body that could not be read to its end, in this service's words: the framework's text
/// describes its internals (`payload reached EOF before completing: None`).
fn unreadable_body(error: &actix_web::error::PayloadError, limit: usize) -> ApiError {
    use actix_web::error::PayloadError;
    match error {
        PayloadError::Overflow => too_large(limit),
        PayloadError::Incomplete(_) => ApiError::new(ErrorCode::RequestInvalid)
            .with_message("The request body ended before the length it announced."),
        PayloadError::EncodingCorrupted => ApiError::new(ErrorCode::RequestInvalid)
            .with_message("The request body's transfer encoding is malformed."),
        _ => ApiError::new(ErrorCode::RequestInvalid),
    }
}

/// Turns a serde data error at `path` into the catalogue code a client can act on. serde
/// reports unknown and missing fields only through its message (`unknown field `x`, ...`,
/// `missing field `x``), which is stable across serde 1.x; the tests below pin it.
fn field_error(path: &serde_path_to_error::Path, message: &str) -> ApiError {
    let location = dotted(path);
    if let Some(rest) = message.strip_prefix("unknown field `") {
        // The path already ends with the unknown key.
        let name = location.unwrap_or_else(|| backticked(rest).to_owned());
        return ApiError::parameter_unknown(&name);
    }
    if let Some(rest) = message.strip_prefix("duplicate field `") {
        // `?limit=5&limit=6`: which one was meant cannot be known.
        let name = location.unwrap_or_else(|| backticked(rest).to_owned());
        return ApiError::new(ErrorCode::ParameterInvalid)
            .with_message(format!("The parameter {name} was given more than once."))
            .with_param(name);
    }
    if let Some(rest) = message.strip_prefix("missing field `") {
        // The path names the object that lacks the field.
        let field = backticked(rest);
        let name = match location {
            Some(parent) => format!("{parent}.{field}"),
            None => field.to_owned(),
        };
        return ApiError::new(ErrorCode::ParameterMissing)
            .with_message(format!("Missing required parameter: {name}"))
            .with_param(name);
    }
    match location {
        // A type of this service's that checks its own shape says what the value must be,
        // in words written for a client ([`invalid`]).
        Some(name) if let Some(requirement) = requirement(message) => {
            ApiError::new(ErrorCode::ParameterInvalid)
                .with_message(format!(
                    "Invalid value for parameter {name}: it {requirement}."
                ))
                .with_param(name)
        }
        // serde's text names Rust types and echoes the value; the message names the parameter.
        Some(name) => ApiError::new(ErrorCode::ParameterInvalid)
            .with_message(format!("Invalid value for parameter {name}."))
            .with_param(name),
        None => ApiError::new(ErrorCode::ParameterInvalid)
            .with_message("The request parameters must form a JSON object of named fields."),
    }
}

/// The error a type's `Deserialize` returns when a value does not have the shape it checks:
/// `requirement` says, for a client, what the value must be (`"must be a whole number from 1
/// to 100"`). It is a fixed text, never the value: a client's input never reaches a message.
/// The parameter's name is added where the error is turned into `parameter_invalid`.
pub fn invalid<E: serde::de::Error>(requirement: &'static str) -> E {
    E::custom(format_args!("{REQUIREMENT_MARK}{requirement}"))
}

/// The text of a value that must be a string meeting `requirement` (a type of this service's
/// that checks its own shape reads it this way, then checks it, failing with [`invalid`]): a
/// value of another type (a number, `null`, an object) fails with the same requirement as a
/// string of the wrong shape, while a field that is missing stays `parameter_missing` naming
/// it (mapping every error to [`invalid`] would swallow that: serde reads a missing field of a
/// type with its own `Deserialize` through the same call).
pub fn text_of<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
    requirement: &'static str,
) -> Result<std::borrow::Cow<'de, str>, D::Error> {
    struct Text(&'static str);
    impl<'de> serde::de::Visitor<'de> for Text {
        type Value = std::borrow::Cow<'de, str>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{REQUIREMENT_MARK}{}", self.0)
        }

        fn visit_borrowed_str<E: serde::de::Error>(
            self,
            value: &'de str,
        ) -> Result<Self::Value, E> {
            Ok(std::borrow::Cow::Borrowed(value))
        }

        fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<Self::Value, E> {
            Ok(std::borrow::Cow::Owned(value.to_owned()))
        }

        fn visit_string<E: serde::de::Error>(self, value: String) -> Result<Self::Value, E> {
            Ok(std::borrow::Cow::Owned(value))
        }
    }
    deserializer.deserialize_str(Text(requirement))
}

/// Starts the text of an error made by [`invalid`], and no other: serde's messages start with
/// a word of their own, and a character from Unicode's private use area is no word.
const REQUIREMENT_MARK: char = '\u{E000}';

/// The requirement of an error made by [`invalid`], or of a value of another type read by
/// [`text_of`] (serde writes `invalid type: ..., expected <requirement>`), without the
/// position serde_json adds.
fn requirement(message: &str) -> Option<&str> {
    let text = match message.strip_prefix(REQUIREMENT_MARK) {
        Some(text) => text,
        None if message.starts_with("invalid type: ") => {
            &message[message.find(REQUIREMENT_MARK)? + REQUIREMENT_MARK.len_utf8()..]
        }
        None => return None,
    };
    // serde_json appends " at line L column C" to a data error's text.
    Some(match text.rfind(" at line ") {
        Some(end) if text[end..].contains(" column ") => &text[..end],
        _ => text,
    })
}

/// `a.b[0].c`, or `None` for the top level.
fn dotted(path: &serde_path_to_error::Path) -> Option<String> {
    (path.iter().len() > 0).then(|| path.to_string())
}

/// The text up to the closing backtick of a serde field-error message.
fn backticked(rest: &str) -> &str {
    rest.split('`').next().unwrap_or(rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Empty {}

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Outer {
        name_id: String,
        limit: Option<u32>,
        inner: Option<Inner>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        size: u32,
    }

    fn failure<T: DeserializeOwned + std::fmt::Debug>(json: &str) -> (ErrorCode, Option<String>) {
        let error = parse_json::<T>(json.as_bytes()).unwrap_err();
        (error.code(), error.param().map(str::to_owned))
    }

    #[test]
    fn empty_query_and_object_are_accepted() {
        parse_query::<Empty>("").unwrap();
        parse_json::<Empty>(b"{}").unwrap();
        parse_json::<Empty>(b" {} \n").unwrap();
    }

    /// The shortcut for absent input must mean what the parsers make of empty input.
    #[test]
    fn no_fields_reads_like_an_empty_query_and_an_empty_object() {
        #[derive(Debug, Deserialize, PartialEq)]
        #[serde(deny_unknown_fields)]
        struct Optional {
            limit: Option<u32>,
            #[serde(default)]
            names: Vec<String>,
        }
        from_no_fields::<Empty>().unwrap();
        let expected = Optional {
            limit: None,
            names: Vec::new(),
        };
        assert_eq!(from_no_fields::<Optional>(), Some(expected));
        assert_eq!(
            parse_query::<Optional>("").unwrap(),
            from_no_fields().unwrap()
        );
        assert_eq!(
            parse_json::<Optional>(b"{}").unwrap(),
            from_no_fields().unwrap()
        );
        // A required field: no shortcut, so the parser's own error is what the client sees.
        assert!(from_no_fields::<Outer>().is_none());
        assert_eq!(
            failure::<Outer>("{}"),
            (ErrorCode::ParameterMissing, Some("name_id".to_owned()))
        );
    }

    #[test]
    fn unknown_query_parameter_is_named() {
        let error = parse_query::<Empty>("foo=1").unwrap_err();
        assert_eq!(error.code(), ErrorCode::ParameterUnknown);
        assert_eq!(error.param(), Some("foo"));
        assert_eq!(error.message(), "Received unknown parameter: foo");
        let error = parse_query::<Empty>("b%20ar").unwrap_err();
        assert_eq!(error.param(), Some("b ar"));
    }

    #[test]
    fn query_values_are_typed() {
        let error = parse_query::<Outer>("name_id=a&limit=x").unwrap_err();
        assert_eq!(error.code(), ErrorCode::ParameterInvalid);
        assert_eq!(error.param(), Some("limit"));
        let error = parse_query::<Outer>("limit=3").unwrap_err();
        assert_eq!(error.code(), ErrorCode::ParameterMissing);
        assert_eq!(error.param(), Some("name_id"));
    }

    #[test]
    fn body_errors_name_the_field_with_its_path() {
        assert_eq!(
            failure::<Empty>(r#"{"foo":1}"#),
            (ErrorCode::ParameterUnknown, Some("foo".into()))
        );
        assert_eq!(
            failure::<Outer>(r#"{"name_id":"x","inner":{"size":1,"colour":2}}"#),
            (ErrorCode::ParameterUnknown, Some("inner.colour".into()))
        );
        assert_eq!(
            failure::<Outer>(r#"{"limit":1}"#),
            (ErrorCode::ParameterMissing, Some("name_id".into()))
        );
        assert_eq!(
            failure::<Outer>(r#"{"name_id":"x","inner":{}}"#),
            (ErrorCode::ParameterMissing, Some("inner.size".into()))
        );
        assert_eq!(
            failure::<Outer>(r#"{"name_id":"x","limit":"ten"}"#),
            (ErrorCode::ParameterInvalid, Some("limit".into()))
        );
        assert_eq!(
            failure::<Outer>(r#"{"name_id":"x","limit":-1}"#),
            (ErrorCode::ParameterInvalid, Some("limit".into()))
        );
        for not_an_object in ["[]", "1", "null", "\"{}\""] {
            assert_eq!(
                failure::<Empty>(not_an_object),
                (ErrorCode::ParameterInvalid, None),
                "{not_an_object}"
            );
        }
    }

    #[test]
    fn malformed_json_is_json_invalid() {
        for body in ["{", "{\"a\":}", "nope", "{} {}", "{}x", "{\"a\":1,}"] {
            assert_eq!(
                failure::<Empty>(body),
                (ErrorCode::JsonInvalid, None),
                "{body}"
            );
        }
    }
}
