//! The request conventions every response follows, as one middleware around the whole app.
//! It gives each request a fresh id and decides the request's one view (`http::view`: the path
//! as the router decodes it, its route, the client) before anything else, then checks the rate
//! limit of that view (a refused request is answered here, without routing), answers a
//! request no route took with the 404, or the 405 with `Allow`, of its view, catches a panicking
//! handler (500 `internal_error`, the panic logged with the id, the worker unharmed), turns
//! every error — an `ApiError`, an actix-web extractor or payload error, a bare status from a
//! middleware — into the contract's JSON error object, sets `Service-Request-Id`,
//! `Cache-Control: no-store`, `X-Content-Type-Options: nosniff` and the quota fields, writes
//! the access log line (with the trace id of a well-formed `traceparent`) and records the
//! request in the metrics, both once the response's last byte has been handed to the
//! connection (`Recorded`), so durations cover the body a slow reader takes its time over. It
//! is the only code that knows the request id, so it is where error bodies are finished; a new
//! endpoint gets all of this by being registered.

use std::borrow::Cow;
use std::future::{Ready, ready};
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use actix_web::Error;
use actix_web::body::{BodySize, BoxBody, EitherBody, MessageBody};
use actix_web::dev::{Service, ServiceRequest, ServiceResponse, Transform, forward_ready};
use actix_web::error::InternalError;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use actix_web::http::uri::Uri;
use actix_web::web::Bytes;
use futures_util::FutureExt;
use futures_util::future::{Either, LocalBoxFuture};

use crate::errors::{ApiError, DocsOrigin, ErrorCode, Rendered};
use crate::http::client::ClientResolver;
use crate::http::context::{InContext, RequestContext};
use crate::http::routes::{NoRoute, RouteTable};
use crate::http::view::RequestView;
use crate::observability::logging::{self, AccessRecord};
use crate::observability::metrics::{InFlight, Metrics, RouteLabels, WorkerMetrics};
use crate::observability::trace_context::TraceId;
use crate::rate_limit::{Check, QuotaFields, RateLimits, Refusal, WorkerLimits};
use crate::request_id::RequestId;

/// Response header carrying the request id.
pub const SERVICE_REQUEST_ID: HeaderName = HeaderName::from_static("service-request-id");

/// Where `doc_url` in error bodies points.
#[derive(Clone, Debug)]
pub enum DocsBase {
    /// A configured origin (and optional path prefix), without a trailing slash.
    Fixed { base: Arc<str> },
    /// The origin the client addressed: `scheme://<Host header>`, or the listening address
    /// when the request has no usable `Host`.
    OwnOrigin {
        /// `http://` or `https://`.
        scheme_prefix: &'static str,
        /// `<scheme>://<listening address>`, written once.
        listening: Arc<str>,
    },
}

impl DocsBase {
    /// A configured origin.
    pub fn fixed(base: Arc<str>) -> DocsBase {
        DocsBase::Fixed { base }
    }

    /// The client's view of this server: `scheme` (`http` or `https`) and the bound address.
    pub fn own_origin(scheme: &'static str, local_addr: SocketAddr) -> DocsBase {
        DocsBase::OwnOrigin {
            scheme_prefix: if scheme == "https" {
                "https://"
            } else {
                "http://"
            },
            listening: format!("{scheme}://{local_addr}").into(),
        }
    }

    /// The origin for a request addressed to `host` (its `Host`, or HTTP/2's `:authority`),
    /// borrowed in pieces: a flood of error responses allocates nothing for it.
    pub(crate) fn resolve<'a>(&'a self, host: Option<&'a [u8]>) -> DocsOrigin<'a> {
        match self {
            DocsBase::Fixed { base } => DocsOrigin::from_parts(base, ""),
            DocsBase::OwnOrigin {
                scheme_prefix,
                listening,
            } => {
                // Only a plain host[:port] is echoed; anything else falls back to our address.
                let host = host
                    .filter(|host| {
                        !host.is_empty()
                            && host
                                .iter()
                                .all(|byte| byte.is_ascii_alphanumeric() || b".-:[]".contains(byte))
                    })
                    .and_then(|host| std::str::from_utf8(host).ok());
                match host {
                    Some(host) => DocsOrigin::from_parts(scheme_prefix, host),
                    None => DocsOrigin::from_parts(listening, ""),
                }
            }
        }
    }
}

