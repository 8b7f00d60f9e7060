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
/// cannot. The service itself never answers 502 or 504 (the catalogue has no row for them, a
/// test below holds that); it answers 503 only as `service_unavailable`, on an operation on
/// member data whose store or audit trail is out of reach. Each is declared on every operation
/// without content, because such an answer's body may be whatever the balancer writes, often
/// HTML: a generated client then hands it back as an error value to retry instead of parsing it
/// as the error envelope, as `default` would have it do (openapi-python-client raised
/// `JSONDecodeError` on a balancer's HTML 503), and retrying is what a 503 from the service
/// asks for too. Declared beside `default`, not instead of it: removing `default` would remove
/// the error envelope from the responses a released client was generated with, which v1
/// promises not to do.
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

/// The codes every operation can answer, whatever it declares: the HTTP layer's and the
/// conventions' refusals, a query parameter it does not know (`parameter_unknown`), and a body
/// it was not meant to get (every operation reads one to refuse it: `json_invalid`,
/// `parameter_invalid` for one that is not an object, `content_type_unsupported`).
pub const CONVENTION_CODES: [ErrorCode; 13] = [
    ErrorCode::MethodNotAllowed,
    ErrorCode::ParameterUnknown,
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
];

/// The codes a refused key is answered with, on every operation that needs one.
pub const KEY_CODES: [ErrorCode; 6] = [
    ErrorCode::KeyMissing,
    ErrorCode::KeyMalformed,
    ErrorCode::KeyUnknown,
    ErrorCode::KeyExpired,
    ErrorCode::KeyRevoked,
    ErrorCode::KeyScopeMissing,
];

/// The codes of an `Idempotency-Key` sent again, on every operation that takes one.
pub const IDEMPOTENCY_CODES: [ErrorCode; 2] = [
    ErrorCode::IdempotencyKeyInUse,
    ErrorCode::IdempotencyKeyReused,
];

