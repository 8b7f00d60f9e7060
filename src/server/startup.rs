//! Building and running the service. [`app`] is the app factory: the production server and the
//! tests build exactly this app (the tests with their own endpoints beside the API's, an
//! [`Extension`]), and the OpenAPI generator mounts the same endpoints. [`Application`] binds
//! its own
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

use actix_http::{Deadlines, H1ErrorResponse};
use actix_web::body::MessageBody;
use actix_web::dev::{Server, ServerHandle, ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::http::KeepAlive;
use actix_web::http::header::HeaderValue;
use actix_web::{App, Error, web};
use socket2::{Domain, Protocol, Socket, Type};
use utoipa_actix_web::AppExt;
use utoipa_actix_web::service_config::ServiceConfig;

use crate::api::{self, ApiContext};
use crate::audit::sink::AuditSink;
use crate::auth::store::{KeyStore, KeysCollector};
use crate::conventions::{
    AnswerSettings, ConventionSettings, DocLinks, HeaderLimits, RequestConventions,
    http_layer_rejection,
};
use crate::database::{Database, DatabaseCollector};
use crate::docs::{self, Docs};
use crate::edge::client::ClientResolver;
use crate::edge::deprecation::Deprecation;
use crate::edge::extract::BodyLimit;
use crate::edge::mount::Endpoints;
use crate::edge::routes::{RouteTable, no_route};
use crate::edge::tls::metrics::CertificateCollector;
use crate::edge::tls::{CertificateStore, TlsError};
use crate::observability::metrics::Metrics;
use crate::observability::watchdog::{Watchdog, WatchdogCollector};
use crate::rate_limit::in_flight::InFlightCeiling;
use crate::rate_limit::metrics::{ConnectionCeilingCollector, RateLimitCollector};
use crate::rate_limit::{ClientKey, RateLimits};
use crate::server::admin::{self, AdminState};
use crate::server::config::{BaseUrl, ServerConfig};
use crate::server::http_server::{self, ConnectionGate, HttpSettings};
use crate::server::readiness::{Readiness, ReadinessChecks, ReadinessCollector};
use crate::server::systemd::Notifier;

/// Endpoints mounted beside the API's own, with the context they share (`X`): what the tests
/// add. Production adds none ([`Extension::none`]); nothing here replaces the API's endpoints
/// or its [`ApiContext`], which `Application::build` always builds and mounts.
pub struct Extension<X: ?Sized + 'static> {
    context: web::Data<X>,
    endpoints: Endpoints<X>,
    framework_routes: fn(&mut ServiceConfig),
    published: bool,
}

impl Extension<()> {
    /// Nothing beside the API.
    pub fn none() -> Self {
        Extension::new((), Endpoints::NONE)
    }
}

impl<X: Send + Sync + 'static> Extension<X> {
    /// `endpoints`, sharing `context`.
    pub fn new(context: X, endpoints: Endpoints<X>) -> Self {
        Extension {
            context: web::Data::new(context),
            endpoints,
            framework_routes: |_| {},
            published: false,
        }
    }
}

impl<X: ?Sized + 'static> Extension<X> {
    /// With `routes` mounted straight on the framework, outside `mount!` and the document:
    /// the tests' helpers that exercise the framework's own extractors, errors and timing.
    /// Never an endpoint.
    pub fn with_framework_routes(mut self, routes: fn(&mut ServiceConfig)) -> Self {
        self.framework_routes = routes;
        self
    }

    /// With these endpoints in the served documents and the reference beside the API's: an
    /// example server, whose reference, samples and documents show what it serves. The
    /// tests' servers serve the API's own document, as production does.
    pub fn published(mut self) -> Self {
        self.published = true;
        self
    }

    /// The documentation the server serves: the API's, with these endpoints when published.
    fn docs(&self, public_origin: Arc<str>) -> Docs {
        if !self.published {
            return Docs::new(Some(public_origin));
        }
        let endpoints = self.endpoints;
        Docs::describing(
            Some(public_origin),
            Arc::new(move || crate::openapi::document_with(&endpoints)),
        )
    }

    /// Mounts the API's endpoints and these on `config`, as the app factory and the route
    /// table see them.
    fn mount_all(&self, config: &mut ServiceConfig) {
        api::ENDPOINTS.mount_on(config);
        self.endpoints.mount_on(config);
        (self.framework_routes)(config);
    }

    /// The deprecated operations of the API and of these endpoints.
    fn deprecations(&self) -> Vec<Deprecation> {
        api::ENDPOINTS
            .deprecations
            .iter()
            .chain(self.endpoints.deprecations)
            .copied()
            .collect()
    }
}