/// How many header fields a request may have and how many bytes they may take, on HTTP/1.1 and
/// HTTP/2 alike. HTTP/2 announces the byte limit and its `h2` layer refuses a larger header
/// list before keeping it; the field count, which HTTP/2 has no setting for, and both limits
/// below the HTTP/1.1 parser's own (96 fields, 128 KiB) are held here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeaderLimits {
    pub fields: usize,
    /// Counted as HTTP/2 counts a header list (RFC 9113, 6.5.2): each field's name and value
    /// plus 32 bytes.
    pub bytes: usize,
}

impl HeaderLimits {
    /// The limits HTTP/1.1's parser applies by itself.
    pub const HTTP1: HeaderLimits = HeaderLimits {
        fields: 96,
        bytes: 128 * 1024,
    };

    /// The 431 for `headers`, when they are over a limit.
    pub fn check(&self, headers: &HeaderMap) -> Option<ApiError> {
        if headers.len() > self.fields {
            return Some(
                ApiError::new(ErrorCode::RequestHeaderTooLarge).with_message(format!(
                    "The request has {} header fields; at most {} are accepted.",
                    headers.len(),
                    self.fields
                )),
            );
        }
        let bytes: usize = headers
            .iter()
            .map(|(name, value)| name.as_str().len() + value.len() + 32)
            .sum();
        (bytes > self.bytes).then(|| {
            ApiError::new(ErrorCode::RequestHeaderTooLarge).with_message(format!(
                "The request's header fields take {bytes} bytes (each field's name and value \
                 plus 32); at most {} are accepted.",
                self.bytes
            ))
        })
    }
}

/// The middleware factory; see the module documentation.
#[derive(Clone)]
pub struct RequestConventions {
    docs_base: DocsBase,
    header_limits: HeaderLimits,
    clients: ClientResolver,
    routes: Arc<RouteTable>,
    rate_limits: RateLimits,
    hsts: Option<HeaderValue>,
    /// The metrics, when an admin listener serves them, and the route labels to use.
    metrics: Option<(Metrics, RouteLabels)>,
}

impl RequestConventions {
    /// `routes` is every route the app serves; `hsts` is the `Strict-Transport-Security` value
    /// to send, when serving HTTPS.
    pub fn new(
        docs_base: DocsBase,
        header_limits: HeaderLimits,
        clients: ClientResolver,
        routes: Arc<RouteTable>,
        rate_limits: RateLimits,
        hsts: Option<HeaderValue>,
        metrics: Option<(Metrics, RouteLabels)>,
    ) -> Self {
        RequestConventions {
            docs_base,
            header_limits,
            clients,
            routes,
            rate_limits,
            hsts,
            metrics,
        }
    }
}

impl<S, B> Transform<S, ServiceRequest> for RequestConventions
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = Error> + 'static,
    B: MessageBody + Unpin + 'static,
{
    type Response = ServiceResponse<Recorded<EitherBody<B, BoxBody>>>;
    type Error = Error;
    type Transform = RequestConventionsMiddleware<S>;
    type InitError = ();
    type Future = Ready<Result<Self::Transform, Self::InitError>>;

    fn new_transform(&self, service: S) -> Self::Future {
        ready(Ok(RequestConventionsMiddleware {
            service: Rc::new(service),
            parts: Rc::new(Parts {
                docs_base: self.docs_base.clone(),
                header_limits: self.header_limits,
                clients: self.clients.clone(),
                routes: Arc::clone(&self.routes),
                // Built here, on the worker: a shared store is reached through a
                // connection of the worker's own.
                rate_limits: self.rate_limits.for_worker(),
                hsts: self.hsts.clone(),
                // Built here, on the worker: each worker records into cells of its own.
                metrics: self
                    .metrics
                    .as_ref()
                    .map(|(metrics, routes)| Rc::new(metrics.for_worker(routes.clone()))),
            }),
        }))
    }
}

pub struct RequestConventionsMiddleware<S> {
    service: Rc<S>,
    parts: Rc<Parts>,
}

/// What the middleware of one worker works with.
struct Parts {
    docs_base: DocsBase,
    header_limits: HeaderLimits,
    clients: ClientResolver,
    routes: Arc<RouteTable>,
    rate_limits: WorkerLimits,
    hsts: Option<HeaderValue>,
    metrics: Option<Rc<WorkerMetrics>>,
}

type Answer<B> = Result<ServiceResponse<Recorded<EitherBody<B, BoxBody>>>, Error>;

