//! The OpenAPI document. Handlers and types carry `#[utoipa::path]` and `ToSchema`
//! annotations; [`document`] collects them through the same `api::register` the server
//! uses and adds what the request conventions give every operation, so the document cannot
//! describe routes the server does not have: the pinned `info`, the `/v1` server, the error
//! responses (from the error catalogue, with their headers and examples), the headers every
//! response carries, and the HEAD twin of every GET. `openapi/v1.yaml` is exactly
//! [`to_yaml`]'s output; a test fails when the two differ. [`oas30`] derives the 3.0.3
//! rendition, `openapi/v1.oas30.yaml`, for generators that read 3.0 only.

pub mod oas30;

use actix_web::App;
use actix_web::http::{Method, StatusCode};
use serde_json::json;
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::example::ExampleBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{Operation, PathItem};
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::server::Server;
use utoipa::openapi::tag::{Tag, TagBuilder};
use utoipa::openapi::{Components, Info, OpenApi, Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};
use utoipa_actix_web::AppExt;

use crate::api;
use crate::api::list::{self, Cursor, Limit};
use crate::errors::{ApiError, ErrorCode, ErrorEnvelope};
use crate::http::routes::{self, API_PREFIX, ExtraRoutes};
use crate::http::state::AppState;
use crate::request_id::RequestId;

/// Origin used in the document's example `doc_url`s.
const EXAMPLE_ORIGIN: &str = "https://api.example.com";

/// The document, as the code describes it.
pub fn document() -> OpenApi {
    document_with(|_| {})
}

/// The document with `extra` endpoints registered beside the API's own: how the tests
/// describe an endpoint that exists only in the test build.
pub fn document_with(extra: ExtraRoutes) -> OpenApi {
    let (_, registered) = App::new()
        .into_utoipa_app()
        .configure(|config| api::register(config, &AppState::default()))
        .configure(extra)
        .split_for_parts();
    complete(registered)
}

/// The document as YAML: the content of `openapi/v1.yaml`.
pub fn to_yaml(document: &OpenApi) -> String {
    document.to_yaml().expect("the document serializes")
}

/// The document as pretty-printed JSON, with a final newline.
pub fn to_json(document: &OpenApi) -> String {
    let mut json = document.to_pretty_json().expect("the document serializes");
    json.push('\n');
    json
}

fn complete(mut api: OpenApi) -> OpenApi {
    api.info = info();
    api.servers = Some(vec![Server::new(API_PREFIX)]);
    api.tags = Some(tags_in_use(&api));

    let components = api.components.get_or_insert_with(Components::new);
    let mut error_schemas = Vec::new();
    <ErrorEnvelope as ToSchema>::schemas(&mut error_schemas);
    error_schemas.push((ErrorEnvelope::name().into_owned(), ErrorEnvelope::schema()));
    components.schemas.extend(error_schemas);
    // The list envelope and its parameters are the contract's whether or not an endpoint
    // lists anything yet: published once, for every list to come.
    components.schemas.extend([
        (
            list::LIST_ENVELOPE.to_owned(),
            list::envelope_schema().into(),
        ),
        (Limit::name().into_owned(), Limit::schema()),
        (Cursor::name().into_owned(), Cursor::schema()),
    ]);

    let registered = std::mem::take(&mut api.paths.paths);
    for (path, mut item) in registered {
        let relative = path
            .strip_prefix(API_PREFIX)
            .expect("every endpoint is registered under the version prefix");
        document_conventions(&mut item, relative.contains('{'));
        api.paths.paths.insert(relative.to_owned(), item);
    }
    api
}

/// The tags the operations declare, in the order they first appear, each with its
/// description from [`api::TAGS`] (a test holds that the API's tags all have one).
fn tags_in_use(api: &OpenApi) -> Vec<Tag> {
    let mut used: Vec<&str> = Vec::new();
    for tag in api
        .paths
        .paths
        .values()
        .flat_map(operations)
        .flat_map(|operation| operation.tags.iter().flatten())
    {
        if !used.contains(&tag.as_str()) {
            used.push(tag);
        }
    }
    used.into_iter()
        .map(|name| {
            let description = api::TAGS
                .iter()
                .find(|(described, _)| *described == name)
                .map(|(_, description)| *description);
            TagBuilder::new()
                .name(name)
                .description(description)
                .build()
        })
        .collect()
}

fn info() -> Info {
    let mut info = Info::new("partner-api", "1");
    info.description = Some(INFO_DESCRIPTION.to_owned());
    info
}

const INFO_DESCRIPTION: &str = "\
The API through which doctors, clinics, pharmacies and medical companies connect their own \
systems to the online training and lifestyle programme.

**Early access.** Each endpoint is agreed with a partner before it is built. Today the API has \
one endpoint, `GET /ping`, a connectivity check that needs no key.