/// The error responses of an operation that may answer `codes`, as references: one per status
/// (each naming exactly the codes of that status the operation may answer, a component shared
/// by every operation answering the same ones, [`response_name_for`]), the statuses only a
/// balancer in front answers with (`GATEWAY_STATUSES`, without content), and `default` for any
/// other status, so that a generated client reads every error of the service into the same
/// type. `for_head` for a `HEAD` operation. The components referred to are added to
/// `components`.
pub fn error_responses(
    codes: &[ErrorCode],
    for_head: bool,
    components: &mut Components,
) -> Vec<(String, RefOr<Response>)> {
    let reference = |name: &str| {
        let name = if for_head {
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
    // A gateway status is declared once, below, whoever answers it.
    let mut statuses: Vec<StatusCode> = codes
        .iter()
        .map(|code| code.spec().status)
        .filter(|status| !GATEWAY_STATUSES.contains(status))
        .collect();
    statuses.sort_unstable();
    statuses.dedup();
    let mut responses = Vec::with_capacity(statuses.len() + 4);
    for status in statuses {
        // In the catalogue's order, whatever the order of `codes`.
        let at_status: Vec<ErrorCode> = ErrorCode::ALL
            .into_iter()
            .filter(|code| code.spec().status == status && codes.contains(code))
            .collect();
        let name = response_name_for(status, &at_status);
        if !components.responses.contains_key(&name) {
            let response = error_response(status, &at_status);
            components
                .responses
                .insert(headers_only_name(&name), RefOr::T(headers_only(&response)));
            components
                .responses
                .insert(name.clone(), RefOr::T(response));
        }
        if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
            let (name, header) = www_authenticate();
            components.headers.insert(name.to_owned(), RefOr::T(header));
        }
        responses.push((status.as_str().to_owned(), reference(&name)));
    }
    responses.extend(gateway);
    responses.push(("default".to_owned(), reference(DEFAULT_ERROR)));
    responses
}

/// The component name of the response with `status` answering `codes`: the status's reason
/// phrase in upper camel case (`BadRequest`) when they are the codes every operation answers
/// with that status, or, for a status no convention gives, every code the catalogue has for
/// it (`Unauthorized`); with `With` and the codes beyond the conventions' when an operation
/// adds some (`BadRequestWithParameterMissing`), or `Of` and its codes when it answers only
/// some of a status's (`ConflictOfStateConflict`). So an endpoint's own codes never reach
/// another's documentation, and operations answering the same share one component.
fn response_name_for(status: StatusCode, codes: &[ErrorCode]) -> String {
    let plain = response_name(status);
    let of_status: Vec<ErrorCode> = ErrorCode::ALL
        .into_iter()
        .filter(|code| code.spec().status == status)
        .collect();
    let conventional: Vec<ErrorCode> = of_status
        .iter()
        .copied()
        .filter(|code| CONVENTION_CODES.contains(code))
        .collect();
    let camel = |codes: &mut dyn Iterator<Item = &ErrorCode>| -> String {
        codes
            .flat_map(|code| code.as_str().split('_'))
            .map(|word| {
                let mut characters = word.chars();
                characters
                    .next()
                    .map(|first| first.to_ascii_uppercase())
                    .into_iter()
                    .chain(characters)
                    .collect::<String>()
            })
            .collect()
    };
    let expected = if conventional.is_empty() {
        &of_status
    } else {
        &conventional
    };
    if codes == expected.as_slice() {
        plain
    } else if !conventional.is_empty() && conventional.iter().all(|code| codes.contains(code)) {
        let extra = &mut codes.iter().filter(|code| !conventional.contains(code));
        format!("{plain}With{}", camel(extra))
    } else {
        format!("{plain}Of{}", camel(&mut codes.iter()))
    }
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
                "Your quota: `q` requests, refilled in `w` seconds (the API's description, \
                 \"Rate limits\").",
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

/// The error examples' `doc_url`s (the shared error responses' examples) under `origin`
/// rather than [`EXAMPLE_ORIGIN`]: a served document's example names the page its server's
/// errors point at.
pub fn name_origin_in_error_examples(components: &mut Components, origin: &str) {
    let placeholder = format!("{EXAMPLE_ORIGIN}/docs/errors#");
    let served = format!("{origin}/docs/errors#");
    for response in components.responses.values_mut() {
        let RefOr::T(response) = response else {
            continue;
        };
        for content in response.content.values_mut() {
            let RefOr::T(content) = content else {
                continue;
            };
            for example in content.examples.values_mut() {
                let RefOr::T(example) = example else {
                    continue;
                };
                let doc_url = example
                    .value
                    .as_mut()
                    .and_then(|body| body.pointer_mut("/error/doc_url"));
                if let Some(serde_json::Value::String(url)) = doc_url
                    && let Some(anchor) = url.strip_prefix(&placeholder)
                {
                    let named = format!("{served}{anchor}");
                    *url = named;
                }
            }
        }
    }
}

/// The response with `status` answering `codes` (of that status), from the catalogue: each
/// code described, with its example.
fn error_response(status: StatusCode, codes: &[ErrorCode]) -> Response {
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
    if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
        let (name, _) = www_authenticate();
        response.headers.insert(name.to_owned(), header_ref(name));
    }
    response
}

/// `WWW-Authenticate`, which a refused key's 401 and 403 carry; published with the first
/// operation that needs a key.
fn www_authenticate() -> (&'static str, Header) {
    let header = HeaderBuilder::new()
        .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
        .description(Some(
            "The challenge of RFC 6750: `Bearer realm=\"partner-api\"`, with \
             `error=\"invalid_token\"` for a key that cannot be used and \
             `error=\"insufficient_scope\"` for one without the operation's scope.",
        ))
        .example(Some(json!(
            r#"Bearer realm="partner-api", error="invalid_token""#
        )))
        .build();
    ("WWW-Authenticate", header)
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
            "{who} answered `{status}` for it (the service was restarting, overloaded or out of \
             reach). The body, often HTML, is not the error envelope, and none of the service's \
             headers is promised. Retry with backoff, as the guide's \"Retries and backoff\" \
             says.{own}",
            who = "A balancer or proxy in front of the service",
            status = status.as_str(),
            own = if status == StatusCode::SERVICE_UNAVAILABLE {
                " On an operation on member data the service itself may answer it too, when \
                 member data or its audit trail cannot be reached: then the body is the error \
                 envelope (`Content-Type: application/json`, code `service_unavailable`), \
                 nothing was read or changed, and `Retry-After` says when to retry."
            } else {
                ""
            },
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
    fn the_service_answers_no_gateway_status_but_its_own_503() {
        for status in GATEWAY_STATUSES {
            let expected = (status == StatusCode::SERVICE_UNAVAILABLE)
                .then_some(ErrorCode::ServiceUnavailable);
            assert_eq!(ErrorCode::for_status(status), expected, "{status}");
        }
    }

    #[test]
    fn a_response_is_named_by_the_codes_it_answers() {
        use ErrorCode::*;
        let name = |status, codes: &[ErrorCode]| response_name_for(status, codes);
        let bad = [
            ParameterUnknown,
            ParameterInvalid,
            JsonInvalid,
            RequestInvalid,
        ];
        assert_eq!(name(StatusCode::BAD_REQUEST, &bad), "BadRequest");
        let missing = [
            ParameterUnknown,
            ParameterMissing,
            ParameterInvalid,
            JsonInvalid,
            RequestInvalid,
        ];
        assert_eq!(
            name(StatusCode::BAD_REQUEST, &missing),
            "BadRequestWithParameterMissing"
        );
        assert_eq!(
            name(StatusCode::UNAUTHORIZED, &KEY_CODES[..5]),
            "Unauthorized"
        );
        assert_eq!(name(StatusCode::FORBIDDEN, &[KeyScopeMissing]), "Forbidden");
        assert_eq!(name(StatusCode::NOT_FOUND, &[ResourceMissing]), "NotFound");
        assert_eq!(
            name(StatusCode::CONFLICT, &[StateConflict, IdempotencyKeyInUse]),
            "Conflict"
        );
        assert_eq!(
            name(StatusCode::CONFLICT, &[StateConflict]),
            "ConflictOfStateConflict"
        );
        assert_eq!(
            name(StatusCode::TOO_MANY_REQUESTS, &[RateLimited]),
            "TooManyRequests"
        );
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
