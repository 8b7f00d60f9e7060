//! The route machinery every endpoint is mounted with (through `edge::mount`). [`resource`] is
//! an endpoint's resource at the path and for the methods its `#[utoipa::path]` documents, so
//! the two cannot disagree. [`RouteTable`]
//! is built from the document that registration produced; the request view finds a request's
//! route in it once, and the 405 (with `Allow`) or 404 of a request no route took, the rate
//! limit's policy and the metrics' route label all follow that one answer, so every new
//! endpoint gets them without code of its own.

use std::sync::Arc;

use actix_web::Resource;
use actix_web::dev::{ResourceDef, ServiceRequest, ServiceResponse};
use actix_web::guard::{Guard, GuardContext};
use actix_web::http::Method;
use actix_web::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use utoipa::openapi::OpenApi;
use utoipa::openapi::path::{HttpMethod, Operation, PathItem};

use super::deprecation::{Deprecation, DeprecationHeaders};
use crate::auth::{Caller, SECURITY_SCHEME};
use crate::errors::ApiError;

/// RFC 9745.
static DEPRECATION: HeaderName = HeaderName::from_static("deprecation");
/// RFC 8594.
static SUNSET: HeaderName = HeaderName::from_static("sunset");

/// Version prefix of every endpoint; the OpenAPI document's server URL. Handlers carry their
/// full path (`/v1/...`) rather than sitting in a `/v1` scope, which would cost a second
/// routing pass on every request (BENCHMARKS.md, "Speed tricks re-measured").
/// `openapi::document` checks that every path starts with it.
pub const API_PREFIX: &str = "/v1";

/// The resource for endpoint `E`: its path and methods (HEAD wherever GET) as its
/// `#[utoipa::path]` documents them.
pub fn resource<E: utoipa::Path>() -> Resource {
    let mut methods: Vec<Method> = E::methods().iter().map(actix_method).collect();
    if methods.contains(&Method::GET) && !methods.contains(&Method::HEAD) {
        methods.push(Method::HEAD);
    }
    Resource::new(E::path()).guard(MethodsGuard(methods))
}

/// Admits the methods an endpoint answers. actix-web's own method guards also record every
/// method they check in the request's extensions, for a 405 of actix-web's that this service
/// answers from [`RouteTable`] instead: two allocations on every request (BENCHMARKS.md,
/// "Speed tricks re-measured").
struct MethodsGuard(Vec<Method>);

impl Guard for MethodsGuard {
    fn check(&self, context: &GuardContext<'_>) -> bool {
        self.0.contains(&context.head().method)
    }
}

fn actix_method(method: &HttpMethod) -> Method {
    match method {
        HttpMethod::Get => Method::GET,
        HttpMethod::Post => Method::POST,
        HttpMethod::Put => Method::PUT,
        HttpMethod::Delete => Method::DELETE,
        HttpMethod::Options => Method::OPTIONS,
        HttpMethod::Head => Method::HEAD,
        HttpMethod::Patch => Method::PATCH,
        HttpMethod::Trace => Method::TRACE,
    }
}

/// Every registered path pattern with the methods it answers: the one table that says which
/// route a path is (the request view, the 405's `Allow`, the metrics' route label).
#[derive(Debug, Default)]
pub struct RouteTable {
    routes: Vec<(ResourceDef, HeaderValue)>,
    /// Each route's template, shared with the request contexts that name it.
    templates: Vec<Arc<str>>,
    /// The deprecated operations, by route and method: none at all, usually.
    deprecated: Vec<(RouteIndex, Method, Arc<DeprecationHeaders>)>,
    /// The operations that need a key or are audited, by route and method.
    guarded: Vec<(RouteIndex, Method, Arc<Guarded>)>,
}

/// What an operation's annotation asks the edge to enforce: the scope a key must have, and
/// whether its requests are audited (`x-member-data`).
#[derive(Debug)]
pub struct Guarded {
    /// The `operationId`, as the audit record names it.
    pub operation_id: Arc<str>,
    /// The scope its key needs; `None` when it needs no key.
    pub scope: Option<Box<str>>,
    /// Whether it returns or changes member data, and so is audited.
    pub member_data: bool,
}

