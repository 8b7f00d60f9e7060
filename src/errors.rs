//! The error catalogue and the one error type. Every error code the service can emit is a
//! variant of [`ErrorCode`], and [`ErrorCode::spec`] is the single place that says its HTTP
//! status, its `type`, the message a client gets by default, when it happens and what a client
//! should do about it. The JSON error body, the `type`/`code` enums of the OpenAPI document and
//! the `/docs/errors` page are all generated from this table, so a new code is added here once.
//! [`ApiError`] is the error every handler, extractor and middleware returns; only
//! [`ApiError::to_response`] turns one into an HTTP response.

use std::borrow::Cow;
use std::fmt;

use actix_web::body::BoxBody;
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

use crate::request_id::RequestId;

/// Error category. Clients branch on this first, then on `code`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorType {
    /// The request was faulty; sending it again unchanged will fail again.
    InvalidRequestError,
    /// Too many requests; wait for the time in `Retry-After`, then retry.
    RateLimitError,
    /// A fault on the service side; the request may be retried.
    ApiError,
}

impl ErrorType {
    /// What the type is used for, as the contract words it.
    pub const fn used_for(self) -> &'static str {
        match self {
            ErrorType::InvalidRequestError => "Faulty requests",
            ErrorType::RateLimitError => "Too many requests",
            ErrorType::ApiError => "Faults on the service side",
        }
    }

    /// Every type, in the order the documentation lists them.
    pub const ALL: [ErrorType; 3] = [
        ErrorType::InvalidRequestError,
        ErrorType::RateLimitError,
        ErrorType::ApiError,
    ];

    /// The wire name, as in the `type` field.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorType::InvalidRequestError => "invalid_request_error",
            ErrorType::RateLimitError => "rate_limit_error",
            ErrorType::ApiError => "api_error",
        }
    }
}

/// Machine-readable error code: the `code` field of every error body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// No such endpoint or resource.
    ResourceMissing,
    /// The endpoint exists but does not answer the method used.
    MethodNotAllowed,
    /// The request carries a parameter (query or body field) the endpoint does not know.
    ParameterUnknown,
    /// A required parameter is missing.
    ParameterMissing,
    /// A parameter has the wrong type or an impossible value.
    ParameterInvalid,
    /// The request body is not well-formed JSON.
    JsonInvalid,
    /// The request body is not sent as `application/json`.
    ContentTypeUnsupported,
    /// The request body is larger than the service accepts.
    PayloadTooLarge,
    /// The request's header fields are more, or larger, than the service accepts.
    RequestHeaderTooLarge,
    /// The request could not be read as an HTTP request the service understands.
    RequestInvalid,
    /// Too many requests from this client.
    RateLimited,
    /// A fault on the service side.
    InternalError,
}

/// Everything the catalogue knows about one code.
#[derive(Debug)]
pub struct CodeSpec {
    /// The wire name, as in the `code` field and the `/docs/errors#<code>` anchor.
    pub code: &'static str,
    pub status: StatusCode,
    pub error_type: ErrorType,
    /// The `message` a client gets when the error carries no more specific one.
    pub default_message: &'static str,
    /// When the error happens (one sentence, for the error pages and the OpenAPI document).
    pub when: &'static str,
    /// What a client should do about it (retry or not, how long to wait, what to report).
    pub client_action: &'static str,
}

impl ErrorCode {
    /// Every code, in the order the documentation lists them.
    pub const ALL: [ErrorCode; 12] = [
        ErrorCode::ResourceMissing,
        ErrorCode::MethodNotAllowed,
        ErrorCode::ParameterUnknown,
        ErrorCode::ParameterMissing,
        ErrorCode::ParameterInvalid,
        ErrorCode::JsonInvalid,
        ErrorCode::ContentTypeUnsupported,
        ErrorCode::PayloadTooLarge,
        ErrorCode::RequestHeaderTooLarge,
        ErrorCode::RequestInvalid,
        ErrorCode::RateLimited,
        ErrorCode::InternalError,
    ];

