//! What the request conventions give every operation, described once in the document's
//! `components` and referenced by `$ref` from each operation: the headers every response
//! carries (`components/headers`), and the error responses, one per status, from the error
//! catalogue (`components/responses`), each also in a headers-only form for the `HEAD` twins.
//! Described once, a convention reads the same on every operation, a new endpoint adds a few
//! lines to the document rather than hundreds, and a partner diffing two releases sees a
//! change of a convention once.

use actix_web::http::{Method, StatusCode};
use serde_json::json;
use utoipa::ToSchema;
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::example::ExampleBuilder;
use utoipa::openapi::header::{Header, HeaderBuilder};
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{Components, Ref, RefOr};

use crate::errors::{ApiError, ErrorCode, ErrorEnvelope};
use crate::request_id::RequestId;

/// Origin used in the document's example `doc_url`s and as its server's default origin.
pub const EXAMPLE_ORIGIN: &str = "https://api.example.com";

/// The headers every response carries, by name.
pub const CONVENTION_HEADERS: [&str; 4] = [
    "Cache-Control",
    "RateLimit",
    "RateLimit-Policy",
    "Service-Request-Id",
];

/// Name of the response a status the operation does not list is answered with.
const DEFAULT_ERROR: &str = "Error";

/// The statuses a balancer or proxy in front of the service answers with when the service
/// cannot: never the service itself (the catalogue has no row for them, a test below holds
/// that). Each is declared on every operation without content, because such an answer's body
/// is whatever the balancer writes, often HTML: a generated client then hands it back as an
/// error value to retry instead of parsing it as the error envelope, as `default` would have it
/// do (openapi-python-client raised `JSONDecodeError` on a balancer's HTML 503). Declared
/// beside `default`, not instead of it: removing `default` would remove the error envelope
/// from the responses a released client was generated with, which v1 promises not to do.
const GATEWAY_STATUSES: [StatusCode; 3] = [
    StatusCode::BAD_GATEWAY,
    StatusCode::SERVICE_UNAVAILABLE,
    StatusCode::GATEWAY_TIMEOUT,
];

/// Adds the shared headers and error responses to `components`.
pub fn add_to(components: &mut Components) {
    for (name, header) in headers() {
        components.headers.insert(name.to_owned(), RefOr::T(header));
    }
    for status in error_statuses() {
        let name = response_name(status);
        let response = error_response(status);
        components
            .responses
            .insert(headers_only_name(&name), RefOr::T(headers_only(&response)));
        components.responses.insert(name, RefOr::T(response));
    }
    for status in GATEWAY_STATUSES {
        components
            .responses
            .insert(response_name(status), RefOr::T(gateway_response(status)));
    }
    let default = default_response();
    components.responses.insert(
        headers_only_name(DEFAULT_ERROR),
        RefOr::T(headers_only(&default)),
    );
    components
        .responses
        .insert(DEFAULT_ERROR.to_owned(), RefOr::T(default));
}

/// A reference to the shared header `name`.
pub fn header_ref(name: &str) -> RefOr<Header> {
    RefOr::Ref(Ref::new(format!("#/components/headers/{name}")))
}

/// The error responses of an operation, as references: one per status of the catalogue
/// (`404` only where the path names a resource, `/things/{thing}`, which may not exist; a path
/// without parameters always does), the statuses only a balancer in front answers with
/// (`GATEWAY_STATUSES`, without content), and `default` for any other status, so that a
/// generated client reads every error of the service into the same type. `headers_only` for a
/// `HEAD` operation.
pub fn error_responses(
    names_a_resource: bool,
    headers_only: bool,
) -> Vec<(String, RefOr<Response>)> {
    let reference = |name: &str| {
        let name = if headers_only {
            headers_only_name(name)
        } else {
            name.to_owned()
        };
        RefOr::Ref(Ref::from_response_name(name))
    };
    let gateway = GATEWAY_STATUSES.into_iter().map(|status| {
        (
            status.as_str().to_owned(),
            RefOr::Ref(Ref::from_response_name(response_name(status))),
        )
    });
    error_statuses()
        .into_iter()
        .filter(|status| names_a_resource || *status != StatusCode::NOT_FOUND)
        .map(|status| {
            (
                status.as_str().to_owned(),
                reference(&response_name(status)),
            )
        })
        .chain(gateway)
        .chain([("default".to_owned(), reference(DEFAULT_ERROR))])
        .collect()
}

/// Every status the catalogue has a code for, in order.
fn error_statuses() -> Vec<StatusCode> {
    let mut statuses: Vec<StatusCode> = ErrorCode::ALL
        .iter()
        .map(|code| code.spec().status)
        .collect();
    statuses.sort_unstable();
    statuses.dedup();
    statuses
}

