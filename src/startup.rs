//! Building and running the service. [`app`] is the app factory: the production server, the
//! tests and the OpenAPI generator all build exactly this app. [`Application`] binds its own
//! listener (port 0 in tests, whose real port is read back), starts the workers, and stops
//! gracefully on SIGTERM or SIGINT: it stops accepting, lets in-flight requests finish within
//! the grace period, then returns so the process exits 0.

use std::io;
use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

use actix_web::body::MessageBody;
use actix_web::dev::{Server, ServerHandle, ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::http::KeepAlive;
use actix_web::{App, Error, HttpServer};
use utoipa_actix_web::AppExt;

use crate::client::ClientResolver;
use crate::config::ServerConfig;
use crate::conventions::{DocsBase, RequestConventions};
use crate::docs;
use crate::extract::BodyLimit;
use crate::rate_limit::RateLimits;
use crate::routes::{self, ExtraRoutes, RouteTable};

/// What the app factory needs; cloned into every worker. The rate limiters inside are built
/// once and shared, so every worker counts against the same buckets.
#[derive(Clone)]
pub struct AppSettings {
    pub docs_base: DocsBase,
    pub body_limit: BodyLimit,
    pub clients: ClientResolver,
    pub rate_limits: RateLimits,
}

/// The whole app: every route, the documentation next to it, the fallback for unknown paths
/// and methods, and the request conventions around all of it.
pub fn app(
    settings: AppSettings,
    extra_routes: ExtraRoutes,
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
        .configure(routes::register)
        .configure(extra_routes)
        .split_for_parts();
    let fallback = RouteTable::from_document(&document)
        .with_paths(&docs::PATHS, "GET, HEAD")
        .into_fallback();
    app.configure(docs::register)
        .app_data(settings.body_limit)
        .default_service(actix_web::dev::fn_service(fallback))
        // The last `wrap` runs first: conventions (request id, client address), then the
        // limiter, before routing.
        .wrap(settings.rate_limits)
        .wrap(RequestConventions::new(
            settings.docs_base,
            settings.clients,
        ))
}

/// A bound, started server.
pub struct Application {
    server: Server,
    local_addr: SocketAddr,
    rate_limits: RateLimits,
    prune_every: Duration,
}

impl Application {
    /// Binds `config.bind` and starts the service with the API's routes.
    pub fn build(config: &ServerConfig) -> io::Result<Application> {
        Application::build_with_routes(config, |_| {})
    }

    /// Like [`Application::build`], with `extra_routes` mounted beside the API's (tests only).
    pub fn build_with_routes(
        config: &ServerConfig,
        extra_routes: ExtraRoutes,
    ) -> io::Result<Application> {
        let listener = TcpListener::bind(config.bind)?;
        let local_addr = listener.local_addr()?;
        let settings = AppSettings {
            docs_base: match &config.docs_base_url {
                Some(url) => DocsBase::Fixed(url.clone().into_shared()),
                None => DocsBase::OwnOrigin {
                    scheme: "http",
                    local_addr,
                },
            },
            body_limit: BodyLimit(config.max_body_bytes as usize),
            clients: ClientResolver::new(config.trusted_proxies.clone()),
            // Built here, outside the per-worker factory, so that all workers share it.
            rate_limits: RateLimits::new(config.rate_limits()),
        };
        let rate_limits = settings.rate_limits.clone();
        let server = HttpServer::new(move || app(settings.clone(), extra_routes))
            .workers(config.worker_count())
            .keep_alive(
                config
                    .keep_alive()
                    .map_or(KeepAlive::Disabled, KeepAlive::Timeout),
            )
            .client_request_timeout(config.request_head_timeout())
            .shutdown_timeout(config.shutdown_grace_secs)
            // Signals are handled in `run_until_stopped`: actix-server would stop at once on
            // SIGINT, and both signals must drain in-flight requests.
            .disable_signals()
            .listen(listener)?
            .run();
        Ok(Application {
            server,
            local_addr,
            rate_limits,
            prune_every: Duration::from_secs(config.rate_limit_prune_secs),
        })
    }

    /// The address actually bound (the real port when the configuration asked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// A handle to stop the server from elsewhere, gracefully or not.
    pub fn handle(&self) -> ServerHandle {
        self.server.handle()
    }

    /// Serves until SIGTERM or SIGINT (or a stop through the handle), then drains gracefully.
    pub async fn run_until_stopped(self) -> io::Result<()> {
        let (rate_limits, prune_every) = (self.rate_limits, self.prune_every);
        let pruning = actix_web::rt::spawn(async move {
            let mut ticks = actix_web::rt::time::interval(prune_every);
            ticks.tick().await;
            loop {
                ticks.tick().await;
                rate_limits.prune();
            }
        });
        let handle = self.server.handle();
        actix_web::rt::spawn(async move {
            let signal = shutdown_signal().await;
            log::info!("{signal} received: no longer accepting; finishing in-flight requests");
            handle.stop(true).await;
        });
        let served = self.server.await;
        pruning.abort();
        served?;
        log::info!("stopped");
        Ok(())
    }
}

async fn shutdown_signal() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut terminate), Ok(mut interrupt)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        log::error!("cannot listen for SIGTERM/SIGINT; stop the process with SIGKILL");
        return std::future::pending().await;
    };
    tokio::select! {
        _ = terminate.recv() => "SIGTERM",
        _ = interrupt.recv() => "SIGINT",
    }
}