impl Guarded {
    /// What `operation` declares: `security(("partner_key" = ["<scope>"]))` and
    /// `extensions(("x-member-data" = json!(true)))`. An operation that needs a key is member
    /// data, audited, unless it says otherwise with a reason ([`is_member_data`]). Panics (at
    /// start) on a security requirement the edge cannot enforce: another scheme, or other than
    /// one scope; on member data without a key; on `x-member-data: false` without its reason.
    fn of(operation: &Operation) -> Option<Guarded> {
        let described = serde_json::to_value(operation).expect("an operation serializes");
        let id = operation.operation_id.as_deref().unwrap_or_default();
        let mut scope = None;
        for requirement in described["security"].as_array().into_iter().flatten() {
            let requirement = requirement.as_object().expect("a requirement is an object");
            for (scheme, scopes) in requirement {
                let scopes = scopes.as_array().map(Vec::as_slice).unwrap_or_default();
                match (scheme.as_str(), scopes) {
                    (SECURITY_SCHEME, [serde_json::Value::String(one)]) if scope.is_none() => {
                        scope = Some(Box::from(one.as_str()));
                    }
                    _ => panic!(
                        "{id}: security must be ((\"{SECURITY_SCHEME}\" = [\"<one scope>\"])) \
                         or (()), not {requirement:?}"
                    ),
                }
            }
        }
        let member_data = is_member_data(&described, scope.is_some())
            .unwrap_or_else(|error| panic!("{id}: {error}"));
        // Member data without a key would be open to anyone: the lint refuses it in the
        // document, and the edge refuses to start with it.
        assert!(
            !member_data || scope.is_some(),
            "{id} is marked x-member-data and needs no key: add \
             security((\"{SECURITY_SCHEME}\" = [\"<things>:read\"]))"
        );
        (scope.is_some() || member_data).then(|| Guarded {
            operation_id: Arc::from(id),
            scope,
            member_data,
        })
    }

    /// The same requirement for the `HEAD` twin of a GET, under the twin's `operationId`.
    fn for_head(&self) -> Guarded {
        Guarded {
            operation_id: Arc::from(format!("{}_head", self.operation_id)),
            scope: self.scope.clone(),
            member_data: self.member_data,
        }
    }
}

/// Whether an operation (its JSON, `keyed` when it needs a key) returns or changes member data:
/// `x-member-data: true`; or, needing a key, unless it says `x-member-data: false` with
/// `x-member-data-reason`, why not (a key's own settings, say). The error says what is wrong
/// with the annotation. The document marks every such operation (`openapi`), so that the
/// reference says what the edge audits.
pub fn is_member_data(operation: &serde_json::Value, keyed: bool) -> Result<bool, String> {
    let reason = operation
        .get("x-member-data-reason")
        .and_then(serde_json::Value::as_str)
        .is_some_and(|reason| !reason.trim().is_empty());
    match operation.get("x-member-data") {
        Some(serde_json::Value::Bool(true)) => Ok(true),
        Some(serde_json::Value::Bool(false)) if !keyed => Ok(false),
        Some(serde_json::Value::Bool(false)) if reason => Ok(false),
        Some(serde_json::Value::Bool(false)) => Err(
            "needs a key and says x-member-data false without saying why: add \
             (\"x-member-data-reason\" = json!(\"<why it reads or changes no member's data>\"))"
                .to_owned(),
        ),
        None => Ok(keyed),
        Some(other) => Err(format!("x-member-data must be true or false, not {other}")),
    }
}

/// A route of a [`RouteTable`], by its place in the table (the order the paths were added).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteIndex(u16);

impl RouteIndex {
    pub fn get(self) -> usize {
        usize::from(self.0)
    }
}