    /// The catalogue entry for this code.
    pub const fn spec(self) -> &'static CodeSpec {
        use ErrorType::*;
        match self {
            ErrorCode::ResourceMissing => &CodeSpec {
                code: "resource_missing",
                status: StatusCode::NOT_FOUND,
                error_type: InvalidRequestError,
                default_message: "No such endpoint or resource.",
                when: "No endpoint or resource exists at the requested path. The message names \
                       the method and the path that were requested.",
                client_action: "Do not retry. Check the path against the API reference: paths \
                                are lower case, start with the version segment `/v1` and have \
                                no trailing slash.",
            },
            ErrorCode::MethodNotAllowed => &CodeSpec {
                code: "method_not_allowed",
                status: StatusCode::METHOD_NOT_ALLOWED,
                error_type: InvalidRequestError,
                default_message: "The endpoint does not answer this method.",
                when: "The path exists but does not answer the method used. The `Allow` \
                       response header lists the methods it does answer.",
                client_action: "Do not retry. Use one of the methods in the `Allow` header.",
            },
            ErrorCode::ParameterUnknown => &CodeSpec {
                code: "parameter_unknown",
                status: StatusCode::BAD_REQUEST,
                error_type: InvalidRequestError,
                default_message: "Received an unknown parameter.",
                when: "The request carries a query parameter or a body field that the endpoint \
                       does not know. Unknown parameters are refused, never silently ignored. \
                       `param` names it; a nested field is written `parent.child`.",
                client_action: "Do not retry unchanged. Remove the parameter named in `param`, \
                                or check its spelling against the API reference.",
            },
            ErrorCode::ParameterMissing => &CodeSpec {
                code: "parameter_missing",
                status: StatusCode::BAD_REQUEST,
                error_type: InvalidRequestError,
                default_message: "A required parameter is missing.",
                when: "A required parameter or body field is absent. `param` names it.",
                client_action: "Do not retry unchanged. Send the parameter named in `param`.",
            },
            ErrorCode::ParameterInvalid => &CodeSpec {
                code: "parameter_invalid",
                status: StatusCode::BAD_REQUEST,
                error_type: InvalidRequestError,
                default_message: "A parameter has an invalid value.",
                when: "A parameter or body field has the wrong type or a value outside what the \
                       endpoint accepts. `param` names it when one field is at fault.",
                client_action: "Do not retry unchanged. Correct the value of the parameter \
                                named in `param`; the message says what was expected.",
            },
            ErrorCode::JsonInvalid => &CodeSpec {
                code: "json_invalid",
                status: StatusCode::BAD_REQUEST,
                error_type: InvalidRequestError,
                default_message: "The request body is not valid JSON.",
                when: "The request body is not well-formed JSON. The message gives the line and \
                       column where parsing failed.",
                client_action: "Do not retry unchanged. Fix the JSON encoding of the body.",
            },
            ErrorCode::ContentTypeUnsupported => &CodeSpec {
                code: "content_type_unsupported",
                status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
                error_type: InvalidRequestError,
                default_message: "Request bodies must be sent as application/json.",
                when: "The request has a body whose `Content-Type` is not `application/json`.",
                client_action: "Do not retry unchanged. Send the body as JSON with \
                                `Content-Type: application/json`.",
            },
            ErrorCode::PayloadTooLarge => &CodeSpec {
                code: "payload_too_large",
                status: StatusCode::PAYLOAD_TOO_LARGE,
                error_type: InvalidRequestError,
                default_message: "The request body is too large.",
                when: "The request body is larger than the service accepts (64 KiB unless the \
                       operator configured otherwise). The message gives the limit.",
                client_action: "Do not retry unchanged. Send a smaller body.",
            },
            ErrorCode::RequestHeaderTooLarge => &CodeSpec {
                code: "request_header_too_large",
                status: StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                error_type: InvalidRequestError,
                default_message: "The request's header fields are too large.",
                when: "The request has more header fields, or larger ones, than the service \
                       accepts (96 fields and 128 KiB unless the operator configured \
                       otherwise), over HTTP/1.1 and HTTP/2 alike. The message gives the limit.",
                client_action: "Do not retry unchanged. Send fewer or smaller header fields \
                                (large cookies are the usual cause).",
            },
            ErrorCode::RequestInvalid => &CodeSpec {
                code: "request_invalid",
                status: StatusCode::BAD_REQUEST,
                error_type: InvalidRequestError,
                default_message: "The request could not be understood.",
                when: "The request is not one the service can read, for example a body that \
                       was cut off before its announced length.",
                client_action: "Do not retry unchanged. Check how the request is formed; if \
                                it looks right, report the `request_id`.",
            },
            ErrorCode::RateLimited => &CodeSpec {
                code: "rate_limited",
                status: StatusCode::TOO_MANY_REQUESTS,
                error_type: RateLimitError,
                default_message: "Too many requests. Retry after the time given in the \
                                  Retry-After header.",
                when: "The client sent more requests than its rate limit allows. The response \
                       carries a `Retry-After` header in whole seconds.",
                client_action: "Wait at least the number of seconds in `Retry-After`, then \
                                retry. Spread requests out to stay within the limit.",
            },
            ErrorCode::InternalError => &CodeSpec {
                code: "internal_error",
                status: StatusCode::INTERNAL_SERVER_ERROR,
                error_type: ApiError,
                default_message: "An internal error occurred. The request may be retried; if \
                                  the error persists, report the request_id.",
                when: "A fault on the service side. Details are logged under the request id; \
                       none are sent to the client.",
                client_action: "Retry with a growing delay. If the error persists, report the \
                                `request_id` from the body or the `Service-Request-Id` header.",
            },
        }
    }

    /// The wire name, as in the `code` field.
    pub const fn as_str(self) -> &'static str {
        self.spec().code
    }

    /// The code a response with this status stands for, when actix-web or a middleware built
    /// the response and no [`ApiError`] is attached to it.
    pub fn for_status(status: StatusCode) -> ErrorCode {
        match status {
            StatusCode::NOT_FOUND => ErrorCode::ResourceMissing,
            StatusCode::METHOD_NOT_ALLOWED => ErrorCode::MethodNotAllowed,
            StatusCode::PAYLOAD_TOO_LARGE => ErrorCode::PayloadTooLarge,
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => ErrorCode::RequestHeaderTooLarge,
            StatusCode::UNSUPPORTED_MEDIA_TYPE => ErrorCode::ContentTypeUnsupported,
            StatusCode::TOO_MANY_REQUESTS => ErrorCode::RateLimited,
            s if s.is_client_error() => ErrorCode::RequestInvalid,
            _ => ErrorCode::InternalError,
        }
    }
}

