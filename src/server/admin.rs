//! The admin listener: what operators and their tools call, on an address of its own
//! (`--admin-bind`, loopback by default), never on the API's. It serves `GET /livez` (200
//! while the process serves), `GET /readyz` (200 while it takes new work, 503 from the moment
//! a shutdown begins, so a load balancer or Kubernetes stops sending traffic before the
//! listener closes, and while the certificate being served has expired, which every client
//! refuses) and `GET /metrics` (OpenMetrics to a scraper that asks for it, the classic
//! text format otherwise). Both probes answer 503 naming the
//! worker while an API worker makes no progress (`observability::watchdog`). Probes answer plain text, as
//! Kubernetes' own components do; anything else gets the contract's JSON error. These
//! endpoints are not part of the API: no rate limit, no access log line, not in the OpenAPI
//! document, and the API's listener does not serve them.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::{App, Error, HttpRequest, HttpResponse, guard, web};

use crate::conventions::{DocLinks, set_convention_headers};
use crate::edge::tls::CertificateStore;
use crate::errors::ApiError;
use crate::observability::metrics::{Exposition, Metrics};
use crate::observability::watchdog::Watchdog;
use crate::request_id::RequestId;

/// The admin endpoints, for the route table and the tests.
pub const PATHS: [&str; 3] = ["/livez", "/readyz", "/metrics"];

/// Whether the service takes new work: true from start until a shutdown begins.
#[derive(Clone, Debug)]
pub struct Readiness(Arc<AtomicBool>);

impl Default for Readiness {
    fn default() -> Self {
        Readiness(Arc::new(AtomicBool::new(true)))
    }
}

impl Readiness {
    pub fn is_ready(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// From now on `/readyz` answers 503.
    pub fn shutting_down(&self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

/// What the admin app serves.
#[derive(Clone)]
pub struct AdminState {
    pub readiness: Readiness,
    /// Whether every API worker makes progress.
    pub watchdog: Watchdog,
    pub metrics: Metrics,
    /// Where `doc_url` of an error points (the API's reference).
    pub doc_links: DocLinks,
    /// The certificate the API serves, when it speaks HTTPS.
    pub certificates: Option<Arc<CertificateStore>>,
}

/// The admin app.
pub fn app(
    state: AdminState,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = Error,
        InitError = (),
    >,
> {
    let get_or_head = || guard::Any(guard::Get()).or(guard::Head());
    let doc_links = state.doc_links.clone();
    App::new()
        .app_data(web::Data::new(state))
        .service(web::resource("/livez").guard(get_or_head()).to(livez))
        .service(web::resource("/readyz").guard(get_or_head()).to(readyz))
        .service(
            web::resource("/metrics")
                .guard(get_or_head())
                .to(metrics_text),
        )
        .default_service(web::to(move |request: HttpRequest| {
            let response = not_served(&request, &doc_links);
            async move { response }
        }))
}

fn plain(status: actix_web::http::StatusCode, text: &'static str) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .content_type("text/plain; charset=utf-8")
        .body(text)
}

/// 200 while every API worker makes progress; 503 naming the ones that do not.
async fn livez(state: web::Data<AdminState>) -> HttpResponse {
    match stalled(&state) {
        Some(response) => response,
        None => plain(actix_web::http::StatusCode::OK, "ok\n"),
    }
}

/// The 503 of `/livez`, when a worker has stopped making progress.
fn stalled(state: &AdminState) -> Option<HttpResponse> {
    let stalled = state.watchdog.stalled();
    (!stalled.is_empty()).then(|| {
        HttpResponse::build(actix_web::http::StatusCode::SERVICE_UNAVAILABLE)
            .insert_header((header::CACHE_CONTROL, "no-store"))
            .content_type("text/plain; charset=utf-8")
            .body(format!("stalled: {}\n", stalled.join("; ")))
    })
}

/// 200 while the service takes new work: not while shutting down, nor while `/livez` fails,
/// nor while the certificate it serves has expired (every handshake would fail: a balancer
/// that checks only this endpoint must take the replica out).
async fn readyz(state: web::Data<AdminState>) -> HttpResponse {
    if let Some(response) = stalled(&state) {
        return response;
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs() as i64);
    if let Some(expired) = state
        .certificates
        .as_ref()
        .and_then(|store| store.status().expired_at(now))
    {
        let at = jiff::Timestamp::from_second(expired)
            .map_or_else(|_| expired.to_string(), |at| at.to_string());
        return HttpResponse::build(actix_web::http::StatusCode::SERVICE_UNAVAILABLE)
            .insert_header((header::CACHE_CONTROL, "no-store"))
            .content_type("text/plain; charset=utf-8")
            .body(format!("certificate expired at {at}\n"));
    }
    if state.readiness.is_ready() {
        plain(actix_web::http::StatusCode::OK, "ready\n")
    } else {
        plain(
            actix_web::http::StatusCode::SERVICE_UNAVAILABLE,
            "shutting down\n",
        )
    }
}

/// Every metric, in OpenMetrics when the scraper asks for it, else in the classic format.
async fn metrics_text(request: HttpRequest, state: web::Data<AdminState>) -> HttpResponse {
    let format = Exposition::for_accept(
        request
            .headers()
            .get(header::ACCEPT)
            .map(HeaderValue::as_bytes),
    );
    HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::VARY, "Accept"))
        .content_type(format.content_type())
        .body(state.metrics.render(format))
}

/// 405 with `Allow` on an admin path, 404 anywhere else, in the contract's error shape.
fn not_served(request: &HttpRequest, doc_links: &DocLinks) -> HttpResponse {
    // The path as the router decoded and matched it, like the API's request view.
    let path = request.match_info().as_str();
    let error = if PATHS.contains(&path) {
        ApiError::method_not_allowed(request.method(), HeaderValue::from_static("GET, HEAD"))
    } else {
        ApiError::resource_missing(request.method(), path)
    };
    let request_id = RequestId::generate();
    let mut response = error.to_response(&request_id, doc_links.resolve());
    set_convention_headers(response.headers_mut(), &request_id, None, None);
    response
}
