//! The HTTP servers, put together from actix-server and actix-http the way actix-web's
//! `HttpServer` puts them together, with one step it has no place for: each accepted connection
//! passes the connection gate before anything is read from it (its TLS handshake included),
//! and what the gate gives it (a place under its peer's ceiling) lives exactly as long as the
//! connection. The API's listener and the admin listener are both started here, with the HTTP
//! layer's limits, deadlines and rejection answers (actix-http's, patched: vendor/README.md).

use std::any::Any;
use std::fmt;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

use actix_http::body::{BoxBody, MessageBody};
use actix_http::{
    Deadlines, H1ErrorResponse, HttpServiceBuilder, KeepAlive, Request, Response, TlsAcceptorConfig,
};
use actix_server::{GracefulShutdownSignal, Server, ServerBuilder};
use actix_service::{
    IntoServiceFactory, Service, ServiceFactory, ServiceFactoryExt as _, apply_fn_factory,
    map_config,
};
use actix_web::Error;
use actix_web::dev::AppConfig;
use actix_web::rt::net::TcpStream;

/// Decides, from a new connection's peer address, whether it is served: `Some` with what it
/// holds for as long as it lives, or `None` to close it at once, nothing read.
pub type ConnectionGate = Arc<dyn Fn(Option<SocketAddr>) -> Option<Box<dyn Any>> + Send + Sync>;

/// What every connection of one server is held to.
#[derive(Clone)]
pub struct HttpSettings {
    pub workers: usize,
    pub keep_alive: KeepAlive,
    /// The wait for a request's head.
    pub request_head_timeout: Duration,
    /// How long what a client still sends is read and dropped after an early answer.
    pub disconnect_timeout: Duration,
    pub deadlines: Deadlines,
    pub h2_max_concurrent_streams: Option<u32>,
    pub h2_max_header_list_size: Option<u32>,
    pub tls_handshake_timeout: Duration,
    /// The HTTP layer's own answers (a malformed, too large or too slow head), in the
    /// contract's shape.
    pub rejections: H1ErrorResponse,
    pub shutdown_timeout_secs: u64,
    pub gate: Option<ConnectionGate>,
}

/// Starts a server on `listener` (over TLS with `tls`) whose workers each build their app with
/// `factory`. Signals are left to the caller.
pub fn start<F, I, S, B>(
    settings: HttpSettings,
    listener: TcpListener,
    tls: Option<rustls::ServerConfig>,
    factory: F,
) -> io::Result<Server>
where
    F: Fn() -> I + Send + Clone + 'static,
    I: IntoServiceFactory<S, Request>,
    S: ServiceFactory<Request, Config = AppConfig> + 'static,
    S::Error: Into<Error> + 'static,
    S::InitError: fmt::Debug,
    S::Response: Into<Response<B>> + 'static,
    <S::Service as Service<Request>>::Future: 'static,
    S::Service: 'static,
    B: MessageBody + 'static,
{
    let addr = listener.local_addr()?;
    let builder = ServerBuilder::default()
        .workers(settings.workers)
        .shutdown_timeout(settings.shutdown_timeout_secs)
        .disable_signals();
    let shutdown = builder.graceful_shutdown_signal();
    // What the app's requests are told of their server, as actix-web's `HttpServer` tells them
    // (through the constructor actix-web keeps for its test crate: Cargo.toml pins the minor
    // release).
    let app_config = AppConfig::__priv_test_new(tls.is_some(), addr.to_string(), addr);
    let gate = settings.gate.clone();
    let name = format!("partner-api-{addr}");
    let app = move || {
        let app_config = app_config.clone();
        let app = factory()
            .into_factory()
            .map_err(|error| error.into().error_response());
        map_config(app, move |()| app_config.clone())
    };
    let builder = match tls {
        Some(tls) => builder.listen(name, listener, move || {
            let handshake =
                TlsAcceptorConfig::default().handshake_timeout(settings.tls_handshake_timeout);
            let http = http_builder(&settings, &shutdown).finish(app());
            gated(
                gate.clone(),
                http.rustls_0_23_with_config(tls.clone(), handshake),
            )
        })?,
        None => builder.listen(name, listener, move || {
            let http = http_builder(&settings, &shutdown).finish(app());
            gated(gate.clone(), http.tcp())
        })?,
    };
    Ok(builder.run())
}

/// HTTP/1.1 and HTTP/2 over `T`, held to `settings`, for an app `S`.
fn http_builder<T, S>(
    settings: &HttpSettings,
    shutdown: &GracefulShutdownSignal,
) -> HttpServiceBuilder<T, S>
where
    S: ServiceFactory<Request, Config = ()>,
    S::Error: Into<Response<BoxBody>> + 'static,
    S::InitError: fmt::Debug,
    <S::Service as Service<Request>>::Future: 'static,
{
    let shutdown = shutdown.clone();
    let mut http = HttpServiceBuilder::default()
        .graceful_shutdown_signal(move || {
            let shutdown = shutdown.clone();
            async move { shutdown.notified().await }
        })
        .keep_alive(settings.keep_alive)
        .client_request_timeout(settings.request_head_timeout)
        .client_disconnect_timeout(settings.disconnect_timeout)
        // An answer's bytes leave at once: with Nagle's algorithm a small write waits for the
        // client's delayed ACK.
        .tcp_nodelay(true)
        .h1_error_response(settings.rejections.clone())
        .deadlines(settings.deadlines);
    if let Some(max) = settings.h2_max_concurrent_streams {
        http = http.h2_max_concurrent_streams(max);
    }
    if let Some(max) = settings.h2_max_header_list_size {
        http = http.h2_max_header_list_size(max);
    }
    http
}

/// `inner`, behind the gate: a connection it refuses is dropped (closed) before `inner` sees
/// it; one it admits keeps what the gate gave it until `inner` is done with the connection.
/// HTTP/2's handlers run as tasks of their own and may outlive their connection for a moment;
/// what they hold is bounded by the per-client ceiling on requests in flight.
fn gated<SF>(
    gate: Option<ConnectionGate>,
    inner: SF,
) -> impl ServiceFactory<TcpStream, Config = (), Response = (), Error = SF::Error, InitError = ()>
where
    SF: ServiceFactory<TcpStream, Config = (), Response = (), InitError = ()>,
{
    apply_fn_factory(inner, move |io: TcpStream, service: &SF::Service| {
        let admission = match &gate {
            None => Some(None),
            Some(gate) => gate(io.peer_addr().ok()).map(Some),
        };
        let served = admission.is_some().then(|| service.call(io));
        async move {
            let _held_while_served = admission;
            match served {
                Some(served) => served.await,
                None => Ok(()),
            }
        }
    })
}