impl<S, B> Service<ServiceRequest> for RequestConventionsMiddleware<S>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = Error> + 'static,
    B: MessageBody + Unpin + 'static,
{
    type Response = ServiceResponse<Recorded<EitherBody<B, BoxBody>>>;
    type Error = Error;
    type Future = Either<Ready<Answer<B>>, LocalBoxFuture<'static, Answer<B>>>;

    forward_ready!(service);

    fn call(&self, request: ServiceRequest) -> Self::Future {
        let started = Instant::now();
        let request_id = RequestId::generate();
        // The one view of this request, decided here and read by everything below.
        let view = RequestView::of(&request, &self.parts.routes, &self.parts.clients);
        match self.parts.rate_limits.check(&view) {
            Check::Decided(Ok(quota)) => Either::Right(serve(
                Rc::clone(&self.service),
                Rc::clone(&self.parts),
                request,
                view,
                request_id,
                quota,
                started,
            )),
            Check::Decided(Err(refusal)) => Either::Left(ready(Ok(self
                .parts
                .refuse(request, view, request_id, refusal, started)))),
            // The shared store answers asynchronously; the request waits for it.
            Check::Pending(decision) => {
                let (service, parts) = (Rc::clone(&self.service), Rc::clone(&self.parts));
                Either::Right(Box::pin(async move {
                    match decision.await {
                        Ok(quota) => {
                            serve(service, parts, request, view, request_id, quota, started).await
                        }
                        Err(refusal) => {
                            Ok(parts.refuse(request, view, request_id, refusal, started))
                        }
                    }
                }))
            }
        }
    }
}

/// Routes an admitted request and finishes its answer: errors in the contract's shape, the
/// convention headers, the access line and the metrics.
fn serve<S, B>(
    service: Rc<S>,
    parts: Rc<Parts>,
    request: ServiceRequest,
    view: RequestView,
    request_id: RequestId,
    quota: Option<QuotaFields>,
    started: Instant,
) -> LocalBoxFuture<'static, Answer<B>>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = Error> + 'static,
    B: MessageBody + Unpin + 'static,
{
    // What the access log and a panic's answer need besides the view, taken now: the request
    // itself moves into the router, which needs sole ownership of it.
    let line = RequestLine {
        view,
        host_header: request.headers().get(header::HOST).cloned(),
        trace_id: trace_id_to_log(&request),
    };
    let too_large = parts.header_limits.check(request.headers());
    // What the handler and the code it calls know of the request (`http::context`).
    let context = RequestContext::new(
        request_id,
        line.view.client(),
        line.view
            .route()
            .map(|route| Arc::clone(parts.routes.template(route))),
    );
    Box::pin(async move {
        let in_flight = parts.metrics.as_ref().map(|metrics| metrics.in_flight());
        let hsts = parts.hsts.clone();
        // The inner call is made inside the guarded future so that a panic in its
        // synchronous part (routing) is caught as well. A request over the header limits is
        // not routed.
        let outcome = match too_large {
            Some(error) => Ok(Err(error.into())),
            None => {
                // Polled with its context current, so the handler's log lines carry the id.
                AssertUnwindSafe(InContext::new(context, async move {
                    service.call(request).await
                }))
                .catch_unwind()
                .await
            }
        };
        let failure = match outcome {
            Ok(Ok(response)) => {
                let mut response = if response.status().as_u16() < 400 {
                    response.map_into_left_body()
                } else {
                    let rendered =
                        api_error_for_response(&response, &line.view, &parts.routes, &request_id)
                            .rendered(&request_id, parts.docs_base.resolve(line.host()));
                    let (request, original) = response.into_parts();
                    ServiceResponse::new(request, rendered.into_response(original))
                        .map_into_right_body()
                };
                set_convention_headers(response.headers_mut(), &request_id, hsts, quota);
                let answered = Answered {
                    metrics: parts.metrics.clone(),
                    in_flight,
                    status: response.status(),
                    request_id,
                    view: line.view,
                    trace_id: line.trace_id,
                    started,
                }
                .head_ready(&parts.routes);
                return Ok(response.map_body(|_, body| Recorded::new(body, answered)));
            }
            Ok(Err(error)) => {
                let status = error.as_response_error().status_code();
                api_error_from(&error, status, &request_id).into_owned()
            }
            Err(panic) => {
                let message = panic_message(panic.as_ref());
                log::error!(
                    "{request_id} handler panicked on {} {}: {message}",
                    line.view.method(),
                    crate::http::view::path_for_log(line.view.path())
                );
                ApiError::internal(message)
            }
        };
        // The request is gone (consumed by a failing service or dropped by the unwind), so
        // the answer travels as an error carrying its finished response.
        let mut response = failure.to_response(&request_id, parts.docs_base.resolve(line.host()));
        set_convention_headers(response.headers_mut(), &request_id, hsts, quota);
        let answered = Answered {
            metrics: parts.metrics.clone(),
            in_flight,
            status: response.status(),
            request_id,
            view: line.view,
            trace_id: line.trace_id,
            started,
        }
        .head_ready(&parts.routes);
        let response = response.map_body(|_, body| BoxBody::new(Recorded::new(body, answered)));
        Err(InternalError::from_response(failure, response).into())
    })
}

