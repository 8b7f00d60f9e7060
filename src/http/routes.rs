//! The route machinery every endpoint is mounted with, below the endpoints themselves (the
//! list of them is `api::register`). [`resource`] mounts an endpoint's handler at the path and
//! for the methods its `#[utoipa::path]` documents, so the two cannot disagree. [`RouteTable`]
//! is built from the document that registration produced, and the fallback service uses it to
//! tell a wrong method on a known path (405 with `Allow`) from a path that does not exist
//! (404), so every new endpoint gets both without code of its own.

use std::rc::Rc;

use actix_web::Resource;
use actix_web::dev::{ResourceDef, ServiceRequest, ServiceResponse};
use actix_web::guard::{Guard, GuardContext};
use actix_web::http::Method;
use actix_web::http::header::HeaderValue;
use utoipa::openapi::OpenApi;
use utoipa::openapi::path::{HttpMethod, PathItem};
use utoipa_actix_web::service_config::ServiceConfig;

use crate::errors::ApiError;

/// Version prefix of every endpoint; the OpenAPI document's server URL. Handlers carry their
/// full path (`/v1/...`) rather than sitting in a `/v1` scope: the scope cost a second routing
/// pass on every request (about 2,000 instructions, measured with callgrind).
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
/// answers from [`RouteTable`] instead: two allocations and 801 instructions on every request
/// (3.7% of the 21,933 an accepted request costs; BENCHMARKS.md, "Speed tricks re-measured").
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

/// Extra routes mounted next to the API's own; production mounts none. Tests use it to reach
/// the shared machinery (body parsing, panics, slow requests) through routes of their own.
pub type ExtraRoutes = fn(&mut ServiceConfig);

/// Every registered path pattern with the methods it answers.
#[derive(Debug, Default)]
pub struct RouteTable {
    routes: Vec<(ResourceDef, HeaderValue)>,
}

impl RouteTable {
    /// Reads the paths and methods from the document that route registration produced.
    pub fn from_document(document: &OpenApi) -> Self {
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
        RouteTable { routes }
    }

    /// Adds paths served outside the API (the documentation) that answer `allow`.
    pub fn with_paths(mut self, paths: &[&str], allow: &'static str) -> Self {
        let allow = HeaderValue::from_static(allow);
        self.routes.extend(
            paths
                .iter()
                .map(|path| (ResourceDef::new(*path), allow.clone())),
        );
        self
    }

    /// The `Allow` value for `path`, or `None` when no route has that path.
    pub fn allow_for(&self, path: &str) -> Option<&HeaderValue> {
        self.routes
            .iter()
            .find(|(pattern, _)| pattern.is_match(path))
            .map(|(_, allow)| allow)
    }

    /// The service that answers every request no route took: 405 when the path exists with
    /// other methods, 404 otherwise.
    pub fn into_fallback(
        self,
    ) -> impl Fn(ServiceRequest) -> std::future::Ready<Result<ServiceResponse, actix_web::Error>> + Clone
    {
        let table = Rc::new(self);
        move |request: ServiceRequest| {
            let error = match table.allow_for(request.path()) {
                Some(allow) => ApiError::method_not_allowed(request.method(), allow.clone()),
                None => ApiError::resource_missing(request.method(), request.path()),
            };
            std::future::ready(Ok(request.error_response(error)))
        }
    }
}

/// Methods of a path item, in the order RFC 9110 lists them; GET implies HEAD.
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