/// The `code` schema of the OpenAPI document, generated from the catalogue: a string, not an
/// enum, because generated clients reject enum values they were not built with and new codes
/// are an additive change (README, "What v1 promises"). The known codes are listed in the
/// description and as examples; a new code appears by being added to [`ErrorCode::ALL`].
impl PartialSchema for ErrorCode {
    fn schema() -> RefOr<Schema> {
        let listing: Vec<String> = ErrorCode::ALL
            .iter()
            .map(|code| {
                let spec = code.spec();
                format!(
                    "- `{}` ({}): {}",
                    spec.code,
                    spec.status.as_u16(),
                    spec.when
                )
            })
            .collect();
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some("^[a-z][a-z_]*$"))
            .description(Some(format!(
                "Machine-readable error code, an open set: new codes are added under the \
                 existing types without a new API version, so a client treats a code it does not \
                 know by its `type`. The codes today:\n\n{}",
                listing.join("\n")
            )))
            .examples(ErrorCode::ALL.iter().map(|code| code.as_str()))
            .into()
    }
}

impl ToSchema for ErrorCode {}

/// The `type` enum of the OpenAPI document, generated from [`ErrorType::ALL`].
impl PartialSchema for ErrorType {
    fn schema() -> RefOr<Schema> {
        let listing: Vec<String> = ErrorType::ALL
            .iter()
            .map(|error_type| format!("- `{}`: {}", error_type.as_str(), error_type.used_for()))
            .collect();
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(format!(
                "Error category; act on it first, then on `code`.\n\n{}",
                listing.join("\n")
            )))
            .enum_values(Some(
                ErrorType::ALL.iter().map(|error_type| error_type.as_str()),
            ))
            .into()
    }
}