impl Parts {
    /// The 429 for a request over its limit, finished here: it needs nothing the router or
    /// a handler would add, and nothing kept for later.
    fn refuse<B>(
        &self,
        request: ServiceRequest,
        view: RequestView,
        request_id: RequestId,
        refusal: Refusal,
        started: Instant,
    ) -> ServiceResponse<Recorded<EitherBody<B, BoxBody>>> {
        if let Some(metrics) = &self.metrics {
            metrics.refused(refusal.policy);
        }
        let docs = self.docs_base.resolve(request_host(
            request.headers().get(header::HOST),
            request.uri(),
        ));
        let mut response =
            Rendered::rate_limited(refusal.retry_after_secs, &request_id, docs).into_new_response();
        set_convention_headers(
            response.headers_mut(),
            &request_id,
            self.hsts.clone(),
            Some(refusal.quota),
        );
        // Recorded now, not when its body is done: a refusal's body is a few hundred bytes
        // handed over in one piece, and a flood of refusals is what the limiter exists to
        // make cheap (`scripts/soak panics` holds it to the cost of plain pings).
        drop(
            Answered {
                metrics: self.metrics.clone(),
                in_flight: None,
                status: response.status(),
                trace_id: trace_id_to_log(&request),
                request_id,
                view,
                started,
            }
            .head_ready(&self.routes),
        );
        request
            .into_response(response)
            .map_into_right_body()
            .map_body(|_, body| Recorded::already(body))
    }
}

/// The answer to a request the HTTP layer rejected before it could be routed (a malformed,
/// too large or too slow request head; see the vendored actix-http's `H1ErrorResponse`): the
/// contract's JSON error for `status`, with a request id and the convention headers, like
/// every other answer, and an access line, since the request never reaches the middleware.
/// The connection is closed after it, as the HTTP layer decided.
pub fn http_layer_rejection(
    status: StatusCode,
    docs_base: &DocsBase,
    hsts: Option<&HeaderValue>,
) -> actix_web::HttpResponse {
    let started = Instant::now();
    let request_id = RequestId::generate();
    let error = ApiError::new(catalogue_code(status, &request_id)).keeping_status(status);
    // Nothing of the request can be trusted, its `Host` included.
    let mut response = error.to_response(&request_id, docs_base.resolve(None));
    set_convention_headers(response.headers_mut(), &request_id, hsts.cloned(), None);
    if logging::access_log_enabled() {
        logging::write_access(&AccessRecord {
            request_id: &request_id,
            client: None,
            method: "-",
            path: "-",
            status: status.as_u16(),
            micros: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
            trace_id: None,
        });
    }
    response
}

/// The host the client addressed. HTTP/2 sends it as `:authority`, which lands in the URI,
/// not in `Host`.
fn request_host<'a>(host_header: Option<&'a HeaderValue>, uri: &'a Uri) -> Option<&'a [u8]> {
    match host_header {
        Some(host) => Some(host.as_bytes()),
        None => Some(uri.authority()?.as_str().as_bytes()),
    }
}

/// The partner's trace id, when the access line will be written and names it.
fn trace_id_to_log(request: &ServiceRequest) -> Option<TraceId> {
    if logging::access_log_enabled() {
        TraceId::of(request.headers())
    } else {
        None
    }
}

/// What is kept of a request for its log line and for answering it after a failure.
struct RequestLine {
    view: RequestView,
    host_header: Option<HeaderValue>,
    trace_id: Option<TraceId>,
}

impl RequestLine {
    fn host(&self) -> Option<&[u8]> {
        request_host(self.host_header.as_ref(), self.view.uri())
    }
}