impl<X: ?Sized> Clone for Extension<X> {
    fn clone(&self) -> Self {
        Extension {
            context: self.context.clone(),
            endpoints: self.endpoints,
            framework_routes: self.framework_routes,
            published: self.published,
        }
    }
}

/// What the app factory needs; cloned into every worker. What is inside (the limiter, the
/// contexts) is built once and shared, so every worker counts against the same buckets and
/// reads the same stores.
#[derive(Clone)]
pub struct AppSettings {
    /// What the request conventions around every request work with.
    pub conventions: ConventionSettings,
    pub body_limit: BodyLimit,
    /// What the API's endpoints share.
    pub api: web::Data<ApiContext>,
    /// The documentation served beside the API, rendered once for all workers.
    pub docs: Docs,
}

/// The whole app: every endpoint with the context it shares, the documentation next to it,
/// the fallback for unknown paths and methods, and the request conventions around all of it.
pub fn app<X: ?Sized + 'static>(
    settings: AppSettings,
    extension: Extension<X>,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = Error,
        InitError = (),
    >,
> {
    App::new()
        .into_utoipa_app()
        // An app keeps one value per type, the last installed: the API's context goes last, so
        // no extension can stand in for it.
        .app_data(extension.context.clone())
        .app_data(settings.api)
        .configure(|config| extension.mount_all(config))
        .into_app()
        .configure(|config| docs::register(config, &settings.docs))
        .app_data(settings.body_limit)
        .default_service(actix_web::dev::fn_service(no_route))
        .wrap(RequestConventions::new(settings.conventions))
}