impl ToSchema for ErrorType {}

/// Longest piece of client input (a path, a method, a parameter name) echoed back in a message.
const MAX_ECHOED_CHARS: usize = 200;

/// Client input, cut to a length that is safe to echo back in a message or `param`.
fn echo(input: &str) -> Cow<'_, str> {
    match input.char_indices().nth(MAX_ECHOED_CHARS) {
        None => Cow::Borrowed(input),
        Some((cut, _)) => Cow::Owned(format!("{}…", &input[..cut])),
    }
}

/// An error as the client will see it, plus what only the log may see. Boxed, so that
/// `Result<T, ApiError>` stays one word wide on the success path.
#[derive(Debug, Clone)]
pub struct ApiError(Box<ErrorDetails>);

#[derive(Debug, Clone)]
struct ErrorDetails {
    code: ErrorCode,
    message: Cow<'static, str>,
    param: Option<String>,
    /// `Allow` header value of a 405 (RFC 9110, section 15.5.6: the server MUST send it).
    allow: Option<HeaderValue>,
    /// Whole seconds for the `Retry-After` header of a 429.
    retry_after_secs: Option<u64>,
    /// The cause, for the log only; never part of the response.
    internal_cause: Option<String>,
}

impl ApiError {
    /// An error with the catalogue's default message.
    pub fn new(code: ErrorCode) -> Self {
        ApiError(Box::new(ErrorDetails {
            code,
            message: Cow::Borrowed(code.spec().default_message),
            param: None,
            allow: None,
            retry_after_secs: None,
            internal_cause: None,
        }))
    }

    pub fn with_message(mut self, message: impl Into<Cow<'static, str>>) -> Self {
        self.0.message = message.into();
        self
    }

    pub fn with_param(mut self, param: impl AsRef<str>) -> Self {
        self.0.param = Some(echo(param.as_ref()).into_owned());
        self
    }

    /// 404 for a path that matches no route.
    pub fn resource_missing(method: &Method, path: &str) -> Self {
        ApiError::new(ErrorCode::ResourceMissing).with_message(format!(
            "Unrecognized request URL ({}: {}).",
            echo(method.as_str()),
            echo(path)
        ))
    }

    /// 405 for a known path and a method its routes do not answer.
    pub fn method_not_allowed(method: &Method, allow: HeaderValue) -> Self {
        let mut error = ApiError::new(ErrorCode::MethodNotAllowed).with_message(format!(
            "The method {} is not allowed on this endpoint. Allowed: {}.",
            echo(method.as_str()),
            allow.to_str().unwrap_or_default()
        ));
        error.0.allow = Some(allow);
        error
    }

    /// 400 for a query parameter or body field the endpoint does not know.
    pub fn parameter_unknown(param: &str) -> Self {
        ApiError::new(ErrorCode::ParameterUnknown)
            .with_message(format!("Received unknown parameter: {}", echo(param)))
            .with_param(param)
    }

