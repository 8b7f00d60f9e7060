//! The OpenAPI document. Handlers and types carry `#[utoipa::path]` and `ToSchema`
//! annotations; [`document`] collects them through the same `api::ENDPOINTS` the server
//! uses and adds what the request conventions give every operation, so the document cannot
//! describe routes the server does not have: the pinned `info`, the `/v1` server, the error
//! responses (from the error catalogue, with their headers and examples), the headers every
//! response carries, the HEAD twin of every GET, each request body's example
//! ([`body_examples`]) and each operation's code samples (`x-codeSamples`, [`code_samples`]). `openapi/v1.yaml` is exactly
//! [`to_yaml`]'s output; a test fails when the two differ. [`oas30`] derives the 3.0.3
//! rendition, `openapi/v1.oas30.yaml`, for generators that read 3.0 only.

mod body_examples;
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
use crate::auth::SECURITY_SCHEME;
use crate::edge::deprecation::Deprecation;
use crate::edge::mount::Endpoints;
use crate::edge::routes::API_PREFIX;
use crate::errors::{ErrorCode, ErrorEnvelope, code_schema};
use utoipa::openapi::Required;
use utoipa::openapi::path::{Parameter, ParameterIn};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityRequirement, SecurityScheme};

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

/// The codes `document` says its operations can answer (its `ErrorCode` schema lists them),
/// in the catalogue's order: what the error pages describe.
pub fn codes_in_use(document: &OpenApi) -> Vec<ErrorCode> {
    let schema = document
        .components
        .as_ref()
        .and_then(|components| components.schemas.get(ErrorCode::name().as_ref()))
        .map(|schema| serde_json::to_value(schema).expect("a schema serializes"))
        .unwrap_or_default();
    ErrorCode::ALL
        .into_iter()
        .filter(|code| {
            schema["examples"]
                .as_array()
                .is_some_and(|listed| listed.iter().any(|name| name == code.as_str()))
        })
        .collect()
}

/// The document as YAML: the content of `openapi/v1.yaml` (dates and YAML 1.1's booleans
/// quoted, [`yaml`]).
pub fn to_yaml(document: &OpenApi) -> String {
    yaml::quoted_for_yaml11(
        &yaml_serde::to_string(&canonical(document)).expect("the document serializes"),
    )
}

/// The document as pretty-printed JSON, with a final newline.
pub fn to_json(document: &OpenApi) -> String {
    let mut json =
        serde_json::to_string_pretty(&canonical(document)).expect("the document serializes");
    json.push('\n');
    json
}

/// The document as a JSON value whose every object lists its extensions (`x-...`, which utoipa
/// keeps in a hash map, in an order that changes from one process to the next) after its other
/// fields, in one order: by name, the code samples last. So the same code writes the same
/// document, byte for byte, every time.
pub(crate) fn canonical(document: &OpenApi) -> serde_json::Value {
    let mut value = serde_json::to_value(document).expect("the document serializes");
    order_extensions(&mut value);
    value
}