/// The one table of routes, read from the document that mounting `extension` beside the API
/// produces (the app factory mounts exactly the same): the request view finds each request's
/// route in it, and the 405's `Allow`, the deprecation headers and the metrics' route labels
/// are read from it by that route.
fn route_table<X: ?Sized>(extension: &Extension<X>, public_url: &str) -> RouteTable {
    let (_, document) = App::new()
        .into_utoipa_app()
        .configure(|config| extension.mount_all(config))
        .split_for_parts();
    RouteTable::from_document(&document, &extension.deprecations(), public_url)
        .with_paths(&docs::PATHS, "GET, HEAD")
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
    /// What the API's endpoints share, the same every worker reads.
    api: web::Data<ApiContext>,
    server: Server,
    local_addr: SocketAddr,
    admin: Option<(Server, SocketAddr)>,
    /// Listened for from the start: a signal that came before `run_until_stopped` would
    /// otherwise kill the process.
    signals: Signals,
    readiness: Readiness,
    shutdown_delay: Duration,
    /// The partner keys in force, reloaded with the certificate.
    keys: KeyStore,
    /// Where member data is kept: its password file read again on SIGHUP.
    database: Database,
    /// Where audit records go: its file opened again on SIGHUP, its queue written at the end.
    audit: AuditSink,
    rate_limits: RateLimits,
    /// The in-flight ceilings (requests, connections), pruned with the limiter.
    ceilings: [InFlightCeiling; 2],
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
/// TIME_WAIT), but with [`LISTEN_BACKLOG`]; returns the listener and the address bound.
fn listen(addr: SocketAddr) -> Result<(TcpListener, SocketAddr), StartupError> {
    let bound = || -> io::Result<(TcpListener, SocketAddr)> {
        let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
        socket.set_reuse_address(true)?;
        socket.bind(&addr.into())?;
        socket.listen(LISTEN_BACKLOG)?;
        let listener: TcpListener = socket.into();
        let local_addr = listener.local_addr()?;
        Ok((listener, local_addr))
    };
    bound().map_err(|error| StartupError::Bind(addr, error))
}

/// What the API's server is built from, besides the settings: the parts `build_with` makes
/// once and shares between the API's workers, the admin listener and the background tasks.
struct Shared {
    /// The partner keys in force.
    keys: KeyStore,
    /// Where member data is kept.
    database: Database,
    /// Where audit records go.
    audit: AuditSink,
    rate_limits: RateLimits,
    watchdog: Watchdog,
    /// Whether a shutdown has begun (`/readyz`, the readiness metrics).
    readiness: Readiness,
    /// The connections each peer address holds.
    connections: InFlightCeiling,
    /// Where requests are counted, when an admin listener serves the metrics.
    metrics: Option<Metrics>,
    doc_links: DocLinks,
    /// `Strict-Transport-Security`, when serving HTTPS.
    hsts: Option<HeaderValue>,
}

impl Application {
    /// Binds `config.bind` and starts the service with the API's endpoints.
    pub fn build(config: &ServerConfig) -> Result<Application, StartupError> {
        Application::build_with(config, |_| Ok(Extension::none()))
    }

    /// Like [`Application::build`], with the endpoints of the extension `extension` builds
    /// mounted beside the API's (tests mount endpoints of their own this way; they change
    /// settings, never the API's endpoints or its context). It is built with the database the
    /// settings name, where its stores keep their things as the API's do.
    pub fn build_with<X: ?Sized + Send + Sync + 'static>(
        config: &ServerConfig,
        extension: impl FnOnce(&Database) -> Result<Extension<X>, String>,
    ) -> Result<Application, StartupError> {
        // The certificate is checked before anything listens: a bad one never starts a server
        // that then fails every handshake.
        let certificates = load_certificates(config)?;
        let (listener, local_addr) = listen(config.bind)?;
        let admin_listener = config.admin_bind.0.map(listen).transpose()?;
        warn_if_every_peer_is_trusted(config);
        if let Some(warning) = public_url_warning(
            config.public_url.is_some(),
            local_addr,
            !config.trusted_proxies.is_empty(),
        ) {
            log::warn!("{warning}");
        }
        let shared = Shared::build(
            config,
            local_addr,
            certificates.as_ref(),
            admin_listener.is_some(),
        )?;
        let extension = extension(&shared.database).map_err(StartupError::Setting)?;
        let settings = app_settings(config, &shared, &extension);
        let api = settings.api.clone();
        let ceilings = [
            settings.conventions.in_flight.clone(),
            shared.connections.clone(),
        ];
        let server = api_server(
            config,
            &shared,
            (settings, extension),
            (listener, local_addr),
            certificates.as_ref(),
        )?;
        let readiness = shared.readiness.clone();
        // Metrics are recorded exactly when an admin listener serves them.
        let admin = admin_listener
            .zip(shared.metrics.clone())
            .map(|(listener, metrics)| {
                admin_server(config, listener, metrics, &shared, certificates.as_ref())
            })
            .transpose()?;
        let watch_every =
            (config.tls_watch_secs > 0).then(|| Duration::from_secs(config.tls_watch_secs));
        Ok(Application {
            api,
            server,
            local_addr,
            admin,
            signals: Signals::new(),
            readiness,
            shutdown_delay: Duration::from_secs(config.shutdown_delay_secs),
            keys: shared.keys,
            database: shared.database,
            audit: shared.audit,
            rate_limits: shared.rate_limits,
            ceilings,
            prune_every: Duration::from_secs(config.rate_limit_prune_secs),
            files_every: watch_every,
            certificates: certificates.map(|store| (store, watch_every)),
            watchdog: shared.watchdog,
            notifier: Notifier::from_environment(),
        })
    }

    /// What the API's endpoints share: the stores every worker reads and changes, which tests
    /// seed through it (`application.api().<table>.seed(...)`).
    pub fn api(&self) -> web::Data<ApiContext> {
        self.api.clone()
    }

    /// The partner keys in force, to reload at once (tests issue keys with it).
    pub fn keys(&self) -> KeyStore {
        self.keys.clone()
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
        let watched_keys = self.keys.clone();
        let watching_keys = self
            .files_every
            .filter(|_| self.keys.has_file())
            .map(|every| {
                actix_web::rt::spawn(async move {
                    let mut ticks = actix_web::rt::time::interval(every);
                    loop {
                        ticks.tick().await;
                        watched_keys.reload_if_changed();
                    }
                })
            });
        let hangup_keys = self.keys.clone();
        let (hangup_audit, audit) = (self.audit.clone(), self.audit);
        let hangup_database = self.database.clone();
        let forgetting = actix_web::rt::spawn(crate::api::table::forget_expired_keys_every(
            self.database,
            Duration::from_secs(60),
        ));
        // Pruning walks every tracked client and gives memory back to the system: on a thread
        // of its own, not on this arbiter, which also answers signals and the admin listener.
        let pruning = spawn_pruning(self.rate_limits, self.ceilings, self.prune_every);
        let (mut signals, certificates) = (self.signals, self.certificates);
        // SIGHUP reloads what can be reloaded, and never stops the process, TLS or not.
        let hangups = signals.hangup.take();
        let store = certificates.as_ref().map(|(store, _)| Arc::clone(store));
        let reloading = actix_web::rt::spawn(reload_on_hangup(
            hangups,
            store,
            hangup_rate_limits,
            (hangup_keys, hangup_audit, hangup_database),
        ));
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
        if let Some(watching) = watching_keys {
            watching.abort();
        }
        reloading.abort();
        forgetting.abort();
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
        // The audit records still queued are written (or counted as lost) before the end.
        audit.finish(Duration::from_secs(2));
        served?;
        log::info!("stopped");
        Ok(())
    }
}