impl RouteTable {
    /// Reads the paths and methods from the document that route registration produced, and
    /// which of its operations `deprecations` names (a GET's `HEAD` goes with it), their
    /// `Link` into `public_url` (empty: relative to the request's origin).
    pub fn from_document(
        document: &OpenApi,
        deprecations: &[Deprecation],
        public_url: &str,
    ) -> Self {
        let routes = document
            .paths
            .paths
            .iter()
            .map(|(path, item)| {
                let allow = allowed_methods(item).join(", ");
                let allow = HeaderValue::from_str(&allow).expect("method names are tokens");
                (ResourceDef::new(path.as_str()), allow)
            })
            .collect();
        let mut table = RouteTable::with_routes(routes);
        for (index, item) in document.paths.paths.values().enumerate() {
            let route = RouteIndex(u16::try_from(index).expect("a route index fits in 16 bits"));
            for (method, operation) in operations_by_method(item) {
                if let Some(guarded) = Guarded::of(operation) {
                    if method == Method::GET && item.head.is_none() {
                        let head = Arc::new(guarded.for_head());
                        table.guarded.push((route, Method::HEAD, head));
                    }
                    table
                        .guarded
                        .push((route, method.clone(), Arc::new(guarded)));
                }
            }
            for (method, operation) in operations_by_method(item) {
                let id = operation.operation_id.as_deref().unwrap_or_default();
                let Some(row) = deprecations.iter().find(|row| row.names(id)) else {
                    continue;
                };
                let headers = Arc::new(row.headers(public_url).unwrap_or_else(|error| {
                    panic!("a malformed row of the deprecations: {error}")
                }));
                if method == Method::GET && item.head.is_none() {
                    table
                        .deprecated
                        .push((route, Method::HEAD, Arc::clone(&headers)));
                }
                table.deprecated.push((route, method, headers));
            }
        }
        table
    }

    /// Adds the deprecation headers of the operation a request for `method` on `route` is
    /// for (as the request view decided them), when it is deprecated: whatever the answer (a
    /// refusal, an error), it answers a request for that operation.
    pub fn add_deprecation_headers(
        &self,
        route: Option<RouteIndex>,
        method: &Method,
        headers: &mut HeaderMap,
    ) {
        if self.deprecated.is_empty() {
            return;
        }
        let Some(found) = route.and_then(|route| self.deprecation(route, method)) else {
            return;
        };
        headers.insert(DEPRECATION.clone(), found.deprecation.clone());
        headers.append(header::LINK, found.link.clone());
        if let Some(sunset) = &found.sunset {
            headers.insert(SUNSET.clone(), sunset.clone());
        }
    }

    /// What the operation a request for `method` on `route` is for asks the edge to enforce,
    /// when it asks anything (most operations ask nothing: no search then).
    pub fn guarded(&self, route: Option<RouteIndex>, method: &Method) -> Option<&Arc<Guarded>> {
        if self.guarded.is_empty() {
            return None;
        }
        let route = route?;
        self.guarded
            .iter()
            .find(|(guarded, guarded_method, _)| *guarded == route && guarded_method == method)
            .map(|(_, _, guarded)| guarded)
    }

    /// The 401 or 403 of a request for an operation that needs a key its `caller` does not
    /// hold; `None` when it may go on.
    pub fn authorize(
        &self,
        route: Option<RouteIndex>,
        method: &Method,
        caller: &Caller,
    ) -> Option<ApiError> {
        let scope = self.guarded(route, method)?.scope.as_deref()?;
        caller.refusal_for(scope)
    }

    /// The deprecation headers of `method` on `route`, when that operation is deprecated.
    pub fn deprecation(&self, route: RouteIndex, method: &Method) -> Option<&DeprecationHeaders> {
        self.deprecated
            .iter()
            .find(|(deprecated, deprecated_method, _)| {
                *deprecated == route && deprecated_method == method
            })
            .map(|(_, _, headers)| &**headers)
    }

    fn with_routes(routes: Vec<(ResourceDef, HeaderValue)>) -> Self {
        refuse_overlaps(&routes);
        let templates = routes
            .iter()
            .map(|(pattern, _)| {
                Arc::from(
                    pattern
                        .pattern()
                        .expect("every route is added with a single pattern"),
                )
            })
            .collect();
        RouteTable {
            routes,
            templates,
            deprecated: Vec::new(),
            guarded: Vec::new(),
        }
    }

    /// Adds paths served outside the API (the documentation) that answer `allow`.
    pub fn with_paths(self, paths: &[&str], allow: &'static str) -> Self {
        let allow = HeaderValue::from_static(allow);
        let deprecated = self.deprecated;
        let guarded = self.guarded;
        let mut routes = self.routes;
        routes.extend(
            paths
                .iter()
                .map(|path| (ResourceDef::new(*path), allow.clone())),
        );
        assert!(
            routes.len() <= usize::from(u16::MAX),
            "a route index fits in 16 bits"
        );
        RouteTable {
            deprecated,
            guarded,
            ..RouteTable::with_routes(routes)
        }
    }

    /// The route whose pattern matches `path` (as the router decodes it), whatever the method.
    pub fn find(&self, path: &str) -> Option<RouteIndex> {
        self.routes
            .iter()
            .position(|(pattern, _)| pattern.is_match(path))
            .map(|index| RouteIndex(index as u16))
    }

