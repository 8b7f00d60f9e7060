//! The benchmark baseline: bare actix-web with one handler that answers `GET /v1/ping` with
//! the same body and the same three headers as partner-api (Content-Type, Cache-Control and a
//! uuid request id) and nothing else: no middleware, no logging, no limiter. `scripts/bench`
//! compares the full service against it in the same run.
//!
//! Usage: `bare_ping [ADDR] [CERT KEY]` (default 127.0.0.1:8081); one worker per CPU in the
//! affinity mask. With a certificate and key (PEM) it serves HTTPS with rustls, as partner-api
//! does (HTTP/2 and HTTP/1.1 by ALPN), for `scripts/bench --tls`.

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
    // Idle connections are kept as long as partner-api's and nginx's in `scripts/bench --scale`.
    let server = HttpServer::new(|| App::new().service(ping))
        .workers(workers)
        .keep_alive(std::time::Duration::from_secs(300));
    match (std::env::args().nth(2), std::env::args().nth(3)) {
        (Some(cert), Some(key)) => server.bind_rustls_0_23(addr, tls_config(&cert, &key)?)?,
        _ => server.bind(addr)?,
    }
    .run()
    .await
}

/// rustls with the same provider, protocol versions and session tickets as partner-api, and
/// its defaults otherwise.
fn tls_config(cert: &str, key: &str) -> std::io::Result<rustls::ServerConfig> {
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
    let invalid = |error: rustls::pki_types::pem::Error| {
        std::io::Error::new(std::io::ErrorKind::InvalidData, error.to_string())
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .map_err(invalid)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(invalid)?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(invalid)?;
    let mut config = rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(
        partner_api::edge::tls::provider(),
    ))
    .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
    .and_then(|builder| builder.with_no_client_auth().with_single_cert(chain, key))
    .map_err(|error| std::io::Error::other(error.to_string()))?;
    config.ticketer = rustls::crypto::aws_lc_rs::Ticketer::new()
        .map_err(|error| std::io::Error::other(error.to_string()))?;
    config.send_tls13_tickets = 1;
    Ok(config)
}
