//! The benchmark baseline: bare actix-web with one handler that answers `GET /v1/ping` with
//! the same body and the same three headers as partner-api (Content-Type, Cache-Control and a
//! uuid request id) and nothing else: no middleware, no logging, no limiter. `scripts/bench`
//! compares the full service against it in the same run.
//!
//! Usage: `bare_ping [ADDR]` (default 127.0.0.1:8081); one worker per CPU in the affinity mask.

use actix_web::http::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use actix_web::{App, HttpResponse, HttpServer, get};

#[get("/v1/ping")]
async fn ping() -> HttpResponse {
    let mut id = *b"req_00000000000000000000000000000000";
    uuid::Uuid::new_v4().simple().encode_lower(&mut id[4..]);
    HttpResponse::Ok()
        .insert_header((CONTENT_TYPE, HeaderValue::from_static("application/json")))
        .insert_header((CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .insert_header((
            "service-request-id",
            HeaderValue::from_bytes(&id).expect("ASCII"),
        ))
        .body(r#"{"object":"ping","pong":true}"#)
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8081".to_owned());
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    HttpServer::new(|| App::new().service(ping))
        .workers(workers)
        .bind(addr)?
        .run()
        .await
}