    /// The methods `route` answers, as an `Allow` value.
    pub fn allow(&self, route: RouteIndex) -> &HeaderValue {
        &self.routes[route.get()].1
    }

    /// Whether `route` answers `method` (one of its `Allow` value's names).
    pub fn serves(&self, route: RouteIndex, method: &Method) -> bool {
        self.allow(route)
            .as_bytes()
            .split(|byte| *byte == b',')
            .any(|name| name.trim_ascii() == method.as_str().as_bytes())
    }

    /// The `Allow` value for `path`, or `None` when no route has that path.
    pub fn allow_for(&self, path: &str) -> Option<&HeaderValue> {
        self.find(path).map(|route| self.allow(route))
    }

    /// Every route's pattern (`/v1/things/{thing}`), in index order.
    pub fn templates(&self) -> impl Iterator<Item = &str> {
        self.templates.iter().map(|template| &**template)
    }

    /// The pattern of `route`, shared.
    pub fn template(&self, route: RouteIndex) -> &Arc<str> {
        &self.templates[route.get()]
    }

    /// The ids `path` carries in the parameters of `route` (`th_0009` of `/v1/things/th_0009`
    /// for `/v1/things/{thing}`): each parameter shaped like an id, two lower-case letters,
    /// `_`, and 1 to 64 letters and digits. What an audit record names before, or without, a
    /// handler (a request refused for its key, its quota or its input).
    pub fn path_ids(&self, route: RouteIndex, path: &str) -> Vec<String> {
        let Some((definition, _)) = self.routes.get(route.get()) else {
            return Vec::new();
        };
        let mut matched = actix_web::dev::Path::new(path);
        if !definition.capture_match_info(&mut matched) {
            return Vec::new();
        }
        matched
            .iter()
            .map(|(_, value)| value)
            .filter(|value| is_id_shaped(value))
            .map(str::to_owned)
            .collect()
    }
}

/// Two lower-case letters, `_`, and 1 to 64 letters and digits: the contract's id shape.
fn is_id_shaped(value: &str) -> bool {
    let bytes = value.as_bytes();
    bytes.len() >= 4
        && bytes.len() <= 67
        && bytes[..2].iter().all(u8::is_ascii_lowercase)
        && bytes[2] == b'_'
        && bytes[3..].iter().all(u8::is_ascii_alphanumeric)
}

/// Panics (at start, where the app factory builds the table) when two templates can match one
/// path (`/v1/things/{thing}` and `/v1/things/search`): the router takes the first resource
/// whose path and method fit, the table the first path, so a request for the second with a
/// method only the first answers would be labelled, limited and answered `405` as the first.
/// Paths are told apart by a literal segment or their number of segments instead.
fn refuse_overlaps(routes: &[(ResourceDef, HeaderValue)]) {
    // A path the template matches: each `{parameter}` filled with a value no literal segment
    // of this service uses.
    let sample = |pattern: &ResourceDef| {
        let template = pattern.pattern().unwrap_or_default();
        let mut path = String::new();
        let mut in_parameter = false;
        for character in template.chars() {
            match character {
                '{' => {
                    in_parameter = true;
                    path.push_str("x0");
                }
                '}' => in_parameter = false,
                _ if in_parameter => {}
                _ => path.push(character),
            }
        }
        path
    };
    for (index, (first, _)) in routes.iter().enumerate() {
        for (second, _) in &routes[index + 1..] {
            assert!(
                !first.is_match(&sample(second)) && !second.is_match(&sample(first)),
                "the routes {:?} and {:?} can match the same path",
                first.pattern(),
                second.pattern()
            );
        }
    }
}

/// The service behind every request no route took. It does not decide between 404 and 405
/// itself: it answers [`NoRoute`], and the request-conventions middleware turns that into the
/// 404 or the 405 with `Allow` from the request view, where the route was already decided.
pub fn no_route(
    request: ServiceRequest,
) -> std::future::Ready<Result<ServiceResponse, actix_web::Error>> {
    std::future::ready(Ok(request.error_response(NoRoute)))
}

/// The marker error of [`no_route`]; the middleware replaces it before a client sees it.
#[derive(Debug)]
pub struct NoRoute;

impl std::fmt::Display for NoRoute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("no route answers this method and path")
    }
}