fn order_extensions(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            if map.keys().any(|key| key.starts_with("x-")) {
                let mut extensions: Vec<(String, serde_json::Value)> = Vec::new();
                for key in map
                    .keys()
                    .filter(|key| key.starts_with("x-"))
                    .cloned()
                    .collect::<Vec<_>>()
                {
                    let value = map.shift_remove(&key).expect("listed just now");
                    extensions.push((key, value));
                }
                extensions.sort_by(|(a, _), (b, _)| {
                    (a == "x-codeSamples", a.as_str()).cmp(&(b == "x-codeSamples", b.as_str()))
                });
                map.extend(extensions);
            }
            // Examples, defaults and enumerations are data, whatever their keys.
            map.iter_mut()
                .filter(|(key, _)| {
                    !matches!(
                        key.as_str(),
                        "example" | "examples" | "default" | "enum" | "const"
                    )
                })
                .for_each(|(_, value)| order_extensions(value));
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(order_extensions),
        _ => {}
    }
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
    let mut components = std::mem::take(components);

    // Any unknown path answers `resource_missing`, whatever the operations.
    let mut codes_in_use = vec![ErrorCode::ResourceMissing];
    let registered = std::mem::take(&mut api.paths.paths);
    for (path, mut item) in registered {
        let relative = path
            .strip_prefix(API_PREFIX)
            .expect("every endpoint is registered under the version prefix");
        for operation in operations_mut(&mut item) {
            state_required_scope(operation);
        }
        let codes = document_conventions(&mut item, relative.contains('{'), &mut components);
        codes_in_use.extend(codes);
        deprecation::document(&mut item, deprecations);
        api.paths.paths.insert(relative.to_owned(), item);
    }
    components
        .schemas
        .insert(ErrorCode::name().into_owned(), code_schema(&codes_in_use));
    if codes_in_use.contains(&ErrorCode::KeyMissing) {
        components
            .security_schemes
            .insert(SECURITY_SCHEME.to_owned(), RefOr::T(partner_key_scheme()));
    }
    api.components = Some(components);
    if deprecations.is_empty() {
        // The headers only deprecated operations carry are published with the first.
    } else if let Some(components) = &mut api.components {
        deprecation::add_headers(components);
    }
    drop_unused_responses(&mut api);
    body_examples::add_to(&mut api);
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
/// `origin` in its server's URL, in every code sample and in the `doc_url` of every error
/// example, so that a client generated from the served document, or a sample copied from it,
/// calls the right host without being told, and an example names the page it will.
pub fn for_origin(mut document: OpenApi, origin: &str) -> OpenApi {
    code_samples::add_to(&mut document, &format!("{origin}{API_PREFIX}"));
    if let Some(components) = &mut document.components {
        components::name_origin_in_error_examples(components, origin);
    }
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

/// An operation's key requirement as the document states it: `partner_key` with no scopes
/// (OpenAPI 3.0 allows scopes only for OAuth 2 and OpenID Connect schemes, and 3.1's "roles"
/// are read by no generator), the scope its annotation names (which the edge enforces, from the
/// annotation itself) in `x-required-scope`, and a sentence at the end of its description
/// saying it, for partners reading the reference.
fn state_required_scope(operation: &mut Operation) {
    let Some(security) = &mut operation.security else {
        return;
    };
    let mut required = None;
    for requirement in security.iter_mut() {
        let value = serde_json::to_value(&*requirement).expect("a requirement serializes");
        if let Some(scopes) = value
            .get(SECURITY_SCHEME)
            .and_then(|scopes| scopes.as_array())
        {
            required = scopes
                .first()
                .and_then(|scope| scope.as_str())
                .map(str::to_owned);
            *requirement = SecurityRequirement::new(SECURITY_SCHEME, Vec::<String>::new());
        }
    }
    let Some(scope) = required else {
        return;
    };
    let sentence =
        format!("Needs a partner key with the scope `{scope}` (`Authorization: Bearer <key>`).");
    operation.description = Some(match operation.description.take() {
        Some(description) => format!("{description}\n\n{sentence}"),
        None => sentence,
    });
    operation
        .extensions
        .get_or_insert_with(Default::default)
        .insert("x-required-scope".to_owned(), serde_json::json!(scope));
}

/// The partner key, as the document's security scheme: a bearer token.
fn partner_key_scheme() -> SecurityScheme {
    let mut http = Http::new(HttpAuthScheme::Bearer);
    http.bearer_format =
        Some("pak_ (pak_test_ for a test key) and 38 letters and digits".to_owned());
    http.description = Some(
        "A partner key, sent as `Authorization: Bearer <key>`: a live key, issued after partner \
         terms and a data processing agreement are signed, or a test key (`pak_test_...`), \
         which reaches only test data and may be issued before. Each operation that needs one \
         names the scope it needs; the guide's \"Keys\" says how keys are issued, rotated and \
         revoked."
            .to_owned(),
    );
    SecurityScheme::Http(http)
}

/// The codes `operation` may answer: the conventions' (every operation's), `resource_missing`
/// where its path names a thing, `parameter_missing` where it takes a body or a required query
/// parameter, a refused key's where it needs a key, a repeated `Idempotency-Key`'s where it
/// takes one, `service_unavailable` where it is member data, and those it declares itself, `extensions(("x-error-codes" = json!([...])))`,
/// which the document keeps, saying which codes are the operation's own.
fn operation_codes(operation: &Operation, names_a_resource: bool) -> Vec<ErrorCode> {
    let mut codes = components::CONVENTION_CODES.to_vec();
    if names_a_resource {
        codes.push(ErrorCode::ResourceMissing);
    }
    let parameters: Vec<&Parameter> = operation
        .parameters
        .iter()
        .flatten()
        .filter_map(|parameter| match parameter {
            RefOr::T(parameter) => Some(parameter),
            RefOr::Ref(_) => None,
        })
        .collect();
    let required_query = parameters.iter().any(|parameter| {
        parameter.parameter_in == ParameterIn::Query && matches!(parameter.required, Required::True)
    });
    if operation.request_body.is_some() || required_query {
        codes.push(ErrorCode::ParameterMissing);
    }
    if parameters.iter().any(|parameter| {
        parameter.parameter_in == ParameterIn::Header
            && parameter.name.eq_ignore_ascii_case("Idempotency-Key")
    }) {
        codes.extend(components::IDEMPOTENCY_CODES);
    }
    if needs_key(operation) {
        codes.extend(components::KEY_CODES);
    }
    // Member data is refused whole when its store or its audit trail is out of reach.
    let member_data = serde_json::to_value(&operation.extensions)
        .ok()
        .and_then(|extensions| {
            crate::edge::routes::is_member_data(&extensions, needs_key(operation)).ok()
        })
        .unwrap_or(false);
    if member_data {
        codes.push(ErrorCode::ServiceUnavailable);
    }
    let id = operation.operation_id.clone().unwrap_or_default();
    let declared = operation
        .extensions
        .as_ref()
        .and_then(|extensions| extensions.get("x-error-codes"));
    for name in declared
        .and_then(|names| names.as_array())
        .into_iter()
        .flatten()
    {
        let code = ErrorCode::ALL
            .into_iter()
            .find(|code| Some(code.as_str()) == name.as_str())
            .unwrap_or_else(|| panic!("{id}: x-error-codes names {name}, no catalogue code"));
        codes.push(code);
    }
    codes.sort_by_key(|code| ErrorCode::ALL.iter().position(|listed| listed == code));
    codes.dedup();
    codes
}

/// Adds to every operation of `item` what the request conventions give it: the convention
/// headers on its own responses, the error responses of the codes it may answer
/// ([`operation_codes`]), and an explicit empty `security` where it declared none is needed;
/// then its `HEAD` twin. The codes its operations may answer, together.
fn document_conventions(
    item: &mut PathItem,
    names_a_resource: bool,
    components: &mut Components,
) -> Vec<ErrorCode> {
    let mut all_codes = Vec::new();
    for operation in operations_mut(item) {
        let codes = operation_codes(operation, names_a_resource);
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
            .extend(components::error_responses(&codes, false, components));
        declare_keyless(operation);
        mark_member_data(operation);
        all_codes.extend(codes);
    }
    let get_codes = match &item.get {
        Some(get) => operation_codes(get, names_a_resource),
        None => Vec::new(),
    };
    document_head(item, &get_codes, components);
    all_codes
}

/// An operation that needs a key is member data, and audited, unless it says otherwise with a
/// reason (`edge::routes::is_member_data`): the document says so where the annotation left it
/// out, so that the reference marks what the edge audits.
fn mark_member_data(operation: &mut Operation) {
    let needs_key = needs_key(operation);
    let marked = operation
        .extensions
        .as_ref()
        .is_some_and(|extensions| extensions.contains_key("x-member-data"));
    if needs_key && !marked {
        operation
            .extensions
            .get_or_insert_with(Default::default)
            .insert("x-member-data".to_owned(), serde_json::Value::Bool(true));
    }
}

/// Whether `operation` needs the partner key.
fn needs_key(operation: &Operation) -> bool {
    operation.security.iter().flatten().any(|requirement| {
        serde_json::to_value(requirement)
            .ok()
            .is_some_and(|value| value.get(SECURITY_SCHEME).is_some())
    })
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
fn document_head(item: &mut PathItem, codes: &[ErrorCode], components: &mut Components) {
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
        .extend(components::error_responses(codes, true, components));
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
