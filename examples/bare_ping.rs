//! The benchmark baseline: bare actix-web with one handler that answers `GET /v1/ping` with
//! the same body and the same three headers as partner-api (Content-Type, Cache-Control and a
//! uuid request id) and nothing else: no middleware, no logging, no limiter. `scripts/bench`
//! compares the full service against it in the same run.
//!
//! With `--contract-headers` it also sends the fields the contract adds to a ping, with the
//! values partner-api sends under the benchmarks' rate limit (a million a second, which no
//! load here reaches, so the remaining count stays at its top): `RateLimit-Policy`,
//! `RateLimit`, `X-Content-Type-Options` and, over HTTPS, `Strict-Transport-Security`. That is
//! the same response on the wire, byte for byte but the request id and the date, and nothing
//! else done: the floor any implementation of the contract pays, which
//! `scripts/bench --cores --contract-control` and `scripts/callgrind --baselines` set beside
//! the full stack.
//!
//! Usage: `bare_ping [--contract-headers] [ADDR] [CERT KEY]` (default 127.0.0.1:8081); one
//! worker per CPU in the affinity mask. With a certificate and key (PEM) it serves HTTPS with
//! rustls, as partner-api does (HTTP/2 and HTTP/1.1 by ALPN), for `scripts/bench --tls`.

use std::sync::atomic::{AtomicBool, Ordering};

use actix_web::http::header::{
    CACHE_CONTROL, CONTENT_TYPE, HeaderName, HeaderValue, STRICT_TRANSPORT_SECURITY,
    X_CONTENT_TYPE_OPTIONS,
};
use actix_web::{App, HttpResponse, HttpResponseBuilder, HttpServer, web};

/// Whether this process serves HTTPS (read, never written, once serving).
static OVER_TLS: AtomicBool = AtomicBool::new(false);

async fn ping() -> HttpResponse {
    bare_fields().body(BODY)
}

async fn ping_with_contract_fields() -> HttpResponse {
    let mut answer = bare_fields();
    answer
        .insert_header((
            HeaderName::from_static("ratelimit-policy"),
            HeaderValue::from_static("\"api\";q=1000000;w=1"),
        ))
        .insert_header((
            HeaderName::from_static("ratelimit"),
            HeaderValue::from_static("\"api\";r=999999;t=1"),
        ))
        .insert_header((X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")));
    if OVER_TLS.load(Ordering::Relaxed) {
        answer.insert_header((
            STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static("max-age=63072000"),
        ));
    }
    answer.body(BODY)
}

const BODY: &str = r#"{"object":"ping","pong":true}"#;

/// The three fields every answer of both carries.
fn bare_fields() -> HttpResponseBuilder {
    let mut id = *b"req_00000000000000000000000000000000";
    uuid::Uuid::new_v4().simple().encode_lower(&mut id[4..]);
    let mut answer = HttpResponse::Ok();
    answer
        .insert_header((CONTENT_TYPE, HeaderValue::from_static("application/json")))
        .insert_header((CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .insert_header((
            "service-request-id",
            HeaderValue::from_bytes(&id).expect("ASCII"),
        ));
    answer
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let contract = args
        .first()
        .is_some_and(|flag| flag == "--contract-headers");
    if contract {
        args.remove(0);
    }
    let mut args = args.into_iter();
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:8081".to_owned());
    let tls = match (args.next(), args.next()) {
        (Some(cert), Some(key)) => Some(tls_config(&cert, &key)?),
        _ => None,
    };
    OVER_TLS.store(tls.is_some(), Ordering::Relaxed);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Idle connections are kept as long as partner-api's and nginx's in `scripts/bench --scale`.
    let server = HttpServer::new(move || {
        let handler = if contract {
            web::get().to(ping_with_contract_fields)
        } else {
            web::get().to(ping)
        };
        App::new().route("/v1/ping", handler)
    })
    .workers(workers)
    .keep_alive(std::time::Duration::from_secs(300));
    match tls {
        Some(config) => server.bind_rustls_0_23(addr, config)?,
        None => server.bind(addr)?,
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
