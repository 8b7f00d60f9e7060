//! The OpenAPI document. Handlers and types carry `#[utoipa::path]` and `ToSchema`
//! annotations; [`document`] collects them through the same `api::ENDPOINTS` the server
//! uses and adds what the request conventions give every operation, so the document cannot
//! describe routes the server does not have: the pinned `info`, the `/v1` server, the error
//! responses (from the error catalogue, with their headers and examples), the headers every
//! response carries, the HEAD twin of every GET, and each operation's code samples
//! (`x-codeSamples`, [`code_samples`]). `openapi/v1.yaml` is exactly
//! [`to_yaml`]'s output; a test fails when the two differ. [`oas30`] derives the 3.0.3
//! rendition, `openapi/v1.oas30.yaml`, for generators that read 3.0 only.

mod code_samples;
mod components;
mod deprecation;
pub mod oas30;
pub mod releases;
mod yaml;

use actix_web::App;
use utoipa::openapi::external_docs::ExternalDocs;
use utoipa::openapi::info::Contact;
use utoipa::openapi::path::{Operation, PathItem};
use utoipa::openapi::response::Response;
use utoipa::openapi::server::Server;
use utoipa::openapi::tag::{Tag, TagBuilder};
use utoipa::openapi::{Components, Info, OpenApi, RefOr};
use utoipa::{PartialSchema, ToSchema};
use utoipa_actix_web::AppExt;

use crate::api;
use crate::api::id::Id;
use crate::api::list::{self, Cursor, Limit};
use crate::edge::deprecation::Deprecation;
use crate::edge::mount::Endpoints;
use crate::edge::routes::API_PREFIX;
use crate::errors::ErrorEnvelope;

pub use components::EXAMPLE_ORIGIN;

/// The contract's revision, from the record that `scripts/release-contract` appends to, so a
/// client generated from the document can tell which revision it was built from.
pub fn revision() -> String {
    releases::revision_of(&releases::latest_date())
}

/// The document, as the code describes it.
pub fn document() -> OpenApi {
    document_with(&Endpoints::<()>::NONE)
}

/// The document with `extra` endpoints mounted beside the API's own, as the app factory
/// mounts them: how the tests describe the endpoints that exist only in their build.
pub fn document_with<C: ?Sized>(extra: &Endpoints<C>) -> OpenApi {
    let (_, registered) = App::new()
        .into_utoipa_app()
        .configure(|config| api::ENDPOINTS.mount_on(config))
        .configure(|config| extra.mount_on(config))
        .split_for_parts();
    let deprecations: Vec<Deprecation> = api::ENDPOINTS
        .deprecations
        .iter()
        .chain(extra.deprecations)
        .copied()
        .collect();
    let tags: Vec<(&str, &str)> = api::ENDPOINTS
        .tags
        .iter()
        .chain(extra.tags)
        .copied()
        .collect();
    complete(registered, &deprecations, &tags)
}

/// The document as YAML: the content of `openapi/v1.yaml` (dates and YAML 1.1's booleans
/// quoted, [`yaml`]).
pub fn to_yaml(document: &OpenApi) -> String {
    yaml::quoted_for_yaml11(&document.to_yaml().expect("the document serializes"))
}

/// The document as pretty-printed JSON, with a final newline.
pub fn to_json(document: &OpenApi) -> String {
    let mut json = document.to_pretty_json().expect("the document serializes");
    json.push('\n');
    json
}