pub(crate) fn set_convention_headers(
    headers: &mut header::HeaderMap,
    request_id: &RequestId,
    hsts: Option<HeaderValue>,
    quota: Option<QuotaFields>,
) {
    if let Some(quota) = quota {
        quota.add_to(headers);
    }
    headers.insert(SERVICE_REQUEST_ID, request_id.to_header_value());
    if let Some(hsts) = hsts {
        headers.insert(header::STRICT_TRANSPORT_SECURITY, hsts);
    }
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
}

/// The error an error response stands for: the 404 or 405 of the request view when no route
/// took the request, the `ApiError` attached to it, an actix-web error converted, or, for a
/// bare status set by a middleware, the catalogue code for that status (keeping the `Allow` of
/// a 405 and the wait of a 429).
fn api_error_for_response<'a, B>(
    response: &'a ServiceResponse<B>,
    view: &RequestView,
    routes: &RouteTable,
    request_id: &RequestId,
) -> Cow<'a, ApiError> {
    let status = response.status();
    if let Some(error) = response.response().error() {
        if error.as_error::<NoRoute>().is_some() {
            return Cow::Owned(match view.route() {
                Some(route) => {
                    ApiError::method_not_allowed(view.method(), routes.allow(route).clone())
                }
                None => ApiError::resource_missing(view.method(), view.path()),
            });
        }
        return api_error_from(error, status, request_id);
    }
    let headers = response.headers();
    Cow::Owned(match catalogue_code(status, request_id) {
        ErrorCode::MethodNotAllowed => match headers.get(header::ALLOW) {
            Some(allow) => ApiError::method_not_allowed(view.method(), allow.clone()),
            None => ApiError::new(ErrorCode::MethodNotAllowed),
        },
        ErrorCode::ResourceMissing => ApiError::resource_missing(view.method(), view.path()),
        ErrorCode::RateLimited => ApiError::rate_limited(retry_after_secs(headers)),
        code => ApiError::new(code).keeping_status(status),
    })
}

/// The catalogue's code for an error status that came without an `ApiError`. Every status the
/// service can send has a row (a test holds that); a status without one is a gap in the
/// catalogue: logged as an error, and answered with its own status, never rewritten, and the
/// code of its class.
fn catalogue_code(status: StatusCode, request_id: &RequestId) -> ErrorCode {
    ErrorCode::for_status(status).unwrap_or_else(|| {
        log::error!(
            "{request_id} status {status} has no row in the error catalogue; answered with that \
             status and the code of its class"
        );
        ErrorCode::for_class(status)
    })
}

/// Whole seconds to wait, from a middleware's `Retry-After` (or actix-governor's
/// `x-ratelimit-after`), never less than 1.
fn retry_after_secs(headers: &header::HeaderMap) -> u64 {
    [
        header::RETRY_AFTER,
        HeaderName::from_static("x-ratelimit-after"),
    ]
    .iter()
    .find_map(|name| headers.get(name)?.to_str().ok()?.trim().parse::<u64>().ok())
    .unwrap_or(1)
}

fn api_error_from<'a>(
    error: &'a Error,
    status: StatusCode,
    request_id: &RequestId,
) -> Cow<'a, ApiError> {
    if let Some(api_error) = error.as_error::<ApiError>() {
        if let Some(cause) = api_error.internal_cause() {
            log::error!("{request_id} internal error: {cause}");
        }
        return Cow::Borrowed(api_error);
    }
    // An actix-web error (an extractor or payload error of the framework itself). Its text may
    // describe internals, so it goes to the log and the client gets the catalogue's message.
    // Its text may hold what the client sent, decoded (a line break, say): quoted and escaped.
    let code = catalogue_code(status, request_id);
    let text = error.to_string();
    if code == ErrorCode::InternalError {
        log::error!("{request_id} internal error: {text:?}");
    } else {
        log::info!("{request_id} request refused by the framework ({status}): {text:?}");
    }
    Cow::Owned(ApiError::new(code).keeping_status(status))
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        (*message).to_owned()
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else {
        "panic with a non-string payload".to_owned()
    }
}

/// A response body that records its request when the last byte has been handed to the
/// connection, or when the connection drops it unfinished (the client went away): the access
/// line and the metrics' duration then cover the whole answer, a slow reader's included, and
/// the request counts as in flight until then. The app's body is a `BoxBody`, so `Unpin`.
pub struct Recorded<B> {
    body: B,
    /// Taken (and so recorded) at the end of the body, or with the body when it is dropped.
    answered: Option<Answered>,
}