/// The component name of a status's response: its reason phrase in upper camel case
/// (`TooManyRequests`).
fn response_name(status: StatusCode) -> String {
    status
        .canonical_reason()
        .unwrap_or("Error")
        .split(|character: char| !character.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(|word| {
            let mut characters = word.chars();
            let first = characters.next().map(|first| first.to_ascii_uppercase());
            first
                .into_iter()
                .chain(characters.map(|rest| rest.to_ascii_lowercase()))
                .collect::<String>()
        })
        .collect()
}

fn headers_only_name(name: &str) -> String {
    format!("{name}HeadersOnly")
}

/// `response` as `HEAD` answers it: the same description and headers, no body.
fn headers_only(response: &Response) -> Response {
    let mut response = response.clone();
    response.content.clear();
    response
}

/// The convention headers, and `Allow` and `Retry-After`, which two error responses carry.
fn headers() -> Vec<(&'static str, Header)> {
    let string = || ObjectBuilder::new().schema_type(Type::String);
    let header = |schema: ObjectBuilder, description: &str, example: serde_json::Value| {
        HeaderBuilder::new()
            .schema(Some(schema))
            .description(Some(description))
            .example(Some(example))
            .build()
    };
    vec![
        (
            "Service-Request-Id",
            header(
                string().pattern(Some("^req_[0-9a-f]{32}$")),
                "Id of this request, the same as `request_id` in an error body. Log it, and \
                 quote it when reporting a problem.",
                json!(RequestId::EXAMPLE.as_str()),
            ),
        ),
        (
            "Cache-Control",
            header(
                string().enum_values(Some(["no-store"])),
                "Responses are never cached.",
                json!("no-store"),
            ),
        ),
        (
            "RateLimit-Policy",
            header(
                string().pattern(Some(r#"^"api";q=[0-9]+;w=[0-9]+$"#)),
                "Your quota: `q` requests, refilled in `w` seconds. See \"Rate limits\" above.",
                json!(r#""api";q=50;w=5"#),
            ),
        ),
        (
            "RateLimit",
            header(
                string().pattern(Some(r#"^"api";r=[0-9]+;t=[0-9]+$"#)),
                "What is left of your quota: `r` requests, full again in `t` seconds.",
                json!(r#""api";r=49;t=1"#),
            ),
        ),
        (
            "Allow",
            header(
                string(),
                "The methods this path answers.",
                json!("GET, HEAD"),
            ),
        ),
        (
            "Retry-After",
            header(
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .minimum(Some(1)),
                "Whole seconds to wait before retrying; never 0.",
                json!(1),
            ),
        ),
    ]
}

/// The headers every response carries, as references.
fn convention_header_refs(response: &mut Response) {
    for name in CONVENTION_HEADERS {
        response.headers.insert(name.to_owned(), header_ref(name));
    }
}

/// The response with `status`, from the catalogue: each code of that status described, with
/// its example.
fn error_response(status: StatusCode) -> Response {
    let codes: Vec<ErrorCode> = ErrorCode::ALL
        .into_iter()
        .filter(|code| code.spec().status == status)
        .collect();
    let description = codes
        .iter()
        .map(|code| format!("`{}`: {}", code.as_str(), code.spec().when))
        .collect::<Vec<_>>()
        .join("\n\n");
    let examples = codes.iter().map(|code| {
        let error = example_error(*code);
        let body = serde_json::to_value(
            error.envelope(RequestId::EXAMPLE.as_str(), EXAMPLE_ORIGIN.into()),
        )
        .expect("error bodies serialize");
        (
            code.as_str(),
            ExampleBuilder::new()
                .summary(code.spec().default_message)
                .value(Some(body))
                .build(),
        )
    });
    let content = ContentBuilder::new()
        .schema(Some(Ref::from_schema_name(ErrorEnvelope::name())))
        .examples_from_iter(examples)
        .build();
    let mut response = ResponseBuilder::new()
        .description(description)
        .content("application/json", content)
        .build();
    convention_header_refs(&mut response);
    if status == StatusCode::METHOD_NOT_ALLOWED {
        response
            .headers
            .insert("Allow".to_owned(), header_ref("Allow"));
    }
    if status == StatusCode::TOO_MANY_REQUESTS {
        response
            .headers
            .insert("Retry-After".to_owned(), header_ref("Retry-After"));
    }
    response
}

/// The response to a status no operation lists: the error envelope, whatever the code.
fn default_response() -> Response {
    let content = ContentBuilder::new()
        .schema(Some(Ref::from_schema_name(ErrorEnvelope::name())))
        .build();
    let mut response = ResponseBuilder::new()
        .description(
            "Any other error. The body is the error envelope; act on its `type` and `code` \
             (every code is explained at `/docs/errors`).",
        )
        .content("application/json", content)
        .build();
    convention_header_refs(&mut response);
    response
}

/// The response a balancer gives for the service with `status`: described, without content or
/// headers, since nothing of it is the service's. One form serves `GET` and `HEAD` alike.
fn gateway_response(status: StatusCode) -> Response {
    ResponseBuilder::new()
        .description(format!(
            "Not an answer of the service: a balancer or proxy in front of it answered `{status}` \
             for it (the service was restarting, overloaded or out of reach). The body, often \
             HTML, is not the error envelope, and none of the service's headers is promised. Retry \
             with backoff, as the guide's \"Retries and backoff\" says.",
            status = status.as_str(),
        ))
        .build()
}

/// A representative error of `code` for the document's examples.
fn example_error(code: ErrorCode) -> ApiError {
    match code {
        ErrorCode::ParameterUnknown => ApiError::parameter_unknown("foo"),
        ErrorCode::MethodNotAllowed => ApiError::method_not_allowed(
            &Method::DELETE,
            "GET, HEAD".parse().expect("method lists are header values"),
        ),
        ErrorCode::RateLimited => ApiError::rate_limited(1),
        code => ApiError::new(code),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_service_never_answers_a_gateway_status() {
        for status in GATEWAY_STATUSES {
            assert_eq!(ErrorCode::for_status(status), None, "{status}");
            assert!(!error_statuses().contains(&status), "{status}");
        }
    }

    #[test]
    fn response_names_are_the_reason_phrases_in_camel_case() {
        assert_eq!(
            response_name(StatusCode::TOO_MANY_REQUESTS),
            "TooManyRequests"
        );
        assert_eq!(response_name(StatusCode::URI_TOO_LONG), "UriTooLong");
        assert_eq!(
            response_name(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE),
            "RequestHeaderFieldsTooLarge"
        );
        assert_eq!(
            response_name(StatusCode::HTTP_VERSION_NOT_SUPPORTED),
            "HttpVersionNotSupported"
        );
    }
}