/// The certificate and key the settings name, loaded and checked, when the service speaks
/// HTTPS.
fn load_certificates(config: &ServerConfig) -> Result<Option<Arc<CertificateStore>>, StartupError> {
    match (&config.tls_cert, &config.tls_key) {
        (Some(cert), Some(key)) => CertificateStore::load(cert, key)
            .map(Some)
            .map_err(StartupError::Tls),
        _ => Ok(None),
    }
}

/// A trusted network of every address lets any client name its own address, and so choose its
/// own rate-limit bucket: allowed (a test bench may want it), but said at start.
fn warn_if_every_peer_is_trusted(config: &ServerConfig) {
    if let Some(everyone) = config
        .trusted_proxies
        .iter()
        .find(|network| network.to_string().ends_with("/0"))
    {
        log::warn!(
            "--trusted-proxies includes {everyone}: every peer is trusted, so any client can \
             name its own address in {} and choose its own rate-limit bucket",
            config.client_ip_header
        );
    }
}

/// Without `--public-url` the served OpenAPI documents, their samples and `doc_url` links name
/// the listener's own origin, a wildcard address by its loopback one: right for a local run,
/// but a service listening beyond loopback, or behind a proxy (trusted proxies configured, a
/// loopback listener included), is reached by another name, which only the operator knows.
/// Said at start, with the origin the links name.
fn public_url_warning(
    configured: bool,
    local_addr: SocketAddr,
    behind_proxy: bool,
) -> Option<String> {
    if configured || (local_addr.ip().is_loopback() && !behind_proxy) {
        return None;
    }
    let reached = if behind_proxy {
        "behind a proxy (--trusted-proxies is set)"
    } else {
        "beyond loopback"
    };
    let named = crate::conventions::origin::reachable_locally(local_addr);
    Some(format!(
        "listening on {local_addr} {reached} without --public-url: the served OpenAPI \
         documents, their code samples and doc_url links name {named}, this machine's own \
         address; set --public-url (PARTNER_API_PUBLIC_URL) to the URL partners use"
    ))
}

