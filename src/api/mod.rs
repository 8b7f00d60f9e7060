//! The API's endpoints, one module each, and [`register`], the list of them. A handler is an
//! `async fn` named after its `operationId`, annotated with `#[utoipa::path]`, mounted by its
//! endpoint type through `http::routes::resource`, and reads its input only through
//! `http::extract::Query` and `http::extract::Body` with types of its own. Registration gives it the
//! request conventions, the 404/405 handling and its place in the OpenAPI document.

use utoipa_actix_web::service_config::ServiceConfig;

pub mod ping;

/// Mounts every endpoint of the API: the one function the server, the tests and the OpenAPI
/// generator all call. It goes through `utoipa_actix_web`'s `.service(endpoint)`, so an
/// endpoint without `#[utoipa::path]` does not compile.
pub fn register(config: &mut ServiceConfig) {
    config.service(ping::PingEndpoint);
}

#[cfg(test)]
mod tests {
    use actix_web::App;
    use utoipa_actix_web::AppExt;

    use super::register;
    use crate::http::routes::RouteTable;

    fn table() -> RouteTable {
        let (_, document) = App::new()
            .into_utoipa_app()
            .configure(register)
            .split_for_parts();
        RouteTable::from_document(&document)
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
