//! Building and running the service. [`app`] is the app factory: the production server, the
//! tests and the OpenAPI generator all build exactly this app. [`Application`] binds its own
//! listeners (port 0 in tests, whose real port is read back): the API's, plain or TLS, and the
//! admin listener's (probes and metrics, see `server::admin`); it starts the workers and
//! the background tasks (limiter pruning, certificate watching), and stops gracefully on
//! SIGTERM or SIGINT: `/readyz` turns 503 at once, the API keeps serving for the shutdown
//! delay (so load balancers stop sending first; a second signal cuts it short), then stops
//! accepting, lets in-flight requests finish within the grace period, and returns so the
//! process exits 0.

use std::future::Future;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use actix_web::body::MessageBody;
use actix_web::dev::{
    ConnectionGate, Deadlines, H1ErrorResponse, Server, ServerHandle, ServiceFactory,
    ServiceRequest, ServiceResponse,
};
use actix_web::http::KeepAlive;
use actix_web::http::header::HeaderValue;
use actix_web::{App, Error, HttpServer};
use socket2::{Domain, Protocol, Socket, Type};
use utoipa_actix_web::AppExt;

use crate::api;
use crate::conventions::{
    ConventionSettings, DocsBase, HeaderLimits, RequestConventions, http_layer_rejection,
};
use crate::docs::{self, Docs};
use crate::http::client::ClientResolver;
use crate::http::extract::BodyLimit;
use crate::http::routes::{Extra, RouteTable, no_route};
use crate::http::state::AppState;
use crate::http::tls::metrics::CertificateCollector;
use crate::http::tls::{CertificateStore, TlsError};
use crate::observability::metrics::{Metrics, RouteLabels};
use crate::observability::watchdog::{Watchdog, WatchdogCollector};
use crate::rate_limit::in_flight::InFlightCeiling;
use crate::rate_limit::metrics::{ConnectionCeilingCollector, RateLimitCollector};
use crate::rate_limit::{ClientKey, RateLimits};
use crate::server::admin::{self, AdminState, Readiness};
use crate::server::config::{BaseUrl, ServerConfig};
use crate::server::systemd::Notifier;

/// What the app factory needs; cloned into every worker. The rate limiters inside are built
/// once and shared, so every worker counts against the same buckets.
#[derive(Clone)]
pub struct AppSettings {
    /// What the request conventions around every request work with.
    pub conventions: ConventionSettings,
    pub body_limit: BodyLimit,
    /// Where requests are counted, when an admin listener serves the metrics.
    pub metrics: Option<Metrics>,
    /// What the endpoints share (`http::state`).
    pub state: AppState,
    /// The documentation served beside the API, rendered once for all workers.
    pub docs: Docs,
}