impl Shared {
    /// Builds, once and outside the per-worker factory, what all workers share: the limiter
    /// and its store, the watchdog (its monitor started), the connection ceiling, the metrics
    /// (only where an admin listener serves them, each part reporting its own series through a
    /// collector), where `doc_url` points and the HSTS value.
    fn build(
        config: &ServerConfig,
        local_addr: SocketAddr,
        certificates: Option<&Arc<CertificateStore>>,
        serves_metrics: bool,
    ) -> Result<Shared, StartupError> {
        let store = config.rate_limit_store().map_err(StartupError::Setting)?;
        let rate_limits = RateLimits::with_store(config.rate_limits(), &store);
        let watchdog = Watchdog::new(Duration::from_secs(config.watchdog_secs));
        watchdog.spawn_monitor();
        // Per peer address; without a setting, no ceiling.
        let connections =
            InFlightCeiling::new(config.max_connections_per_client().unwrap_or(u32::MAX));
        let keys = match &config.keys_file {
            Some(path) => KeyStore::from_file(path)
                .map_err(|error| StartupError::Setting(format!("--keys-file: {error}")))?,
            None => KeyStore::default(),
        };
        let audit = AuditSink::start(&config.audit_log).map_err(|error| {
            StartupError::Setting(format!(
                "--audit-log {} (setting PARTNER_API_AUDIT_LOG): cannot use it: {error}",
                config.audit_log
            ))
        })?;
        let database = match config.database() {
            Some(settings) => Database::connect(&settings).map_err(StartupError::Setting)?,
            None => Database::Memory,
        };
        log::info!("{}", database.describe());
        let readiness = Readiness::default();
        let checks = ReadinessChecks {
            readiness: readiness.clone(),
            watchdog: watchdog.clone(),
            certificates: certificates.cloned(),
        };
        let metrics = serves_metrics.then(|| {
            let metrics = Metrics::new()
                .with(ReadinessCollector(checks))
                .with(DatabaseCollector(database.clone()))
                .with(KeysCollector(keys.clone()))
                .with(audit.collector())
                .with(RateLimitCollector(rate_limits.clone()))
                .with(ConnectionCeilingCollector(connections.clone()))
                .with(WatchdogCollector(watchdog.clone()));
            match certificates {
                Some(store) => metrics.with(CertificateCollector(Arc::clone(store))),
                None => metrics,
            }
        });
        let doc_links = match &config.public_url {
            Some(url) => DocLinks::fixed(url.clone().into_shared()),
            None if certificates.is_some() => DocLinks::own_origin("https", local_addr),
            None => DocLinks::own_origin("http", local_addr),
        };
        let hsts = certificates
            .filter(|_| config.hsts_max_age_secs > 0)
            .map(|_| {
                HeaderValue::from_str(&format!("max-age={}", config.hsts_max_age_secs))
                    .expect("a number is a header value")
            });
        Ok(Shared {
            keys,
            database,
            audit,
            rate_limits,
            watchdog,
            readiness,
            connections,
            metrics,
            doc_links,
            hsts,
        })
    }

    /// How the API's answers are written, the HTTP layer's own rejections' included.
    fn answers(&self, config: &ServerConfig) -> AnswerSettings {
        AnswerSettings {
            doc_links: self.doc_links.clone(),
            header_limits: config.header_limits(),
            hsts: self.hsts.clone(),
            metrics: self.metrics.clone(),
        }
    }
}

/// What every worker's app is built with.
fn app_settings<X: ?Sized>(
    config: &ServerConfig,
    shared: &Shared,
    extension: &Extension<X>,
) -> AppSettings {
    let public_url = config.public_url.clone().map(BaseUrl::into_shared);
    AppSettings {
        conventions: ConventionSettings {
            routes: Arc::new(route_table(
                extension,
                public_url.as_deref().unwrap_or_default(),
            )),
            clients: ClientResolver::new(config.trusted_proxies.clone(), config.client_ip_header),
            rate_limits: shared.rate_limits.clone(),
            in_flight: InFlightCeiling::new(config.max_in_flight_per_client()),
            keys: shared.keys.clone(),
            audit: shared.audit.clone(),
            answers: shared.answers(config),
        },
        body_limit: BodyLimit {
            bytes: config.max_body_bytes as usize,
            stall: config.body_timeout(),
        },
        api: web::Data::new(ApiContext::new(&shared.database)),
        docs: extension.docs(shared.doc_links.document_origin()),
    }
}

