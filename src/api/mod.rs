//! The API's endpoints, one module each, and what they have in common: [`ENDPOINTS`], the
//! list of them, with their tags and deprecations, and [`ApiContext`], what they share. A
//! handler is an `async fn` named after its `operationId`, annotated with `#[utoipa::path]`
//! and mounted by one `mount!` line in [`mount`]; it reads its input through
//! `edge::extract::{Path, Query, Body}` with types of its own, and its request and the
//! context through `edge::context::RequestContext<ApiContext>`. Mounting gives it the request
//! conventions, the 404/405 handling and its place in the OpenAPI document.
//!
//! The context is built once by `Application::build`, before the workers start, and read by
//! a handler as `context.app().<part>`: a part is a field, so a handler cannot name one that
//! does not exist, and the app factory always installs the one context, so nothing a handler
//! reads can be missing when a request arrives.

pub mod date;
pub mod id;
pub mod idempotency;
pub mod list;
pub mod money;
pub mod ping;
pub mod table;
pub mod text;
pub mod timestamp;
pub mod write;

use crate::database::Database;
use crate::edge::deprecation::Deprecation;
use crate::edge::mount::{Endpoints, Mount};

/// The API: the one set of endpoints the server, the tests and the OpenAPI generator all
/// mount (tests mount their own beside it, never instead).
pub const ENDPOINTS: Endpoints<ApiContext> = Endpoints {
    mount,
    tags: TAGS,
    deprecations: DEPRECATIONS,
};

/// What the API's endpoints share across requests and workers (a store, a client, a pool);
/// see the module documentation. A store is a field, built in [`ApiContext::new`] (a setting
/// it needs comes from `server::config` as an argument); what needs none is empty.
#[derive(Debug)]
#[non_exhaustive]
pub struct ApiContext {}

/// The one context there is, its stores in this process: [`ApiContext::new`] without a
/// database.
impl Default for ApiContext {
    fn default() -> Self {
        ApiContext::new(&Database::Memory)
    }
}

impl ApiContext {
    /// Builds what the endpoints share, its tables kept where `database` says
    /// (`Table::new("plan", database)`): called once, by `Application::build`.
    pub fn new(_database: &Database) -> ApiContext {
        ApiContext {}
    }
}

/// Mounts every endpoint of the API, one line each.
fn mount(mount: &mut Mount<'_, '_, ApiContext>) {
    mount!(mount, ping::ping);
}

/// The deprecated operations, by `operationId` (PARTNERS.md, "Deprecation"): one row each,
/// from which every answer of the operation gets its `Deprecation`, `Link` and `Sunset`
/// headers and the document marks it `deprecated`. Nothing is deprecated yet. A row is added in
/// the release that announces it, with that release's date.
const DEPRECATIONS: &[Deprecation] = &[];

/// What the reference says of each tag an endpoint declares (`#[utoipa::path(tag = ...)]`).
/// The document lists the tags in use, in the order endpoints first use them; a tag in use
/// without its line here fails a test that names it.
const TAGS: &[(&str, &str)] = &[(
    "Utility",
    "Endpoints that help a partner's systems use the API.",
)];

#[cfg(test)]
mod tests {
    use actix_web::App;
    use utoipa_actix_web::AppExt;

    use crate::edge::routes::RouteTable;

    fn table() -> RouteTable {
        let (_, document) = App::new()
            .into_utoipa_app()
            .configure(|config| super::ENDPOINTS.mount_on(config))
            .split_for_parts();
        RouteTable::from_document(&document, &[], "")
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
