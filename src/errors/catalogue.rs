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
    /// the response and no [`ApiError`](super::ApiError) is attached to it.
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
}