/// The API's server, started on `listener`: its workers, each building [`app`], and every limit and
/// deadline the HTTP layer enforces before a request reaches the app (docs/operations/configuration.md,
/// "Deadlines" and "Connection limits"; the settings marked so come from the patched
/// actix-web and actix-http under vendor/).
fn api_server<X: ?Sized + Send + Sync + 'static>(
    config: &ServerConfig,
    shared: &Shared,
    (settings, extension): (AppSettings, Extension<X>),
    (listener, addr): (TcpListener, SocketAddr),
    certificates: Option<&Arc<CertificateStore>>,
) -> Result<Server, StartupError> {
    let rejections = settings.conventions.answers.clone();
    let beating = shared.watchdog.clone();
    let gate = connection_gate(&shared.connections, settings.conventions.clients.clone());
    let tls = match certificates {
        Some(store) => Some(
            store
                .server_config(config.tls_profile)
                .map_err(StartupError::Tls)?,
        ),
        None => None,
    };
    let http = HttpSettings {
        workers: config.worker_count(),
        keep_alive: config
            .keep_alive()
            .map_or(KeepAlive::Disabled, KeepAlive::Timeout),
        request_head_timeout: config.request_head_timeout(),
        // After an early answer (the client still sending), what it sends is read and dropped
        // for this long before the close, so that its kernel does not reset the connection
        // before it has read the answer.
        disconnect_timeout: LINGER,
        // Every wait a client controls after its head has arrived ends too: the body's is the
        // extractor's (`edge::extract::Body`); these two are the patch's.
        deadlines: deadlines(config),
        // HTTP/2 held to HTTP/1.1's line.
        h2_max_concurrent_streams: Some(config.h2_max_concurrent_streams),
        h2_max_header_list_size: Some(config.max_header_bytes),
        tls_handshake_timeout: Duration::from_millis(config.tls_handshake_timeout_ms),
        // A malformed, too large or too slow request head gets the contract's JSON error, not
        // an empty body.
        rejections: H1ErrorResponse::new(move |status, peer| {
            http_layer_rejection(status, peer, &rejections).into()
        }),
        shutdown_timeout_secs: config.shutdown_grace_secs,
        // At most so many connections per peer address.
        gate: Some(gate),
    };
    // Signals are handled in `run_until_stopped`: actix-server would stop at once on SIGINT,
    // and both signals must drain in-flight requests.
    http_server::start(http, listener, tls, move || {
        // The factory runs on each worker thread: batch that worker's log lines, and beat.
        crate::observability::logging::batch_on_this_worker();
        beating.beat_on_this_worker();
        app(settings.clone(), extension.clone())
    })
    .map_err(|error| StartupError::Bind(addr, error))
}

/// The waits a client controls after its head has arrived (the patch's `Deadlines`).
fn deadlines(config: &ServerConfig) -> Deadlines {
    Deadlines {
        send: Some(config.send_timeout()),
        h2_idle: Some(config.h2_idle()),
    }
}