**Member data.** The service holds health data about its members. Partner terms and a data \
processing agreement are signed before any key reaches member data. Members are identified by \
id only: the API never returns a member's name, e-mail address, phone number or date of birth \
unless a dedicated endpoint exists for that purpose and the partner's agreement covers it. \
Nothing in the API makes promises about a member's health.

**Conventions.** Every response is JSON, is never cached (`Cache-Control: no-store`) and \
carries a `Service-Request-Id` header (`req_` and 32 hex digits): log it, and quote it when \
reporting a problem. A query parameter or body field that an endpoint does not know is refused \
with `parameter_unknown`, never ignored. `HEAD` is answered wherever `GET` is.

**Errors.** Every error has the body described by `ErrorEnvelope`. Act on `type` and `code`; \
`message` is for people and may change. A path that does not exist answers `404` with code \
`resource_missing`, whatever the method; an existing path answers `405` \
`method_not_allowed`, with an `Allow` header, for a method it does not support. Every code is \
explained, with what to do about it, at `/docs/errors`.

**Rate limits.** Each client (an IPv4 address, or an IPv6 /64) has a quota: by default 10 \
requests per second sustained, with bursts of up to 50. Every response carries the IETF quota \
fields (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy: \"api\";q=<burst>;w=<seconds \
to refill it>` and `RateLimit: \"api\";r=<requests left>;t=<seconds until the quota is full \
again>`, so a client can slow down before it is refused. Excess requests are answered `429` \
with code `rate_limited` and a `Retry-After` header: the whole seconds to wait, never 0.";

/// Adds to every operation of `item` what the request conventions give it.
fn document_conventions(item: &mut PathItem, names_a_resource: bool) {
    let allow = routes::allowed_methods(item).join(", ");
    for operation in operations_mut(item) {
        if let Some(parameters) = &mut operation.parameters {
            list::describe_parameters(parameters);
        }
        for response in operation.responses.responses.values_mut() {
            if let RefOr::T(response) = response {
                add_convention_headers(response);
            }
        }
        for (status, response) in error_responses(&allow, names_a_resource) {
            operation
                .responses
                .responses
                .insert(status.as_str().to_owned(), RefOr::T(response));
        }
    }
    document_head(item);
}

fn operations(item: &PathItem) -> impl Iterator<Item = &Operation> {
    [
        &item.get,
        &item.put,
        &item.post,
        &item.delete,
        &item.options,
        &item.head,
        &item.patch,
        &item.trace,
    ]
    .into_iter()
    .filter_map(Option::as_ref)
}

fn operations_mut(item: &mut PathItem) -> impl Iterator<Item = &mut Operation> {
    [
        &mut item.get,
        &mut item.put,
        &mut item.post,
        &mut item.delete,
        &mut item.options,
        &mut item.head,
        &mut item.patch,
        &mut item.trace,
    ]
    .into_iter()
    .filter_map(Option::as_mut)
}

/// The route machinery answers HEAD wherever it answers GET (`http::routes::resource`), so
/// every GET gets its HEAD twin here, whether its annotation names HEAD or not: like the GET,
/// without a body, with its own `operationId` (ids are unique in a document).
fn document_head(item: &mut PathItem) {
    let Some(get) = &item.get else {
        return;
    };
    let head = item.head.get_or_insert_with(|| get.clone());
    let get_id = get.operation_id.clone().unwrap_or_default();
    head.operation_id = Some(format!("{get_id}_head"));
    head.summary = get
        .summary
        .as_ref()
        .map(|summary| format!("{summary} (headers only)"));
    head.description = Some(format!(
        "Answers exactly like `GET` (operation `{get_id}`), with the same status and headers \
         and no body."
    ));
    for response in head.responses.responses.values_mut() {
        if let RefOr::T(response) = response {
            response.content.clear();
        }
    }
}

fn add_convention_headers(response: &mut Response) {
    let string = || ObjectBuilder::new().schema_type(Type::String);
    let headers = [
        (
            "Service-Request-Id",
            string().pattern(Some("^req_[0-9a-f]{32}$")),
            "Id of this request; the same value as `request_id` in an error body. Log it, and \
             quote it when reporting a problem.",
            None,
        ),
        (
            "Cache-Control",
            string().enum_values(Some(["no-store"])),
            "Responses are never cached.",
            None,
        ),
        (
            "RateLimit-Policy",
            string().pattern(Some(r#"^"api";q=[0-9]+;w=[0-9]+$"#)),
            "The client's quota policy (draft-ietf-httpapi-ratelimit-headers): `q` requests at \
             once, refilled in `w` seconds. Absent where the operator switched limiting off, \
             and on the answers the HTTP layer gives to a request head it could not read (400, \
             408, 414, 431), which is never counted.",
            Some(r#""api";q=50;w=5"#),
        ),
        (
            "RateLimit",
            string().pattern(Some(r#"^"api";r=[0-9]+;t=[0-9]+$"#)),
            "The client's quota now (draft-ietf-httpapi-ratelimit-headers): `r` requests left, \
             full again in `t` seconds. Absent where the operator switched limiting off, \
             and on the answers the HTTP layer gives to a request head it could not read (400, \
             408, 414, 431), which is never counted.",
            Some(r#""api";r=49;t=1"#),
        ),
    ];
    for (name, schema, description, example) in headers {
        response.headers.insert(
            name.to_owned(),
            RefOr::T(
                HeaderBuilder::new()
                    .schema(Some(schema))
                    .description(Some(description))
                    .example(example.map(|example| json!(example)))
                    .build(),
            ),
        );
    }
}

/// The error responses every operation can give, one per status, from the catalogue. 404 is
/// not listed per operation: it answers paths that have no operation, and the document's
/// description and the error pages explain it.
/// The error responses of an operation. `404` only where the path names a resource
/// (`/things/{thing}`), which may not exist; a path without parameters always does.
fn error_responses(allow: &str, names_a_resource: bool) -> Vec<(StatusCode, Response)> {
    let mut statuses: Vec<StatusCode> = ErrorCode::ALL
        .iter()
        .filter(|code| names_a_resource || **code != ErrorCode::ResourceMissing)
        .map(|code| code.spec().status)
        .collect();
    statuses.sort_unstable();
    statuses.dedup();
    statuses
        .into_iter()
        .map(|status| (status, error_response(status, allow)))
        .collect()
}

fn error_response(status: StatusCode, allow: &str) -> Response {
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
        let error = example_error(*code, allow);
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
    add_convention_headers(&mut response);
    if status == StatusCode::METHOD_NOT_ALLOWED {
        response.headers.insert(
            "Allow".to_owned(),
            RefOr::T(
                HeaderBuilder::new()
                    .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
                    .description(Some(
                        "The methods this path answers (RFC 9110, section 10.2.1).",
                    ))
                    .example(Some(json!(allow)))
                    .build(),
            ),
        );
    }
    if status == StatusCode::TOO_MANY_REQUESTS {
        response.headers.insert(
            "Retry-After".to_owned(),
            RefOr::T(
                HeaderBuilder::new()
                    .schema(Some(
                        ObjectBuilder::new()
                            .schema_type(Type::Integer)
                            .minimum(Some(1)),
                    ))
                    .description(Some(
                        "Whole seconds to wait before retrying, rounded up; never 0.",
                    ))
                    .example(Some(json!(1)))
                    .build(),
            ),
        );
    }
    response
}

/// A representative error of `code` for the document's examples.
fn example_error(code: ErrorCode, allow: &str) -> ApiError {
    match code {
        ErrorCode::ParameterUnknown => ApiError::parameter_unknown("foo"),
        ErrorCode::MethodNotAllowed => ApiError::method_not_allowed(
            &Method::DELETE,
            allow.parse().expect("method lists are header values"),
        ),
        ErrorCode::RateLimited => ApiError::rate_limited(1),
        code => ApiError::new(code),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An endpoint declares its tag; the document lists the tags in use, each described.
    #[test]
    fn every_tag_in_use_is_listed_with_its_description() {
        let document = document();
        let tags = document.tags.as_ref().unwrap();
        assert!(!tags.is_empty());
        for tag in tags {
            assert!(
                tag.description
                    .as_ref()
                    .is_some_and(|text| !text.is_empty()),
                "the tag {} is used by an endpoint: describe it in api::TAGS",
                tag.name
            );
        }
    }

    #[test]
    fn every_catalogue_code_but_404_is_documented_on_ping() {
        let document = serde_json::to_value(document()).unwrap();
        let responses = &document["paths"]["/ping"]["get"]["responses"];
        for code in ErrorCode::ALL {
            let status = code.spec().status.as_str().to_owned();
            let example = &responses[&status]["content"]["application/json"]["examples"]
                [code.as_str()]["value"]["error"]["code"];
            if code == ErrorCode::ResourceMissing {
                assert!(responses.get(&status).is_none());
            } else {
                assert_eq!(example, code.as_str(), "{code:?}");
            }
        }
    }

    #[test]
    fn head_twin_has_its_own_id_and_no_content() {
        let document = serde_json::to_value(document()).unwrap();
        let head = &document["paths"]["/ping"]["head"];
        assert_eq!(head["operationId"], "ping_head");
        assert!(head["responses"]["200"].get("content").is_none());
        assert!(head["responses"]["200"]["headers"]["Service-Request-Id"].is_object());
    }
}
