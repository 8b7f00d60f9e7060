//! `GET /v1/ping`: the connectivity check. It needs no key, reads no data and answers at once,
//! so monitoring can call it as often as its rate limit allows.

use std::sync::LazyLock;

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::web::Bytes;
use serde::Serialize;
use utoipa::ToSchema;

use crate::edge::extract::{Body, NoBody, NoQuery, Query};

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

/// Check that the API is reachable
///
/// Answers at once with a ping object. It needs no key (`security: []`): it reads no data and
/// says only that the API is reachable, so health checks and uptime monitors can call it
/// without holding a key. `HEAD` answers the same without a body.
#[utoipa::path(
    get,
    path = "/v1/ping",
    tag = "Utility",
    security(()),
    responses((
        status = 200,
        description = "The API is reachable.",
        body = Ping,
        example = json!({"object": "ping", "pong": true}),
    )),
)]
pub async fn ping(_query: Query<NoQuery>, _body: Body<NoBody>) -> HttpResponse {
    let mut response = HttpResponse::with_body(StatusCode::OK, PING_BODY.clone());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response.map_into_boxed_body()
}

/// The answer never changes, so it is serialized once: monitoring calls this all day
/// (BENCHMARKS.md, "Speed tricks re-measured").
static PING_BODY: LazyLock<Bytes> = LazyLock::new(|| {
    let answer = Ping {
        object: PingObject::Ping,
        pong: true,
    };
    serde_json::to_vec(&answer)
        .expect("a ping serializes")
        .into()
});