    /// 429, telling the client how many whole seconds to wait.
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        let mut error = ApiError::new(ErrorCode::RateLimited);
        error.0.retry_after_secs = Some(retry_after_secs.max(1));
        error
    }

    /// 500 whose cause goes to the log, never to the client.
    pub fn internal(cause: impl Into<String>) -> Self {
        let mut error = ApiError::new(ErrorCode::InternalError);
        error.0.internal_cause = Some(cause.into());
        error
    }

    pub fn code(&self) -> ErrorCode {
        self.0.code
    }

    pub fn message(&self) -> &str {
        &self.0.message
    }

    pub fn param(&self) -> Option<&str> {
        self.0.param.as_deref()
    }

    pub fn internal_cause(&self) -> Option<&str> {
        self.0.internal_cause.as_deref()
    }

    /// The complete response a client sees: status, headers and the contract's JSON body.
    pub fn to_response(&self, request_id: &RequestId, docs: DocsOrigin<'_>) -> HttpResponse {
        self.rendered(request_id, docs).into_new_response()
    }

    /// What this error's response consists of, written while the error is only borrowed (it
    /// is often attached to the very response that [`Rendered::into_response`] then rewrites).
    pub fn rendered(&self, request_id: &RequestId, docs: DocsOrigin<'_>) -> Rendered {
        Rendered {
            status: self.0.code.spec().status,
            allow: self.0.allow.clone(),
            retry_after_secs: self.0.retry_after_secs,
            body: self.json(request_id.as_str(), docs),
        }
    }

    /// The body, exactly as serde serializes [`ErrorEnvelope`] (a test holds them equal), but
    /// written directly: every error response, 429s in a flood among them, pays for it.
    pub fn json(&self, request_id: &str, docs: DocsOrigin<'_>) -> Vec<u8> {
        let details = &*self.0;
        let message = match &details.message {
            // Messages written in this code base need no escaping (a test checks the catalogue's).
            Cow::Borrowed(message) => JsonText::Plain(message),
            Cow::Owned(message) => JsonText::Unchecked(message),
        };
        error_json(
            details.code,
            message,
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

/// A string for the error body: `Plain` when it is known to need no escaping (the catalogue's
/// messages: a test checks them), so it is copied without a scan.
enum JsonText<'a> {
    Plain(&'a str),
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
    let (JsonText::Plain(message_text) | JsonText::Unchecked(message_text)) = message;
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
        JsonText::Plain(message) => {
            debug_assert!(!needs_escaping(message), "{message}");
            out.push(b'"');
            out.extend_from_slice(message.as_bytes());
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
    body: Vec<u8>,
}

impl Rendered {
    /// The 429 for a refused request, written straight from the catalogue: the one error a
    /// flood produces, so it allocates no `ApiError` on the way.
    pub fn rate_limited(
        retry_after_secs: u64,
        request_id: &RequestId,
        docs: DocsOrigin<'_>,
    ) -> Self {
        let code = ErrorCode::RateLimited;
        let spec = code.spec();
        let message = JsonText::Plain(spec.default_message);
        Rendered {
            status: spec.status,
            allow: None,
            retry_after_secs: Some(retry_after_secs.max(1)),
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
        response.set_body(BoxBody::new(self.body))
    }
}

/// A number of seconds as a header value; the usual waits (under ten seconds) are static text
/// rather than an allocation, since a flood of 429s sends one each.
fn seconds_header(secs: u64) -> HeaderValue {
    const DIGITS: [&str; 10] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];
    match DIGITS.get(secs as usize) {
        Some(digit) => HeaderValue::from_static(digit),
        None => HeaderValue::from(secs),
    }
}

/// Where `doc_url` points: an origin (with an optional path prefix, without a trailing
/// slash), in two pieces that are written one after the other, so that the usual
/// `scheme://` and `Host` need not be joined into a new string per error.
#[derive(Clone, Copy, Debug)]
pub struct DocsOrigin<'a> {
    pieces: [&'a str; 2],
    /// Neither piece needs escaping in a JSON string, so the body copies them as they are.
    plain: bool,
}

impl<'a> DocsOrigin<'a> {
    /// `first` then `second`, where the caller already knows whether they are `plain` (need
    /// no escaping in JSON); see [`DocsOrigin::from`] for text not checked yet.
    pub fn from_parts(first: &'a str, second: &'a str, plain: bool) -> Self {
        debug_assert_eq!(plain, !needs_escaping(first) && !needs_escaping(second));
        DocsOrigin {
            pieces: [first, second],
            plain,
        }
    }

    fn len(&self) -> usize {
        self.pieces[0].len() + self.pieces[1].len()
    }
}

/// Whether `text` can go into a JSON string as it is.
pub fn is_plain_json(text: &str) -> bool {
    !needs_escaping(text)
}

impl<'a> From<&'a str> for DocsOrigin<'a> {
    fn from(origin: &'a str) -> Self {
        DocsOrigin::from_parts(origin, "", !needs_escaping(origin))
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

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.0.code.as_str(), self.0.message)?;
        if let Some(cause) = &self.0.internal_cause {
            write!(f, " (cause: {cause})")?;
        }
        Ok(())
    }
}

/// Lets handlers and extractors return `ApiError` through `?`. The response built here is
/// never sent as it is: the request-conventions middleware (see `conventions.rs`) finds the
/// `ApiError` attached to it and answers with [`ApiError::to_response`], which needs the
/// request id that only the middleware knows.
impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.0.code.spec().status
    }

    fn error_response(&self) -> HttpResponse {
        HttpResponse::new(self.status_code())
    }
}

