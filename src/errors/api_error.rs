//! [`ApiError`]: the one error every handler, extractor and middleware returns, a catalogue
//! code plus what this occurrence adds (a message, the parameter at fault, the `Allow` or
//! `Retry-After` value) and, for the log only, the cause. Turning one into a response is
//! `render`'s part.

use std::borrow::Cow;
use std::fmt;

use actix_web::http::header::HeaderValue;
use actix_web::http::{Method, StatusCode};
use actix_web::{HttpResponse, ResponseError};

use super::catalogue::ErrorCode;

/// Longest piece of client input (a path, a method, a parameter name) echoed back in a message.
const MAX_ECHOED_CHARS: usize = 200;

/// Client input, cut to a length that is safe to echo back in a message or `param`.
fn echo(input: &str) -> Cow<'_, str> {
    let input = crate::redact::keys_masked(input);
    match input.char_indices().nth(MAX_ECHOED_CHARS) {
        None => input,
        Some((cut, _)) => Cow::Owned(format!("{}…", &input[..cut])),
    }
}

/// An error as the client will see it, plus what only the log may see. Boxed, so that
/// `Result<T, ApiError>` stays one word wide on the success path.
#[derive(Debug, Clone)]
pub struct ApiError(pub(super) Box<ErrorDetails>);

#[derive(Debug, Clone)]
pub(super) struct ErrorDetails {
    pub(super) code: ErrorCode,
    /// The catalogue's status for `code`, unless the status of a response this error stands
    /// for had no row of its own ([`ApiError::keeping_status`]).
    status: StatusCode,
    pub(super) message: Cow<'static, str>,
    pub(super) param: Option<String>,
    /// `Allow` header value of a 405 (RFC 9110, section 15.5.6: the server MUST send it).
    pub(super) allow: Option<HeaderValue>,
    /// Whole seconds for the `Retry-After` header of a 429.
    pub(super) retry_after_secs: Option<u64>,
    /// The cause, for the log only; never part of the response.
    internal_cause: Option<String>,
}

/// The method an error's message names: a `HEAD`'s is its `GET`'s, so that the answer to a
/// `HEAD` carries the `Content-Length` the `GET` would (RFC 9110, 9.3.2: the same header
/// fields), its body, never sent, being the `GET`'s.
fn named(method: &Method) -> &str {
    if method == Method::HEAD {
        Method::GET.as_str()
    } else {
        method.as_str()
    }
}

impl ApiError {
    /// An error with the catalogue's default message.
    pub fn new(code: ErrorCode) -> Self {
        ApiError(Box::new(ErrorDetails {
            code,
            status: code.spec().status,
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

    /// The error of a response that was sent with `status`: the status is kept as it was, so
    /// a status the catalogue has no row for is not rewritten (see `ErrorCode::for_class`).
    pub fn keeping_status(mut self, status: StatusCode) -> Self {
        self.0.status = status;
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
            echo(named(method)),
            echo(path)
        ))
    }

    /// 404 for a path that names a thing that does not exist: the message names its kind and
    /// id, and, as every `resource_missing` does, the method and path requested (`No such
    /// enrolment: 'en_4f2a' (GET /v1/enrolments/en_4f2a).`). A missing route is
    /// [`ApiError::resource_missing`]; a handler calls this through its context's `no_such`,
    /// which knows the method and path.
    pub fn no_such(kind: &str, id: &str, method: &Method, path: &str) -> Self {
        ApiError::new(ErrorCode::ResourceMissing).with_message(format!(
            "No such {}: '{}' ({} {}).",
            echo(kind),
            echo(id),
            echo(named(method)),
            echo(path)
        ))
    }

    /// 405 for a known path and a method its routes do not answer.
    pub fn method_not_allowed(method: &Method, allow: HeaderValue) -> Self {
        let mut error = ApiError::new(ErrorCode::MethodNotAllowed).with_message(format!(
            "The method {} is not allowed on this endpoint. Allowed: {}.",
            echo(named(method)),
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

    /// 503 `service_unavailable` for member data that cannot be reached, changed or recorded
    /// now: its cause goes to the log, never to the client, which is told to retry in a second.
    pub fn unavailable(cause: impl Into<String>) -> Self {
        let mut error = ApiError::new(ErrorCode::ServiceUnavailable);
        error.0.internal_cause = Some(cause.into());
        error.0.retry_after_secs = Some(1);
        error
    }

    /// The status the client gets: the catalogue's for the code, unless kept from a response.
    pub fn status(&self) -> StatusCode {
        self.0.status
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
        self.0.status
    }

    fn error_response(&self) -> HttpResponse {
        HttpResponse::new(self.status_code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoed_input_is_cut_on_a_char_boundary() {
        let long = "é".repeat(500);
        let echoed = echo(&long);
        assert_eq!(echoed.chars().count(), MAX_ECHOED_CHARS + 1);
        assert!(echoed.ends_with('…'));
        assert_eq!(echo("/v1/pings"), "/v1/pings");
        // A key a client put in a path is not echoed back.
        let key = format!("pak_{}", "Z9".repeat(19));
        assert_eq!(echo(&format!("/v1/{key}")), "/v1/pak_[redacted]");
    }

    #[test]
    fn a_missing_thing_is_named_by_kind_and_id() {
        let path = "/v1/enrolments/en_4f2a";
        let error = ApiError::no_such("enrolment", "en_4f2a", &Method::GET, path);
        assert_eq!(error.code(), ErrorCode::ResourceMissing);
        assert_eq!(error.status(), StatusCode::NOT_FOUND);
        assert_eq!(
            error.message(),
            "No such enrolment: 'en_4f2a' (GET /v1/enrolments/en_4f2a)."
        );
        assert_eq!(error.param(), None);
    }

    #[test]
    fn rate_limited_never_says_zero_seconds() {
        assert_eq!(ApiError::rate_limited(0).0.retry_after_secs, Some(1));
        assert_eq!(ApiError::rate_limited(7).0.retry_after_secs, Some(7));
    }
}