impl actix_web::ResponseError for NoRoute {
    fn status_code(&self) -> actix_web::http::StatusCode {
        actix_web::http::StatusCode::NOT_FOUND
    }
}

/// Methods of a path item, in the order RFC 9110 lists them; GET implies HEAD.
/// The operations of `item`, with their methods.
fn operations_by_method(item: &PathItem) -> impl Iterator<Item = (Method, &Operation)> {
    [
        (Method::GET, &item.get),
        (Method::HEAD, &item.head),
        (Method::POST, &item.post),
        (Method::PUT, &item.put),
        (Method::DELETE, &item.delete),
        (Method::OPTIONS, &item.options),
        (Method::TRACE, &item.trace),
        (Method::PATCH, &item.patch),
    ]
    .into_iter()
    .filter_map(|(method, operation)| Some((method, operation.as_ref()?)))
}

pub(crate) fn allowed_methods(item: &PathItem) -> Vec<&'static str> {
    let has_get = item.get.is_some();
    [
        ("GET", has_get),
        ("HEAD", has_get || item.head.is_some()),
        ("POST", item.post.is_some()),
        ("PUT", item.put.is_some()),
        ("DELETE", item.delete.is_some()),
        ("OPTIONS", item.options.is_some()),
        ("TRACE", item.trace.is_some()),
        ("PATCH", item.patch.is_some()),
    ]
    .into_iter()
    .filter_map(|(name, present)| present.then_some(name))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keyed_operation_is_member_data_unless_it_says_why_not() {
        use serde_json::json;
        let cases = [
            (json!({}), true, Ok(true)),
            (json!({}), false, Ok(false)),
            (json!({"x-member-data": true}), true, Ok(true)),
            (json!({"x-member-data": false}), false, Ok(false)),
            (
                json!({"x-member-data": false, "x-member-data-reason": "a key's own quota"}),
                true,
                Ok(false),
            ),
        ];
        for (operation, keyed, expected) in cases {
            assert_eq!(is_member_data(&operation, keyed), expected, "{operation}");
        }
        for bad in [
            json!({"x-member-data": false}),
            json!({"x-member-data": false, "x-member-data-reason": " "}),
            json!({"x-member-data": "yes"}),
        ] {
            assert!(is_member_data(&bad, true).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_ids_a_path_carries_are_read_by_its_route() {
        let table = RouteTable::default().with_paths(
            &[
                "/v1/things",
                "/v1/things/{thing}",
                "/v1/things/{thing}/parts/{part}",
            ],
            "GET",
        );
        let route = |path: &str| table.find(path).unwrap();
        assert!(table.path_ids(route("/v1/things"), "/v1/things").is_empty());
        assert_eq!(
            table.path_ids(route("/v1/things/th_0009"), "/v1/things/th_0009"),
            ["th_0009"]
        );
        assert_eq!(
            table.path_ids(
                route("/v1/things/th_1/parts/pa_2"),
                "/v1/things/th_1/parts/pa_2"
            ),
            ["th_1", "pa_2"]
        );
        // A value not shaped like an id is nobody's.
        for path in ["/v1/things/0009", "/v1/things/TH_1", "/v1/things/th_a-b"] {
            assert!(table.path_ids(route(path), path).is_empty(), "{path}");
        }
    }

    #[test]
    #[should_panic(expected = "can match the same path")]
    fn templates_that_can_match_one_path_are_refused() {
        let _ =
            RouteTable::default().with_paths(&["/v1/things/{thing}", "/v1/things/search"], "GET");
    }

    #[test]
    fn templates_told_apart_by_a_literal_are_kept() {
        let table = RouteTable::default().with_paths(
            &[
                "/v1/things",
                "/v1/things/{thing}",
                "/v1/things/{thing}/cancel",
            ],
            "GET",
        );
        assert_eq!(table.templates().count(), 3);
    }

    #[test]
    fn a_route_serves_exactly_the_methods_of_its_allow_value() {
        let table = RouteTable::default().with_paths(&["/docs/errors"], "GET, HEAD");
        let route = table.find("/docs/errors").unwrap();
        for (method, served) in [
            (Method::GET, true),
            (Method::HEAD, true),
            (Method::POST, false),
            (Method::from_bytes(b"GE").unwrap(), false),
            (Method::from_bytes(b"HEADX").unwrap(), false),
        ] {
            assert_eq!(table.serves(route, &method), served, "{method}");
        }
    }
}