/// The body of every error response: a single top-level key `error`.
#[derive(Serialize, ToSchema)]
pub struct ErrorEnvelope<'a> {
    pub error: ErrorObject<'a>,
}

/// Details of a failed request.
#[derive(Serialize, ToSchema)]
pub struct ErrorObject<'a> {
    /// Error category; clients act on `type` and `code`, never on `message`.
    #[serde(rename = "type")]
    pub error_type: ErrorType,
    /// Machine-readable error code.
    pub code: ErrorCode,
    /// Text for people. It may change at any time; do not parse it.
    #[schema(value_type = String)]
    pub message: &'a str,
    /// Name of the offending parameter, `null` when none applies. A nested body field is
    /// written `parent.child`.
    #[schema(value_type = Option<String>, required = true)]
    pub param: Option<&'a str>,
    /// Address of this error code's explanation: `<docs base>/docs/errors#<code>`.
    pub doc_url: String,
    /// Id of the request, `req_` and 32 lowercase hex digits; the same value as the
    /// `Service-Request-Id` response header. Quote it when reporting a problem.
    #[schema(value_type = String, pattern = "^req_[0-9a-f]{32}$")]
    pub request_id: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_serializes_to_its_catalogue_name() {
        for code in ErrorCode::ALL {
            assert_eq!(
                serde_json::to_value(code).unwrap(),
                serde_json::json!(code.spec().code)
            );
        }
        for error_type in ErrorType::ALL {
            assert_eq!(
                serde_json::to_value(error_type).unwrap(),
                serde_json::json!(error_type.as_str())
            );
        }
    }

    #[test]
    fn catalogue_statuses_are_errors_and_names_are_unique() {
        let mut names: Vec<_> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ErrorCode::ALL.len());
        for code in ErrorCode::ALL {
            assert!(code.spec().status.as_u16() >= 400, "{code:?}");
        }
    }

    #[test]
    fn for_status_maps_back_to_the_code_with_that_status() {
        for code in [
            ErrorCode::ResourceMissing,
            ErrorCode::MethodNotAllowed,
            ErrorCode::PayloadTooLarge,
            ErrorCode::RequestHeaderTooLarge,
            ErrorCode::ContentTypeUnsupported,
            ErrorCode::RateLimited,
            ErrorCode::InternalError,
        ] {
            assert_eq!(ErrorCode::for_status(code.spec().status), code);
        }
        assert_eq!(
            ErrorCode::for_status(StatusCode::URI_TOO_LONG),
            ErrorCode::RequestInvalid
        );
        assert_eq!(
            ErrorCode::for_status(StatusCode::BAD_GATEWAY),
            ErrorCode::InternalError
        );
    }

    #[test]
    fn echoed_input_is_cut_on_a_char_boundary() {
        let long = "é".repeat(500);
        let echoed = echo(&long);
        assert_eq!(echoed.chars().count(), MAX_ECHOED_CHARS + 1);
        assert!(echoed.ends_with('…'));
        assert_eq!(echo("/v1/pings"), "/v1/pings");
    }

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
            for docs_base in ["https://api.example.com", "http://127.0.0.1:8080/pre\"fix"] {
                let docs = DocsOrigin::from(docs_base);
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

    #[test]
    fn rate_limited_never_says_zero_seconds() {
        assert_eq!(ApiError::rate_limited(0).0.retry_after_secs, Some(1));
        assert_eq!(ApiError::rate_limited(7).0.retry_after_secs, Some(7));
    }
}