impl<B> Recorded<B> {
    fn new(body: B, answered: Answered) -> Self {
        Recorded {
            body,
            answered: Some(answered),
        }
    }

    /// A body whose request was recorded already.
    fn already(body: B) -> Self {
        Recorded {
            body,
            answered: None,
        }
    }
}

impl<B: MessageBody + Unpin> MessageBody for Recorded<B> {
    type Error = B::Error;

    fn size(&self) -> BodySize {
        self.body.size()
    }

    fn poll_next(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, Self::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.body).poll_next(context);
        if let Poll::Ready(None | Some(Err(_))) = polled {
            this.answered = None;
        }
        polled
    }
}

/// What is recorded of an answered request, when it is dropped: its access line and its
/// metrics.
struct Answered {
    metrics: Option<Rc<WorkerMetrics>>,
    in_flight: Option<InFlight>,
    status: StatusCode,
    request_id: RequestId,
    view: RequestView,
    trace_id: Option<TraceId>,
    started: Instant,
}

impl Answered {
    /// The response head is ready: the service's own time goes into the head histogram now
    /// (the latency objective's measure, which a client that reads slowly, or opens no HTTP/2
    /// window at all, cannot stretch); the rest is recorded when the body is done.
    fn head_ready(self, routes: &RouteTable) -> Self {
        // Only a method a route serves: the time of a 404, or of any answer to a method the
        // route does not have, says nothing about a route, and would add series of no use.
        let served = self
            .view
            .route()
            .is_some_and(|route| routes.serves(route, self.view.method()));
        if let Some(metrics) = self.metrics.as_ref().filter(|_| served) {
            let micros = u64::try_from(self.started.elapsed().as_micros()).unwrap_or(u64::MAX);
            let view = &self.view;
            metrics.record_head(
                metrics.route(view.route(), view.path()),
                view.method(),
                micros,
            );
        }
        self
    }
}

impl Drop for Answered {
    fn drop(&mut self) {
        let log = logging::access_log_enabled();
        if !log && self.metrics.is_none() {
            return;
        }
        let micros = u64::try_from(self.started.elapsed().as_micros()).unwrap_or(u64::MAX);
        let (view, status) = (&self.view, self.status.as_u16());
        if let Some(metrics) = &self.metrics {
            metrics.record(
                metrics.route(view.route(), view.path()),
                view.method(),
                status,
                micros,
            );
        }
        // Out of flight once recorded, so that a scrape never sees neither.
        self.in_flight = None;
        if log {
            logging::write_access(&AccessRecord {
                request_id: &self.request_id,
                client: view.client(),
                method: view.method().as_str(),
                path: view.path(),
                status,
                micros,
                trace_id: self.trace_id.as_ref(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_origin_follows_a_valid_host_header_only() {
        let base = DocsBase::own_origin("http", "127.0.0.1:8080".parse().unwrap());
        assert_eq!(
            base.resolve(Some(b"api.example.test:8443")).to_string(),
            "http://api.example.test:8443"
        );
        assert_eq!(
            base.resolve(Some(b"evil.test/path?x")).to_string(),
            "http://127.0.0.1:8080"
        );
        assert_eq!(base.resolve(None).to_string(), "http://127.0.0.1:8080");
        let base = DocsBase::own_origin("https", "[::1]:8443".parse().unwrap());
        assert_eq!(base.resolve(None).to_string(), "https://[::1]:8443");
    }

    #[test]
    fn retry_after_is_read_from_either_header_and_never_zero() {
        let mut headers = header::HeaderMap::new();
        assert_eq!(retry_after_secs(&headers), 1);
        headers.insert(
            HeaderName::from_static("x-ratelimit-after"),
            HeaderValue::from_static("4"),
        );
        assert_eq!(retry_after_secs(&headers), 4);
        headers.insert(header::RETRY_AFTER, HeaderValue::from_static("9"));
        assert_eq!(retry_after_secs(&headers), 9);
    }

    #[test]
    fn method_is_echoed_as_sent() {
        let method = actix_web::http::Method::from_bytes(b"BREW").unwrap();
        let error = ApiError::resource_missing(&method, "/v1/pings");
        assert_eq!(
            error.message(),
            "Unrecognized request URL (BREW: /v1/pings)."
        );
    }
}
