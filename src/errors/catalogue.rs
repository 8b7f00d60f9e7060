//! The error catalogue: every code the service can emit, with its HTTP status, its `type`, the
//! message a client gets by default, when it happens and what a client should do about it.
//! Read [`ErrorCode::spec`] as the table; the JSON error body, the OpenAPI document's error
//! responses and the `/docs/errors` page are all generated from it, so a new code is added
//! here once (a variant, its place in [`ErrorCode::ALL`] and its row).

use actix_web::http::StatusCode;
use serde::Serialize;

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
    /// The request head, or the rest of its body, did not arrive in time.
    RequestTimeout,
    /// The request target (path and query) is longer than the service reads.
    UriTooLong,
    /// The request's HTTP version is one the service does not speak.
    HttpVersionNotSupported,
    /// Too many requests from this client.
    RateLimited,
    /// A fault on the service side.
    InternalError,
    /// Member data cannot be read, changed or recorded right now (its store is unreachable,
    /// slow, or behind the release's schema).
    ServiceUnavailable,
    /// The operation needs a key and the request sent none.
    KeyMissing,
    /// The request's key is not a partner key (a mistyped or cut-short one included).
    KeyMalformed,
    /// The request's key is well formed but no key issued has it.
    KeyUnknown,
    /// The request's key has expired.
    KeyExpired,
    /// The request's key was revoked.
    KeyRevoked,
    /// The request's key is valid but lacks the scope the operation needs.
    KeyScopeMissing,
    /// The thing is in a state that does not allow the request.
    StateConflict,
    /// A request with the same `Idempotency-Key` is still being answered.
    IdempotencyKeyInUse,
    /// The `Idempotency-Key` was first used with another request.
    IdempotencyKeyReused,
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
    pub const ALL: [ErrorCode; 25] = [
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
        ErrorCode::RequestTimeout,
        ErrorCode::UriTooLong,
        ErrorCode::HttpVersionNotSupported,
        ErrorCode::RateLimited,
        ErrorCode::InternalError,
        ErrorCode::ServiceUnavailable,
        ErrorCode::KeyMissing,
        ErrorCode::KeyMalformed,
        ErrorCode::KeyUnknown,
        ErrorCode::KeyExpired,
        ErrorCode::KeyRevoked,
        ErrorCode::KeyScopeMissing,
        ErrorCode::StateConflict,
        ErrorCode::IdempotencyKeyInUse,
        ErrorCode::IdempotencyKeyReused,
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
                when: "No endpoint exists at the requested path (the message names the method \
                       and the path that were requested), or the path names a thing that does not \
                       exist (the message names its kind and id too: `No such enrolment: \
                       'en_4f2a' (GET /v1/enrolments/en_4f2a).`).",
                client_action: "Do not retry. Check the path against the API reference: paths \
                                are lower case, start with the version segment `/v1` and have \
                                no trailing slash. For a thing that does not exist, check the \
                                id you stored; an id never changes.",
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
                                named in `param`; the API reference gives its type and range.",
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
                when: "The request is not one the service can read: a malformed request line \
                       or header field, an HTTP/1.1 request without `Host`, both \
                       `Content-Length` and `Transfer-Encoding`, or a body that was cut off \
                       before its announced length. The connection is closed after the answer.",
                client_action: "Do not retry unchanged. Check how the request is formed; if \
                                it looks right, report the `request_id`.",
            },
            ErrorCode::RequestTimeout => &CodeSpec {
                code: "request_timeout",
                status: StatusCode::REQUEST_TIMEOUT,
                error_type: InvalidRequestError,
                default_message: "The request head did not arrive in time.",
                when: "The connection did not deliver a complete request head within the time \
                       the service waits for one (5 seconds unless the operator configured \
                       otherwise), or the request body stopped arriving: nothing of it came \
                       for 10 seconds (likewise). The connection is closed after the answer.",
                client_action: "Retry on a new connection, sending the whole request at once, \
                                and a body no longer than its announced length.",
            },
            ErrorCode::UriTooLong => &CodeSpec {
                code: "uri_too_long",
                status: StatusCode::URI_TOO_LONG,
                error_type: InvalidRequestError,
                default_message: "The request target is too long.",
                when: "The request target (path and query) is longer than the service reads \
                       (64 KiB). The connection is closed after the answer.",
                client_action: "Do not retry unchanged. Send a shorter path and query.",
            },
            ErrorCode::HttpVersionNotSupported => &CodeSpec {
                code: "http_version_not_supported",
                status: StatusCode::HTTP_VERSION_NOT_SUPPORTED,
                error_type: InvalidRequestError,
                default_message: "The request's HTTP version is not supported.",
                when: "The request line names an HTTP version whose major version is not 1 \
                       (HTTP/2 sent as text, say). The service speaks HTTP/1.1 and HTTP/1.0 in \
                       text, and HTTP/2 over TLS through ALPN. The connection is closed after \
                       the answer.",
                client_action: "Do not retry unchanged. Send HTTP/1.1, or negotiate HTTP/2 \
                                over TLS.",
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
            ErrorCode::ServiceUnavailable => &CodeSpec {
                code: "service_unavailable",
                status: StatusCode::SERVICE_UNAVAILABLE,
                error_type: ApiError,
                default_message: "Member data cannot be reached right now. Retry after the time \
                                  given in the Retry-After header, a create with the same \
                                  Idempotency-Key.",
                when: "The store that keeps member data, or the audit trail that records every \
                       access to it, could not be reached, answered too late, or is behind this \
                       release's schema. Member data is never served without its record, so \
                       nothing was read. A change was not made, unless the store committed it \
                       just as the deadline passed: a create sent again with its \
                       `Idempotency-Key` then gets its first answer. The response carries a \
                       `Retry-After` header in whole seconds.",
                client_action: "Wait at least the number of seconds in `Retry-After`, then \
                                retry; a create sent with an `Idempotency-Key` is safe to send \
                                again. If it persists, report the `request_id`.",
            },
            ErrorCode::KeyMissing => &CodeSpec {
                code: "key_missing",
                status: StatusCode::UNAUTHORIZED,
                error_type: InvalidRequestError,
                default_message: "This operation needs a key: send it as Authorization: Bearer <key>.",
                when: "The operation needs a partner key and the request has no `Authorization` \
                       header. The response carries `WWW-Authenticate: Bearer`.",
                client_action: "Do not retry unchanged. Send your key in the `Authorization` \
                                header as `Bearer <key>`.",
            },
            ErrorCode::KeyMalformed => &CodeSpec {
                code: "key_malformed",
                status: StatusCode::UNAUTHORIZED,
                error_type: InvalidRequestError,
                default_message: "The Authorization header does not hold a partner key.",
                when: "The `Authorization` header is not `Bearer` and a partner key (`pak_` and \
                       38 letters and digits), or the key's checksum does not match: it was \
                       mistyped, cut short or joined to other text. Told without looking the \
                       key up.",
                client_action: "Do not retry unchanged. Copy the key again, whole, from where \
                                you keep it; send it as `Bearer <key>`.",
            },
            ErrorCode::KeyUnknown => &CodeSpec {
                code: "key_unknown",
                status: StatusCode::UNAUTHORIZED,
                error_type: InvalidRequestError,
                default_message: "No key issued has this value.",
                when: "The key is well formed but was never issued (a key of another \
                       deployment, say).",
                client_action: "Do not retry unchanged. Check which deployment the key was \
                                issued for; ask your technical contact for a key.",
            },
            ErrorCode::KeyExpired => &CodeSpec {
                code: "key_expired",
                status: StatusCode::UNAUTHORIZED,
                error_type: InvalidRequestError,
                default_message: "The key has expired.",
                when: "The key was issued with an expiry day, and that day has begun (UTC).",
                client_action: "Do not retry. Use the key that replaces it; ask your technical \
                                contact for one.",
            },
            ErrorCode::KeyRevoked => &CodeSpec {
                code: "key_revoked",
                status: StatusCode::UNAUTHORIZED,
                error_type: InvalidRequestError,
                default_message: "The key was revoked.",
                when: "The key was revoked by the operator (at the partner's request, or \
                       because it leaked).",
                client_action: "Do not retry. Use the key that replaces it; ask your technical \
                                contact for one.",
            },
            ErrorCode::KeyScopeMissing => &CodeSpec {
                code: "key_scope_missing",
                status: StatusCode::FORBIDDEN,
                error_type: InvalidRequestError,
                default_message: "The key lacks the scope this operation needs.",
                when: "The key is valid, but was not issued with the scope the operation needs; \
                       the message names the scope.",
                client_action: "Do not retry unchanged. Ask your technical contact for a key \
                                with the scope named in the message.",
            },
            ErrorCode::StateConflict => &CodeSpec {
                code: "state_conflict",
                status: StatusCode::CONFLICT,
                error_type: InvalidRequestError,
                default_message: "The thing is in a state that does not allow this request.",
                when: "The thing named in the path is in a state that does not allow the change \
                       or action asked for (a cancelled enrolment cannot change); the message \
                       says which state.",
                client_action: "Do not retry unchanged. Read the thing again and act on its \
                                current state.",
            },
            ErrorCode::IdempotencyKeyInUse => &CodeSpec {
                code: "idempotency_key_in_use",
                status: StatusCode::CONFLICT,
                error_type: InvalidRequestError,
                default_message: "A request with this Idempotency-Key is still being answered.",
                when: "Another request with the same key and `Idempotency-Key` has not been \
                       answered yet.",
                client_action: "Retry after a second with the same `Idempotency-Key` and body: \
                                you then get the first request's answer.",
            },
            ErrorCode::IdempotencyKeyReused => &CodeSpec {
                code: "idempotency_key_reused",
                status: StatusCode::UNPROCESSABLE_ENTITY,
                error_type: InvalidRequestError,
                default_message: "This Idempotency-Key was first used with another request.",
                when: "The `Idempotency-Key` was sent, within the last 24 hours, with another \
                       operation or another body.",
                client_action: "Do not retry unchanged. Send a new request with a new \
                                `Idempotency-Key`; reuse a key only to repeat the same request.",
            },
        }
    }

    /// The wire name, as in the `code` field.
    pub const fn as_str(self) -> &'static str {
        self.spec().code
    }

    /// The code a response with this status stands for, when actix-web, the HTTP layer or a
    /// middleware built the response and no [`ApiError`](super::ApiError) is attached to it;
    /// `None` for a status the catalogue has no row for. 400 has several codes; without an
    /// `ApiError` saying which, it is `request_invalid`.
    pub fn for_status(status: StatusCode) -> Option<ErrorCode> {
        if status == StatusCode::BAD_REQUEST {
            return Some(ErrorCode::RequestInvalid);
        }
        ErrorCode::ALL
            .into_iter()
            .find(|code| code.spec().status == status)
    }

    /// The code of a status's class, for a status with no row of its own: the answer keeps its
    /// status, and the body says at least whose fault it was. A gap that a test must catch
    /// (`every_status_the_service_sends_has_a_row`), logged as an error when it happens.
    pub fn for_class(status: StatusCode) -> ErrorCode {
        if status.is_client_error() {
            ErrorCode::RequestInvalid
        } else {
            ErrorCode::InternalError
        }
    }
}