/// The whole app: every route, the documentation next to it, the fallback for unknown paths
/// and methods, and the request conventions around all of it.
pub fn app(
    settings: AppSettings,
    extra: Extra,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = Error,
        InitError = (),
    >,
> {
    let (app, document) = App::new()
        .into_utoipa_app()
        .configure(|config| api::register(config, &settings.state))
        .configure(extra.routes)
        .split_for_parts();
    let deprecations: Vec<_> = api::DEPRECATIONS
        .iter()
        .chain(extra.deprecations)
        .copied()
        .collect();
    // The one table of routes: the request view finds each request's route in it, and the
    // 405's `Allow` and the metrics' route labels are read from it by that route.
    let routes = Arc::new(
        RouteTable::from_document(
            &document,
            &deprecations,
            settings
                .conventions
                .docs_base
                .configured()
                .unwrap_or_default(),
        )
        .with_paths(&docs::PATHS, "GET, HEAD"),
    );
    let metrics = settings
        .metrics
        .map(|metrics| (metrics, RouteLabels::new(routes.templates())));
    app.configure(|config| docs::register(config, &settings.docs))
        .app_data(settings.body_limit)
        .default_service(actix_web::dev::fn_service(no_route))
        .wrap(RequestConventions::new(
            settings.conventions,
            routes,
            metrics,
        ))
}

/// Why the service could not start.
#[derive(Debug)]
pub enum StartupError {
    /// The address cannot be bound (in use, not ours, no permission).
    Bind(SocketAddr, io::Error),
    /// The certificate or key is unusable: a bad setting, like a bad flag value.
    Tls(TlsError),
    /// A file a setting names cannot be used (the message names the setting).
    Setting(String),
}

impl std::fmt::Display for StartupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartupError::Bind(addr, error) => write!(f, "cannot listen on {addr}: {error}"),
            StartupError::Tls(error) => write!(f, "{error}"),
            StartupError::Setting(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for StartupError {}

/// A bound, started server.
pub struct Application {
    server: Server,
    local_addr: SocketAddr,
    admin: Option<(Server, SocketAddr)>,
    /// Listened for from the start: a signal that came before `run_until_stopped` would
    /// otherwise kill the process.
    signals: Signals,
    readiness: Readiness,
    shutdown_delay: Duration,
    rate_limits: RateLimits,
    prune_every: Duration,
    /// How often files that may change (certificate, store credentials) are checked.
    files_every: Option<Duration>,
    certificates: Option<(Arc<CertificateStore>, Option<Duration>)>,
    watchdog: Watchdog,
    /// systemd, when it started the service with `Type=notify` (`server::systemd`).
    notifier: Option<Notifier>,
}

/// How long a connection that answered early (a 413 before the body, a 408) goes on reading
/// and dropping what its client still sends before it closes (nginx's `lingering_time` is 30 s
/// with 5 s between reads; the answers this service sends early are small, so 2 s suffices).
const LINGER: Duration = Duration::from_secs(2);

/// Pending connections the kernel queues for us before refusing more. The standard library
/// listens with 128, which a burst of a few hundred connects overflows: the overflowing clients'
/// SYNs are dropped and they wait a full second to retry. 1024 is actix-web's own default for
/// the listeners it binds itself (the kernel caps it at `net.core.somaxconn`).
const LISTEN_BACKLOG: i32 = 1024;

/// Binds `addr` like `TcpListener::bind` (address reuse on, so a restart does not wait for
/// TIME_WAIT), but with [`LISTEN_BACKLOG`].
fn listen(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(LISTEN_BACKLOG)?;
    Ok(socket.into())
}

impl Application {
    /// Binds `config.bind` and starts the service with the API's routes.
    pub fn build(config: &ServerConfig) -> Result<Application, StartupError> {
        // The API's endpoints share nothing yet; the first with a store builds it here, from
        // `config`, and adds it (`http::state`).
        Application::build_with(config, AppState::default(), Extra::NONE)
    }

    /// Like [`Application::build`], with `state` for the endpoints and `extra` mounted beside
    /// the API's (tests mount endpoints of their own this way).
    pub fn build_with(
        config: &ServerConfig,
        state: AppState,
        extra: Extra,
    ) -> Result<Application, StartupError> {
        // The certificate is checked before anything listens: a bad one never starts a server
        // that then fails every handshake.
        let certificates = match (&config.tls_cert, &config.tls_key) {
            (Some(cert), Some(key)) => {
                Some(CertificateStore::load(cert, key).map_err(StartupError::Tls)?)
            }
            _ => None,
        };
        let bind_error = |error| StartupError::Bind(config.bind, error);
        let listener = listen(config.bind).map_err(bind_error)?;
        let local_addr = listener.local_addr().map_err(bind_error)?;
        let admin_listener = match config.admin_bind.0 {
            Some(addr) => {
                let admin_error = |error| StartupError::Bind(addr, error);
                let listener = listen(addr).map_err(admin_error)?;
                let local_addr = listener.local_addr().map_err(admin_error)?;
                Some((listener, local_addr))
            }
            None => None,
        };
        let scheme = if certificates.is_some() {
            "https"
        } else {
            "http"
        };
        let docs_base = match &config.public_url {
            Some(url) => DocsBase::fixed(url.clone().into_shared()),
            None => DocsBase::own_origin(scheme, local_addr),
        };
        if let Some(everyone) = config
            .trusted_proxies
            .iter()
            .find(|network| network.to_string().ends_with("/0"))
        {
            log::warn!(
                "--trusted-proxies includes {everyone}: every peer is trusted, so any client \
                 can name its own address in {} and choose its own rate-limit bucket",
                config.client_ip_header
            );
        }
        // Built here, outside the per-worker factory, so that all workers share it.
        let store = config.rate_limit_store().map_err(StartupError::Setting)?;
        let rate_limits = RateLimits::with_store(config.rate_limits(), &store);
        // Every API worker beats; the monitor thread and the probes read the beats.
        let watchdog = Watchdog::new(Duration::from_secs(config.watchdog_secs));
        watchdog.spawn_monitor();
        // Metrics are recorded only where a listener serves them.
        // Per peer address, shared by every worker; without a setting, none.
        let connections =
            InFlightCeiling::new(config.max_connections_per_client().unwrap_or(u32::MAX));
        let metrics = admin_listener.as_ref().map(|_| {
            // Each part reports its own series (`Collector`s of their own).
            let metrics = Metrics::new()
                .with(RateLimitCollector(rate_limits.clone()))
                .with(ConnectionCeilingCollector(connections.clone()))
                .with(WatchdogCollector(watchdog.clone()));
            match &certificates {
                Some(store) => metrics.with(CertificateCollector(Arc::clone(store))),
                None => metrics,
            }
        });
        let hsts = certificates
            .as_ref()
            .filter(|_| config.hsts_max_age_secs > 0)
            .map(|_| {
                HeaderValue::from_str(&format!("max-age={}", config.hsts_max_age_secs))
                    .expect("a number is a header value")
            });
        let settings = AppSettings {
            conventions: ConventionSettings {
                docs_base: docs_base.clone(),
                header_limits: config.header_limits(),
                clients: ClientResolver::new(
                    config.trusted_proxies.clone(),
                    config.client_ip_header,
                ),
                rate_limits: rate_limits.clone(),
                in_flight: InFlightCeiling::new(config.max_in_flight_per_client()),
                hsts: hsts.clone(),
            },
            body_limit: BodyLimit {
                bytes: config.max_body_bytes as usize,
                stall: config.body_timeout(),
            },
            metrics: metrics.clone(),
            state,
            docs: Docs::new(config.public_url.clone().map(BaseUrl::into_shared)),
        };
        // The HTTP layer's own rejections answer in the contract's shape too.
        let rejection_docs = docs_base.clone();
        let deadlines = Deadlines {
            send: Some(config.send_timeout()),
            h2_idle: Some(config.h2_idle()),
        };
        let rejection_hsts = hsts;
        let header_limits = config.header_limits();
        let rejection_metrics = metrics.clone();
        let beating = watchdog.clone();
        let gate = connection_gate(&connections, settings.conventions.clients.clone());
        let server = HttpServer::new(move || {
            // The factory runs on each worker thread: batch that worker's log lines, and beat.
            crate::observability::logging::batch_on_this_worker();
            beating.beat_on_this_worker();
            app(settings.clone(), extra)
        })
        .workers(config.worker_count())
        .keep_alive(
            config
                .keep_alive()
                .map_or(KeepAlive::Disabled, KeepAlive::Timeout),
        )
        .client_request_timeout(config.request_head_timeout())
        // Every wait a client controls after its head has arrived ends too (OPERATIONS.md,
        // "Deadlines"): the body's is the extractor's (`http::extract::Body`); these two come
        // from the patched actix-http under vendor/.
        .deadlines(deadlines)
        // From the patched actix-http too: at most so many connections per peer address.
        .connection_gate(gate)
        // After an early answer (the client still sending), what it sends is read and dropped
        // for this long before the close, so that its kernel does not reset the connection
        // before it has read the answer.
        .client_disconnect_timeout(LINGER)
        // HTTP/2 held to HTTP/1.1's line (OPERATIONS.md, "Connection limits"); these two settings
        // come from the patched actix-web and actix-http under vendor/.
        .h2_max_concurrent_streams(config.h2_max_concurrent_streams)
        .h2_max_header_list_size(config.max_header_bytes)
        .tls_handshake_timeout(Duration::from_millis(config.tls_handshake_timeout_ms))
        // Also from the patched actix-http: a malformed, too large or too slow request head gets
        // the contract's JSON error, not an empty body.
        .h1_error_response(H1ErrorResponse::new(move |status, peer| {
            http_layer_rejection(
                status,
                peer,
                &header_limits,
                &rejection_docs,
                rejection_hsts.as_ref(),
                rejection_metrics.as_ref(),
            )
            .into()
        }))
        .shutdown_timeout(config.shutdown_grace_secs)
        // Signals are handled in `run_until_stopped`: actix-server would stop at once on
        // SIGINT, and both signals must drain in-flight requests.
        .disable_signals();
        let server = match &certificates {
            Some(store) => {
                let tls = store.server_config().map_err(StartupError::Tls)?;
                server.listen_rustls_0_23(listener, tls)
            }
            None => server.listen(listener),
        }
        .map_err(bind_error)?
        .run();
        let readiness = Readiness::default();
        let admin = match (admin_listener, metrics) {
            (Some((listener, admin_addr)), Some(metrics)) => {
                let state = AdminState {
                    readiness: readiness.clone(),
                    watchdog: watchdog.clone(),
                    metrics,
                    docs_base,
                };
                // The admin listener's waits and rejections are the API's: probes and scrapers
                // are clients too, and a malformed request gets the contract's error.
                let admin_docs = state.docs_base.clone();
                let server = HttpServer::new(move || admin::app(state.clone()))
                    .workers(1)
                    .disable_signals()
                    .shutdown_timeout(1)
                    .client_request_timeout(config.request_head_timeout())
                    .deadlines(deadlines)
                    .client_disconnect_timeout(LINGER)
                    .h1_error_response(H1ErrorResponse::new(move |status, peer| {
                        // Plain HTTP, so no HSTS; not counted with the API's requests.
                        http_layer_rejection(
                            status,
                            peer,
                            &HeaderLimits::HTTP1,
                            &admin_docs,
                            None,
                            None,
                        )
                        .into()
                    }))
                    .listen(listener)
                    .map_err(|error| StartupError::Bind(admin_addr, error))?
                    .run();
                Some((server, admin_addr))
            }
            _ => None,
        };
        let watch_every =
            (config.tls_watch_secs > 0).then(|| Duration::from_secs(config.tls_watch_secs));
        Ok(Application {
            server,
            local_addr,
            admin,
            signals: Signals::new(),
            readiness,
            shutdown_delay: Duration::from_secs(config.shutdown_delay_secs),
            rate_limits,
            prune_every: Duration::from_secs(config.rate_limit_prune_secs),
            files_every: watch_every,
            certificates: certificates.map(|store| (store, watch_every)),
            watchdog,
            notifier: Notifier::from_environment(),
        })
    }

    /// Tells `notifier` (instead of the manager the environment names, if any) when the
    /// service is ready and when it stops, and pings it while the workers make progress.
    pub fn notifying(mut self, notifier: Notifier) -> Application {
        self.notifier = Some(notifier);
        self
    }

    /// The address actually bound (the real port when the configuration asked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The admin listener's address, unless it is off.
    pub fn admin_addr(&self) -> Option<SocketAddr> {
        self.admin.as_ref().map(|(_, addr)| *addr)
    }

    /// The certificate in use, when the service speaks HTTPS (to reload it from elsewhere).
    pub fn certificates(&self) -> Option<Arc<CertificateStore>> {
        self.certificates
            .as_ref()
            .map(|(store, _)| Arc::clone(store))
    }

    /// A handle to stop the server from elsewhere, gracefully or not.
    pub fn handle(&self) -> ServerHandle {
        self.server.handle()
    }

    /// Serves until SIGTERM or SIGINT (or a stop through the handle), then drains gracefully.
    pub async fn run_until_stopped(self) -> io::Result<()> {
        let store_rate_limits = self.rate_limits.clone();
        let watching_store =
            actix_web::rt::spawn(async move { store_rate_limits.watch_store().await });
        let files_rate_limits = self.rate_limits.clone();
        let watching_store_files = self.files_every.map(|every| {
            actix_web::rt::spawn(async move { files_rate_limits.watch_store_files(every).await })
        });
        let hangup_rate_limits = self.rate_limits.clone();
        // Pruning walks every tracked client and gives memory back to the system: on a thread
        // of its own, not on this arbiter, which also answers signals and the admin listener.
        let pruning = spawn_pruning(self.rate_limits, self.prune_every);
        let (mut signals, certificates) = (self.signals, self.certificates);
        // SIGHUP reloads what can be reloaded, and never stops the process, TLS or not.
        let hangups = signals.hangup.take();
        let store = certificates.as_ref().map(|(store, _)| Arc::clone(store));
        let reloading = actix_web::rt::spawn(reload_on_hangup(hangups, store, hangup_rate_limits));
        let watching = certificates
            .and_then(|(store, every)| every.map(|every| actix_web::rt::spawn(store.watch(every))));
        // A server runs once it is polled: the admin one on a task of its own.
        let admin = self.admin.map(|(server, _)| {
            let handle = server.handle();
            (handle, actix_web::rt::spawn(server))
        });
        let handle = self.server.handle();
        let (readiness, delay) = (self.readiness, self.shutdown_delay);
        let notifier = self.notifier;
        let signal_notifier = notifier.clone();
        actix_web::rt::spawn(async move {
            let signal = signals.next().await;
            readiness.shutting_down();
            if let Some(notifier) = &signal_notifier {
                notifier.stopping(&format!("{signal} received: draining"));
            }
            if !delay.is_zero() {
                log::info!(
                    "{signal} received: not ready; serving {} s more before draining (a \
                     second signal drains at once)",
                    delay.as_secs()
                );
                tokio::select! {
                    () = actix_web::rt::time::sleep(delay) => {}
                    signal = signals.next() => log::info!("{signal} received again"),
                }
            }
            log::info!("{signal} received: no longer accepting; finishing in-flight requests");
            handle.stop(true).await;
        });
        // actix-server starts its accept loop and its workers on the first poll, which returns
        // once every worker's app factory has run: only then does the service accept, and the
        // manager may call it started (and start what comes after it). A server that failed
        // to start says nothing of the kind.
        let mut server = std::pin::pin!(self.server);
        let first = std::future::poll_fn(|cx| Poll::Ready(server.as_mut().poll(cx))).await;
        if let (Some(notifier), Poll::Pending) = (&notifier, &first) {
            notifier.spawn_pings(&self.watchdog);
            notifier.ready(&format!("serving on {}", self.local_addr));
        }
        let served = match first {
            Poll::Ready(result) => result,
            Poll::Pending => server.await,
        };
        // However it ended (a signal, a stop through the handle, an error).
        if let Some(notifier) = &notifier {
            notifier.stopping("stopped");
        }
        drop(pruning);
        watching_store.abort();
        if let Some(watching) = watching_store_files {
            watching.abort();
        }
        reloading.abort();
        if let Some(watching) = watching {
            watching.abort();
        }
        // The admin listener goes last: `/readyz` says 503 until the very end.
        if let Some((handle, running)) = admin {
            handle.stop(true).await;
            if let Ok(Err(error)) = running.await {
                log::warn!("admin listener: {error}");
            }
        }
        served?;
        log::info!("stopped");
        Ok(())
    }
}

/// Prunes the limiter's quiet clients every `every`, on a thread of its own, until the returned
/// sender is dropped.
fn spawn_pruning(rate_limits: RateLimits, every: Duration) -> std::sync::mpsc::Sender<()> {
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let spawned = std::thread::Builder::new()
        .name("limiter-pruning".to_owned())
        .spawn(move || {
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(every)
            {
                rate_limits.prune();
            }
        });
    if let Err(error) = spawned {
        log::error!("the limiter's pruning cannot start, so quiet clients stay tracked: {error}");
    }
    stop
}

/// Admits a new connection while its peer address holds fewer than the ceiling's connections;
/// a trusted proxy's connections carry many clients and are not counted.
fn connection_gate(connections: &InFlightCeiling, clients: ClientResolver) -> ConnectionGate {
    let connections = connections.clone();
    ConnectionGate::new(move |peer| {
        let Some(peer) = peer.filter(|peer| !clients.is_trusted_proxy(peer.ip())) else {
            return Some(Box::new(()));
        };
        connections
            .admit(ClientKey::of(Some(peer.ip())))
            .map(|slot| Box::new(slot) as Box<dyn std::any::Any>)
    })
}

/// Ignores SIGHUP until the server listens for it (`Signals::new`, when the server is built):
/// its default action ends the process, and a reload sent in the first milliseconds of a
/// start (systemd's `ExecReload` right after `ExecStart`) would stop it. Called first thing in
/// `main`, before any thread exists; what remains is the time the loader takes before `main`,
/// which only a readiness notification (systemd's `Type=notify`) closes.
pub fn ignore_hangups_until_listened() {
    // SAFETY: setting a signal's disposition to SIG_IGN with no handler of ours, before any
    // other thread exists; tokio's handler, installed later, replaces it.
    unsafe {
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
    }
}

/// Reloads what comes from files on every SIGHUP: the certificate, when there is one, and the
/// shared store's credentials, when they come from files; otherwise says there is nothing to
/// reload. Every other setting is read once at start, so a plain instance may reload nothing,
/// but a SIGHUP must never stop it: systemd's `ExecReload` sends one, and without a handler
/// the signal's default action ends the process with no drain.
async fn reload_on_hangup(
    hangups: Option<tokio::signal::unix::Signal>,
    certificates: Option<Arc<CertificateStore>>,
    rate_limits: RateLimits,
) {
    let Some(mut hangups) = hangups else {
        return;
    };
    while hangups.recv().await.is_some() {
        if let Some(store) = &certificates {
            store.reload_and_log("SIGHUP");
        }
        rate_limits.reload_store_files("SIGHUP");
        if certificates.is_none() && !rate_limits.store_files_in_use() {
            log::info!(
                "SIGHUP received: nothing to reload (no certificate, no credential file; other \
                 settings are read at start)"
            );
        }
    }
}

/// SIGTERM and SIGINT, listened for once for the whole shutdown, and SIGHUP; all three from
/// the moment the server is built, so that none arriving early takes its default action.
struct Signals {
    terminate: Option<tokio::signal::unix::Signal>,
    interrupt: Option<tokio::signal::unix::Signal>,
    hangup: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn new() -> Self {
        use tokio::signal::unix::{SignalKind, signal};
        let (terminate, interrupt, hangup) = (
            signal(SignalKind::terminate()).ok(),
            signal(SignalKind::interrupt()).ok(),
            signal(SignalKind::hangup()).ok(),
        );
        if terminate.is_none() || interrupt.is_none() {
            log::error!("cannot listen for SIGTERM/SIGINT; stop the process with SIGKILL");
        }
        if hangup.is_none() {
            log::error!("cannot listen for SIGHUP: a SIGHUP would stop the process");
        }
        Signals {
            terminate,
            interrupt,
            hangup,
        }
    }

    /// The next of the two signals.
    async fn next(&mut self) -> &'static str {
        let (Some(terminate), Some(interrupt)) = (&mut self.terminate, &mut self.interrupt) else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = terminate.recv() => "SIGTERM",
            _ = interrupt.recv() => "SIGINT",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpStream;

    /// Nobody accepts here, so every connect must fit in the kernel's queue. With the standard
    /// library's 128 the 130th SYN is dropped and its connect stalls for a second.
    #[test]
    fn a_burst_of_connects_fits_in_the_listen_queue() {
        let listener = listen("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        let connected: Vec<TcpStream> = (0..300)
            .map_while(|_| TcpStream::connect_timeout(&addr, Duration::from_millis(500)).ok())
            .collect();
        assert_eq!(connected.len(), 300);
    }
}