/// The admin listener's server, started: probes and metrics. Its waits and rejections are the
/// API's: probes and scrapers are clients too, and a malformed request gets the contract's error
/// (plain HTTP, so no HSTS; not counted with the API's requests).
fn admin_server(
    config: &ServerConfig,
    (listener, addr): (TcpListener, SocketAddr),
    metrics: Metrics,
    shared: &Shared,
    certificates: Option<&Arc<CertificateStore>>,
) -> Result<(Server, SocketAddr), StartupError> {
    let state = AdminState {
        checks: ReadinessChecks {
            readiness: shared.readiness.clone(),
            watchdog: shared.watchdog.clone(),
            certificates: certificates.cloned(),
        },
        metrics,
        doc_links: shared.doc_links.clone(),
    };
    let rejections = AnswerSettings {
        doc_links: state.doc_links.clone(),
        header_limits: HeaderLimits::HTTP1,
        hsts: None,
        metrics: None,
    };
    let http = HttpSettings {
        workers: 1,
        keep_alive: KeepAlive::default(),
        request_head_timeout: config.request_head_timeout(),
        disconnect_timeout: LINGER,
        deadlines: deadlines(config),
        h2_max_concurrent_streams: None,
        h2_max_header_list_size: None,
        tls_handshake_timeout: Duration::from_millis(config.tls_handshake_timeout_ms),
        rejections: H1ErrorResponse::new(move |status, peer| {
            http_layer_rejection(status, peer, &rejections).into()
        }),
        shutdown_timeout_secs: 1,
        gate: None,
    };
    let server = http_server::start(http, listener, None, move || admin::app(state.clone()))
        .map_err(|error| StartupError::Bind(addr, error))?;
    Ok((server, addr))
}

/// Prunes the limiter's and the ceilings' quiet clients every `every`, on a thread of its own,
/// until the returned sender is dropped.
fn spawn_pruning(
    rate_limits: RateLimits,
    ceilings: [InFlightCeiling; 2],
    every: Duration,
) -> std::sync::mpsc::Sender<()> {
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let spawned = std::thread::Builder::new()
        .name("limiter-pruning".to_owned())
        .spawn(move || {
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(every)
            {
                for ceiling in &ceilings {
                    ceiling.prune();
                }
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
    Arc::new(move |peer: Option<SocketAddr>| {
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
    (keys, audit, database): (KeyStore, AuditSink, Database),
) {
    let Some(mut hangups) = hangups else {
        return;
    };
    while hangups.recv().await.is_some() {
        if let Some(store) = &certificates {
            store.reload_and_log("SIGHUP");
        }
        rate_limits.reload_store_files("SIGHUP");
        keys.reload("SIGHUP");
        // The audit file, when there is one, is opened again (after a rotation).
        audit.reopen();
        let database_file = database.reload("SIGHUP");
        if certificates.is_none()
            && !rate_limits.store_files_in_use()
            && !keys.has_file()
            && !database_file
        {
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
        let (_listener, addr) = listen("127.0.0.1:0".parse().unwrap()).unwrap();
        let connected: Vec<TcpStream> = (0..300)
            .map_while(|_| TcpStream::connect_timeout(&addr, Duration::from_millis(500)).ok())
            .collect();
        assert_eq!(connected.len(), 300);
    }

    /// Beyond loopback without `--public-url`, the served documents name an address partners
    /// may not reach: a warning. On loopback, or with the URL set, none.
    #[test]
    fn a_public_listener_without_a_public_url_is_warned_about() {
        let everywhere: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        let loopback: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        assert_eq!(
            public_url_warning(false, everywhere, false).as_deref(),
            Some(
                "listening on 0.0.0.0:8080 beyond loopback without --public-url: the served \
                 OpenAPI documents, their code samples and doc_url links name 127.0.0.1:8080, \
                 this machine's own address; set --public-url (PARTNER_API_PUBLIC_URL) to the \
                 URL partners use"
            )
        );
        assert_eq!(
            public_url_warning(false, loopback, true).as_deref(),
            Some(
                "listening on 127.0.0.1:8080 behind a proxy (--trusted-proxies is set) without \
                 --public-url: the served OpenAPI documents, their code samples and doc_url \
                 links name 127.0.0.1:8080, this machine's own address; set --public-url \
                 (PARTNER_API_PUBLIC_URL) to the URL partners use"
            )
        );
        assert_eq!(public_url_warning(true, everywhere, true), None);
        assert_eq!(public_url_warning(false, loopback, false), None);
        assert_eq!(
            public_url_warning(false, "[::1]:8080".parse().unwrap(), false),
            None
        );
    }
}