/// Every default message goes into the JSON body as it is (no escaping), so the compiler
/// checks here, on every build, that none needs escaping: no control byte, quote or backslash.
const _: () = {
    let mut index = 0;
    while index < ErrorCode::ALL.len() {
        let message = ErrorCode::ALL[index].spec().default_message.as_bytes();
        let mut byte = 0;
        while byte < message.len() {
            let b = message[byte];
            assert!(b >= 0x20 && b != b'"' && b != b'\\');
            byte += 1;
        }
        index += 1;
    }
};

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
        for code in ErrorCode::ALL {
            let status = code.spec().status;
            let found = ErrorCode::for_status(status).unwrap();
            assert_eq!(found.spec().status, status, "{code:?}");
            // A status with one code maps back to it; one with several, to one of them.
            let sharing = ErrorCode::ALL
                .iter()
                .filter(|other| other.spec().status == status)
                .count();
            if sharing == 1 {
                assert_eq!(found, code);
            }
        }
        assert_eq!(
            ErrorCode::for_status(StatusCode::BAD_REQUEST),
            Some(ErrorCode::RequestInvalid)
        );
        // No row: the caller keeps the status and answers with the class's code.
        for status in [
            StatusCode::PAYMENT_REQUIRED,
            StatusCode::GONE,
            StatusCode::BAD_GATEWAY,
        ] {
            assert_eq!(ErrorCode::for_status(status), None, "{status}");
        }
        assert_eq!(
            ErrorCode::for_class(StatusCode::FORBIDDEN),
            ErrorCode::RequestInvalid
        );
        assert_eq!(
            ErrorCode::for_class(StatusCode::SERVICE_UNAVAILABLE),
            ErrorCode::InternalError
        );
    }

    /// Every status the service can send on an error, and where it comes from: the catalogue's
    /// own codes, actix-web's errors (a payload cut short or too large), and the HTTP layer's
    /// rejections before a request is routed (a malformed or slow request head, one too large).
    /// A test holds that each has a row; a new source of statuses belongs here.
    const STATUSES_SENT: [StatusCode; 14] = [
        StatusCode::BAD_REQUEST,
        StatusCode::UNAUTHORIZED,
        StatusCode::FORBIDDEN,
        StatusCode::CONFLICT,
        StatusCode::UNPROCESSABLE_ENTITY,
        StatusCode::NOT_FOUND,
        StatusCode::METHOD_NOT_ALLOWED,
        StatusCode::REQUEST_TIMEOUT,
        StatusCode::PAYLOAD_TOO_LARGE,
        StatusCode::URI_TOO_LONG,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        StatusCode::TOO_MANY_REQUESTS,
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        StatusCode::INTERNAL_SERVER_ERROR,
    ];

    /// A status the service sends with no row would reach partners as a code whose catalogue
    /// status differs from the response's.
    #[test]
    fn every_status_the_service_sends_has_a_row() {
        for status in STATUSES_SENT {
            assert!(
                ErrorCode::for_status(status).is_some(),
                "{status} has no row"
            );
        }
    }
}
