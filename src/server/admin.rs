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

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{App, Error, HttpRequest, HttpResponse, guard, web};

use crate::conventions::{DocLinks, set_convention_headers};
use crate::errors::ApiError;
use crate::observability::metrics::{Exposition, Metrics};
use crate::request_id::RequestId;
use crate::server::readiness::{NotReady, ReadinessChecks};

/// The admin endpoints, for the route table and the tests.
pub const PATHS: [&str; 3] = ["/livez", "/readyz", "/metrics"];

/// What the admin app serves.
#[derive(Clone)]
pub struct AdminState {
    /// Whether the service takes new work, and whether every API worker makes progress.
    pub checks: ReadinessChecks,
    pub metrics: Metrics,
    /// Where `doc_url` of an error points (the API's reference).
    pub doc_links: DocLinks,
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

fn plain(status: StatusCode, text: String) -> HttpResponse {
    HttpResponse::build(status)
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .content_type("text/plain; charset=utf-8")
        .body(text)
}

/// 200 while every API worker makes progress; 503 naming the ones that do not.
async fn livez(state: web::Data<AdminState>) -> HttpResponse {
    let stalled = state.checks.watchdog.stalled();
    if stalled.is_empty() {
        plain(StatusCode::OK, "ok\n".to_owned())
    } else {
        plain(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("stalled: {}\n", stalled.join("; ")),
        )
    }
}

/// 200 while the service takes new work; else 503 naming the first reason
/// (`server::readiness`): a stalled worker, the certificate served expired (every handshake
/// would fail, so a balancer that checks only this endpoint must take the replica out), or a
/// shutdown.
async fn readyz(state: web::Data<AdminState>) -> HttpResponse {
    match state.checks.not_ready().into_iter().next() {
        None => plain(StatusCode::OK, "ready\n".to_owned()),
        Some(NotReady::WorkerStalled(stalled)) => plain(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("stalled: {}\n", stalled.join("; ")),
        ),
        Some(NotReady::CertificateExpired(expired)) => {
            let at = jiff::Timestamp::from_second(expired)
                .map_or_else(|_| expired.to_string(), |at| at.to_string());
            plain(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("certificate expired at {at}\n"),
            )
        }
        Some(NotReady::ShuttingDown) => plain(
            StatusCode::SERVICE_UNAVAILABLE,
            "shutting down\n".to_owned(),
        ),
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
