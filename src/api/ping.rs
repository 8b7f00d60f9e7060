//! `GET /v1/ping`: the connectivity check. It needs no key, reads no data and answers at once,
//! so monitoring can call it as often as its rate limit allows.

use std::sync::LazyLock;

use actix_web::HttpResponse;
use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::web::Bytes;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::http::extract::{Body, Query};
use crate::http::routes;

/// The ping object.
#[derive(Debug, Serialize, ToSchema)]
pub struct Ping {
    /// Kind of object: always `ping`.
    pub object: PingObject,
    /// Always `true`.
    pub pong: bool,
}

/// The `object` value of a ping object.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PingObject {
    Ping,
}

/// Ping takes no query parameters; any parameter is refused as unknown.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PingQuery {}

/// Ping takes no body fields; an empty body or `{}` is accepted, any field is refused.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PingBody {}

/// Check that the API is reachable
///
/// Answers at once with a ping object. It needs no key (`security: []`): it reads no data and
/// says only that the API is reachable, so health checks and uptime monitors can call it
/// without holding a key. `HEAD` answers the same without a body.
#[utoipa::path(
    get,
    path = "/v1/ping",
    impl_for = PingEndpoint,
    tag = "Utility",
    security(()),
    responses((
        status = 200,
        description = "The API is reachable.",
        body = Ping,
        example = json!({"object": "ping", "pong": true}),
    )),
)]
pub async fn ping(_query: Query<PingQuery>, _body: Body<PingBody>) -> HttpResponse {
    let mut response = HttpResponse::with_body(StatusCode::OK, PING_BODY.clone());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response.map_into_boxed_body()
}

/// The ping endpoint as [`super::register`] mounts it: path and methods from its
/// `#[utoipa::path]`.
pub struct PingEndpoint;

impl HttpServiceFactory for PingEndpoint {
    fn register(self, config: &mut AppService) {
        routes::resource::<PingEndpoint>().to(ping).register(config);
    }
}

/// The answer never changes, so it is serialized once (monitoring calls this all day): 856
/// instructions per request fewer than `HttpResponse::Ok().json(..)` (3.9% of the 22,030 an
/// accepted request costs; BENCHMARKS.md, "Speed tricks re-measured").
static PING_BODY: LazyLock<Bytes> = LazyLock::new(|| {
    let answer = Ping {
        object: PingObject::Ping,
        pong: true,
    };
    serde_json::to_vec(&answer)
        .expect("a ping serializes")
        .into()
});
