//! The API's endpoints, one module each, and [`register`], the list of them. A handler is an
//! `async fn` named after its `operationId`, annotated with `#[utoipa::path]`, mounted by its
//! endpoint type through `http::routes::resource`, and reads its input only through
//! `http::extract::{Path, Query, Body}` with types of its own, what it shares through
//! `http::state::State` and what it knows of its request through `http::context`.
//! Registration gives it the request conventions, the 404/405 handling and its place in the
//! OpenAPI document; [`TAGS`] describes the groups the reference shows endpoints in.

use utoipa_actix_web::service_config::ServiceConfig;

use crate::http::deprecation::Deprecation;
use crate::http::state::AppState;

pub mod list;
pub mod ping;

/// Mounts every endpoint of the API with the state they share: the one function the server,
/// the tests and the OpenAPI generator all call. It goes through `utoipa_actix_web`'s
/// `.service(endpoint)`, so an endpoint without `#[utoipa::path]` does not compile.
pub fn register(config: &mut ServiceConfig, state: &AppState) {
    state.install(config);
    config.service(ping::PingEndpoint);
}

/// The deprecated operations, by `operationId` (PARTNERS.md, "Deprecation"): one row each,
/// from which every answer of the operation gets its `Deprecation`, `Link` and `Sunset`
/// headers and the document marks it `deprecated`. Nothing is deprecated yet. A row is added in
/// the release that announces it, with that release's date.
pub const DEPRECATIONS: &[Deprecation] = &[];

/// What the reference says of each tag an endpoint declares (`#[utoipa::path(tag = ...)]`).
/// The document lists the tags in use, in the order endpoints first use them; a tag in use
/// without its line here fails a test that names it.
pub const TAGS: &[(&str, &str)] = &[(
    "Utility",
    "Endpoints that help a partner's systems use the API.",
)];

#[cfg(test)]
mod tests {
    use actix_web::App;
    use utoipa_actix_web::AppExt;

    use super::register;
    use crate::http::routes::RouteTable;
    use crate::http::state::AppState;

    fn table() -> RouteTable {
        let (_, document) = App::new()
            .into_utoipa_app()
            .configure(|config| register(config, &AppState::default()))
            .split_for_parts();
        RouteTable::from_document(&document, super::DEPRECATIONS, "")
    }

    #[test]
    fn ping_answers_get_and_head() {
        let table = table();
        assert_eq!(table.allow_for("/v1/ping").unwrap(), "GET, HEAD");
    }

    #[test]
    fn near_misses_are_unknown_paths() {
        let table = table();
        for path in ["/", "/v1", "/v1/", "/v1/ping/", "/V1/PING", "/v1/pings"] {
            assert!(table.allow_for(path).is_none(), "{path}");
        }
    }
}