fn complete(mut api: OpenApi, deprecations: &[Deprecation], tags: &[(&str, &str)]) -> OpenApi {
    api.info = info();
    api.tags = Some(tags_in_use(&api, tags));

    let components = api.components.get_or_insert_with(Components::new);
    let mut error_schemas = Vec::new();
    <ErrorEnvelope as ToSchema>::schemas(&mut error_schemas);
    error_schemas.push((ErrorEnvelope::name().into_owned(), ErrorEnvelope::schema()));
    components.schemas.extend(error_schemas);
    // The list envelope and its parameters, and the shape of an id, are the contract's whether
    // or not an endpoint lists or names anything yet: published once, for every one to come.
    components.schemas.extend([
        (
            list::LIST_ENVELOPE.to_owned(),
            list::envelope_schema().into(),
        ),
        (Limit::name().into_owned(), Limit::schema()),
        (Cursor::name().into_owned(), Cursor::schema()),
        (Id::name().into_owned(), Id::schema()),
    ]);
    components::add_to(components);

    let registered = std::mem::take(&mut api.paths.paths);
    for (path, mut item) in registered {
        let relative = path
            .strip_prefix(API_PREFIX)
            .expect("every endpoint is registered under the version prefix");
        document_conventions(&mut item, relative.contains('{'));
        deprecation::document(&mut item, deprecations);
        api.paths.paths.insert(relative.to_owned(), item);
    }
    if deprecations.is_empty() {
        // The headers only deprecated operations carry are published with the first.
    } else if let Some(components) = &mut api.components {
        deprecation::add_headers(components);
    }
    drop_unused_responses(&mut api);
    // The placeholder origin, which a served document replaces (`for_origin`); last, because
    // the code samples are written from the finished operations.
    for_origin(api, EXAMPLE_ORIGIN)
}

/// Removes the shared responses no operation refers to: `NotFound` stays out until a path
/// names a resource that may not exist.
fn drop_unused_responses(api: &mut OpenApi) {
    let paths = serde_json::to_string(&api.paths).expect("the paths serialize");
    if let Some(components) = &mut api.components {
        components
            .responses
            .retain(|name, _| paths.contains(&format!("\"#/components/responses/{name}\"")));
    }
}

/// The document as served by a server whose partners reach it at `origin`: the same, with
/// `origin` in its server's URL and in every code sample, so that a client generated from the
/// served document, or a sample copied from it, calls the right host without being told.
pub fn for_origin(mut document: OpenApi, origin: &str) -> OpenApi {
    code_samples::add_to(&mut document, &format!("{origin}{API_PREFIX}"));
    document.servers = Some(vec![server(origin)]);
    document.external_docs = Some(guide(origin));
    document.info.contact = Some(contact(origin));
    document
}

/// Where the partners' guide is served, relative to the origin (the docs serve it there).
pub const GUIDE_PATH: &str = "/docs/guide";

/// The guide's section on reporting a problem, which `info.contact` names.
pub const SUPPORT_ANCHOR: &str = "support-and-escalation";

/// The guide, as the document's `externalDocs`: what the reference does not say (retries,
/// timeouts, limits, keys, support) is there, one click from any generated client's docs.
fn guide(origin: &str) -> ExternalDocs {
    let mut guide = ExternalDocs::new(format!("{origin}{GUIDE_PATH}"));
    guide.description = Some(
        "The guide for partners: base URL, keys, rate limits, retries and timeouts, \
         deprecation, generating a client, support."
            .to_owned(),
    );
    guide
}

/// `info.contact`: partners report problems to the technical contact their agreement names,
/// as the guide's support section says; there is no public address.
fn contact(origin: &str) -> Contact {
    let mut contact = Contact::new();
    contact.name = Some("partner-api support (the technical contact in your agreement)".to_owned());
    contact.url = Some(format!("{origin}{GUIDE_PATH}#{SUPPORT_ANCHOR}"));
    contact
}

/// The one server: `<origin>/v1`, one concrete absolute URL. Absolute, because a relative
/// server URL leaves a generated client with no host at all (openapi-generator's
/// `typescript-axios` fails with `ERR_INVALID_URL`; Go's defaults to `/v1`); without server
/// variables, because generators' defaults ignore them (hey-api and openapi-fetch called
/// `/ping`; openapi-python-client left the origin and `/v1` to the caller). The committed
/// document names [`EXAMPLE_ORIGIN`], a placeholder the served one replaces.
fn server(origin: &str) -> Server {
    let mut server = Server::new(format!("{origin}{API_PREFIX}"));
    server.description = Some("partner-api, version 1".to_owned());
    server
}

/// The tags the operations declare, in the order they first appear, each with its
/// description from `described` (a test holds that every tag in use has one).
fn tags_in_use(api: &OpenApi, described: &[(&str, &str)]) -> Vec<Tag> {
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
            let description = described
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
    let mut info = Info::new("partner-api", &revision());
    info.description = Some(INFO_DESCRIPTION.to_owned());
    info
}

const INFO_DESCRIPTION: &str = "\
The API through which doctors, clinics, pharmacies and medical companies connect their own \
systems to the online training and lifestyle programme.

**Early access.** Each endpoint is agreed with a partner before it is built; this document \
describes every endpoint that exists, and the changelog at `/docs/changelog` says when each \
came.

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
explained, with what to do about it, at `/docs/errors`. Each operation also lists `502`, `503` \
and `504` without content: the service never answers them, a balancer or proxy in front of it \
does, and its body (often HTML) is not the error envelope. Treat them as transient failures and \
retry with backoff.

**Rate limits.** Each client (an IPv4 address, or an IPv6 /64) has a quota: by default 10 \
requests per second sustained, with bursts of up to 50. Every response carries the IETF quota \
fields (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy: \"api\";q=<burst>;w=<seconds \
to refill it>` and `RateLimit: \"api\";r=<requests left>;t=<seconds until the quota is full \
again>`, so a client can slow down before it is refused. Excess requests are answered `429` \
with code `rate_limited` and a `Retry-After` header: the whole seconds to wait, never 0. The \
quota fields are absent on the few answers given before a request is counted, to a request head \
the service could not read (`400`, `408`, `414`, `431`), so a client must not rely on them.";

/// Adds to every operation of `item` what the request conventions give it: the convention
/// headers on its own responses, the shared error responses, and an explicit
/// empty `security` where it declared none is needed; then its `HEAD` twin.
fn document_conventions(item: &mut PathItem, names_a_resource: bool) {
    for operation in operations_mut(item) {
        if let Some(parameters) = &mut operation.parameters {
            list::describe_parameters(parameters);
        }
        for response in operation.responses.responses.values_mut() {
            if let RefOr::T(response) = response {
                add_convention_headers(response);
            }
        }
        operation
            .responses
            .responses
            .extend(components::error_responses(names_a_resource, false));
        declare_keyless(operation);
    }
    document_head(item, names_a_resource);
}

/// utoipa writes `#[utoipa::path(security(()))]`, an endpoint that needs no key, as one empty
/// requirement (`security: [{}]`); OpenAPI's own spelling of "no security applies" is an
/// empty list, which linters and generators read as meant.
fn declare_keyless(operation: &mut Operation) {
    if let Some(security) = &mut operation.security {
        let empty = serde_json::json!({});
        if security
            .iter()
            .all(|requirement| serde_json::to_value(requirement).ok().as_ref() == Some(&empty))
        {
            security.clear();
        }
    }
}

fn add_convention_headers(response: &mut Response) {
    for name in components::CONVENTION_HEADERS {
        response
            .headers
            .insert(name.to_owned(), components::header_ref(name));
    }
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

/// The route machinery answers HEAD wherever it answers GET (`edge::routes::resource`), so
/// every GET gets its HEAD twin here, whether its annotation names HEAD or not: like the GET,
/// without a body, with its own `operationId` (ids are unique in a document).
fn document_head(item: &mut PathItem, names_a_resource: bool) {
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
    head.responses
        .responses
        .extend(components::error_responses(names_a_resource, true));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client generated with its defaults calls one absolute URL, with no variable to fill;
    /// a served document names the origin it is served for.
    #[test]
    fn the_server_is_one_absolute_url() {
        let document = serde_json::to_value(document()).unwrap();
        assert_eq!(
            document["servers"],
            serde_json::json!([{
                "url": "https://api.example.com/v1",
                "description": "partner-api, version 1",
            }])
        );
        let served = serde_json::to_value(for_origin(
            super::document(),
            "https://partners.example.test",
        ))
        .unwrap();
        assert_eq!(
            served["servers"][0]["url"],
            "https://partners.example.test/v1"
        );
    }
}
