//! The request conventions every response follows, as one middleware around the whole app
//! (`mod.rs`): it gives each request a fresh id and decides the request's one view
//! (`edge::view`: the path as the router decodes it, its route, the client) before anything
//! else, then checks the rate limit of that view (a refused request is answered here, without
//! routing), answers a request no route took with the 404, or the 405 with `Allow`, of its
//! view, catches a panicking handler (500 `internal_error`, the panic logged with the id, the
//! worker unharmed) and polls the handler with its request context current. Each of its other
//! jobs is a file of its own:
//!
//! - `origin.rs`: the one origin every link names (`doc_url`, the served documents);
//! - `header_limits.rs`: how many header fields, and bytes of them, a request may have;
//! - `addressing.rs`: one valid `Host`, and an `http` or `https` scheme;
//! - `shaping.rs`: every error (an `ApiError`, an actix-web extractor or payload error, a bare
//!   status from a middleware, the HTTP layer's own rejections) as the contract's JSON error
//!   object, and the headers every response carries (`Service-Request-Id`,
//!   `Cache-Control: no-store`, `X-Content-Type-Options: nosniff`, the quota fields);
//! - `recording.rs`: the access line (with the trace id of a well-formed `traceparent`) and
//!   the request's metrics, both once the response's last byte has been handed to the
//!   connection (`Recorded`), so durations cover the body a slow reader takes its time over.
//!
//! One middleware, not one per job: the jobs share what the first one decides (the id, the
//! view, the quota), and each actix-web middleware boxes its future per request, an
//! allocation that four more layers would repeat four times on every request (BENCHMARKS.md,
//! "Instructions per request"). A new endpoint gets all of this by being mounted.

mod addressing;
mod header_limits;
pub mod origin;
mod recording;
mod shaping;

pub use header_limits::HeaderLimits;
pub use origin::DocLinks;
pub use recording::Recorded;
pub use shaping::http_layer_rejection;
pub(crate) use shaping::set_convention_headers;
use std::future::{Ready, ready};
use std::panic::AssertUnwindSafe;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use actix_web::Error;
use actix_web::body::{BoxBody, EitherBody, MessageBody};
use actix_web::dev::{
    ResponseHead, Service, ServiceRequest, ServiceResponse, Transform, forward_ready,
};
use actix_web::error::InternalError;
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::http::{ConnectionType, StatusCode};
use futures_util::FutureExt;
use futures_util::future::{Either, LocalBoxFuture};

use self::recording::Answered;
use self::shaping::{api_error_for_response, api_error_from, panic_message};
use crate::audit::sink::AuditSink;
use crate::audit::{Members, PendingRecord};
use crate::auth::store::KeyStore;
use crate::edge::client::ClientResolver;
use crate::edge::context::{InContext, RequestInfo};
use crate::edge::routes::RouteTable;
use crate::edge::view::RequestView;
use crate::errors::{ApiError, ErrorCode, Rendered};
use crate::observability::logging;
use crate::observability::metrics::{Metrics, RouteLabels, WorkerMetrics};
use crate::observability::trace_context::TraceId;
use crate::rate_limit::in_flight::{InFlightCeiling, WorkerCeiling, WorkerSlot};
use crate::rate_limit::{Check, ClientKey, QuotaFields, RateLimits, Refusal, WorkerLimits};
use crate::request_id::RequestId;

/// Response header carrying the request id.
pub const SERVICE_REQUEST_ID: HeaderName = HeaderName::from_static("service-request-id");

/// What the middleware works with: built once by the app factory, before the workers start,
/// and shared by them all.
#[derive(Clone)]
pub struct ConventionSettings {
    /// Every route the app serves (`edge::routes`).
    pub routes: Arc<RouteTable>,
    /// Who the client of a request is.
    pub clients: ClientResolver,
    pub rate_limits: RateLimits,
    /// How many requests one client may have in flight at once.
    pub in_flight: InFlightCeiling,
    /// The partner keys in force, which a request's `Authorization` header is looked up in.
    pub keys: KeyStore,
    /// Where the audit records of requests for member data go.
    pub audit: AuditSink,
    /// How every answer is written, the HTTP layer's own rejections' included.
    pub answers: AnswerSettings,
}

/// How every answer is written: where `doc_url` points, the refusal of too many or too large
/// header fields, HSTS, and where answers are counted. The HTTP layer's own rejections
/// ([`http_layer_rejection`]) are written with it too.
#[derive(Clone)]
pub struct AnswerSettings {
    pub doc_links: DocLinks,
    pub header_limits: HeaderLimits,
    /// `Strict-Transport-Security` value to send, when serving HTTPS.
    pub hsts: Option<HeaderValue>,
    /// Where requests are counted, when an admin listener serves the metrics.
    pub metrics: Option<Metrics>,
}

/// The middleware factory; see the module documentation.
#[derive(Clone)]
pub struct RequestConventions {
    settings: ConventionSettings,
}

impl RequestConventions {
    pub fn new(settings: ConventionSettings) -> Self {
        RequestConventions { settings }
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
        let settings = self.settings.clone();
        ready(Ok(RequestConventionsMiddleware {
            service: Rc::new(service),
            conventions: Rc::new(WorkerConventions {
                // Built here, on the worker: a shared store is reached through a connection of
                // the worker's own, and each worker records into metric cells of its own.
                rate_limits: settings.rate_limits.for_worker(),
                in_flight: settings.in_flight.for_worker(),
                metrics: settings.answers.metrics.as_ref().map(|metrics| {
                    Rc::new(metrics.for_worker(RouteLabels::new(settings.routes.templates())))
                }),
                settings,
            }),
        }))
    }
}

pub struct RequestConventionsMiddleware<S> {
    service: Rc<S>,
    conventions: Rc<WorkerConventions>,
}

/// What the middleware of one worker works with: the shared settings, and this worker's own
/// connection to the limiter and metric cells.
struct WorkerConventions {
    settings: ConventionSettings,
    rate_limits: WorkerLimits,
    in_flight: WorkerCeiling,
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
    /// A refusal is answered at once, in a future that needs no box; only a routed request's
    /// is boxed (BENCHMARKS.md, "Speed tricks re-measured").
    type Future = Either<Ready<Answer<B>>, LocalBoxFuture<'static, Answer<B>>>;

    forward_ready!(service);

    fn call(&self, request: ServiceRequest) -> Self::Future {
        let started = Instant::now();
        let request_id = RequestId::generate();
        // The one view of this request, decided here and read by everything below.
        let view = RequestView::of(
            &request,
            &self.conventions.settings.routes,
            &self.conventions.settings.clients,
            &self.conventions.settings.keys,
        );
        // The audit record of a request for member data, begun now, so that it is written
        // whatever happens next: a refusal, a wait for the shared store the client gives up on.
        let audit = self.conventions.audit_of(&view, request_id);
        // The ceiling first: a client holding all it may hold is refused before its request
        // costs a rate-limit token, or a wait for the shared store.
        let Some(slot) = self.conventions.in_flight.admit(ClientKey::for_view(&view)) else {
            return Either::Left(ready(Ok(self.conventions.refuse(
                request,
                view,
                (request_id, audit),
                Refused::InFlight,
                started,
            ))));
        };
        match self.conventions.rate_limits.check(&view) {
            Check::Decided(Ok(quota)) => Either::Right(serve(
                Rc::clone(&self.service),
                Rc::clone(&self.conventions),
                request,
                view,
                Admitted {
                    request_id,
                    quota,
                    slot,
                    started,
                    audit,
                },
            )),
            Check::Decided(Err(refusal)) => Either::Left(ready(Ok(self.conventions.refuse(
                request,
                view,
                (request_id, audit),
                Refused::Quota(refusal),
                started,
            )))),
            // The shared store answers asynchronously; the request waits for it.
            Check::Pending(decision) => {
                let (service, conventions) =
                    (Rc::clone(&self.service), Rc::clone(&self.conventions));
                Either::Right(Box::pin(async move {
                    match decision.await {
                        Ok(quota) => {
                            let admitted = Admitted {
                                request_id,
                                quota,
                                slot,
                                started,
                                audit,
                            };
                            serve(service, conventions, request, view, admitted).await
                        }
                        Err(refusal) => Ok(conventions.refuse(
                            request,
                            view,
                            (request_id, audit),
                            Refused::Quota(refusal),
                            started,
                        )),
                    }
                }))
            }
        }
    }
}

/// What a request admitted past the ceiling and the rate limit carries to its answer.
struct Admitted {
    request_id: RequestId,
    /// The quota fields to send (`None` when limiting is off).
    quota: Option<QuotaFields>,
    /// Its place under the client's in-flight ceiling, held until the answer is done.
    slot: WorkerSlot,
    started: Instant,
    audit: Audit,
}

/// The audit of a request: where its handler lists the members it touches, and its record,
/// for an operation marked `x-member-data` (`audit`); nothing for any other.
struct Audit {
    members: Members,
    record: Option<PendingRecord>,
}

/// Why a request is refused with a 429 before it is routed.
enum Refused {
    /// Over its client's rate limit.
    Quota(Refusal),
    /// Its client has as many requests in flight as it may.
    InFlight,
}

/// Routes an admitted request and finishes its answer: errors in the contract's shape, the
/// convention headers, the access line and the metrics.
fn serve<S, B>(
    service: Rc<S>,
    conventions: Rc<WorkerConventions>,
    request: ServiceRequest,
    view: RequestView,
    admitted: Admitted,
) -> LocalBoxFuture<'static, Answer<B>>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = Error> + 'static,
    B: MessageBody + Unpin + 'static,
{
    // What the access log and a panic's answer need besides the view, taken now: the request
    // itself moves into the router, which needs sole ownership of it.
    let summary = RequestSummary {
        view,
        trace_id: trace_id_to_log(&request),
    };
    let Admitted {
        request_id,
        quota,
        slot,
        started,
        audit,
    } = admitted;
    let Audit {
        members,
        record: mut audit_record,
    } = audit;
    // Refused before routing: too many or too large header fields, or a Host or scheme this
    // service cannot be addressed by.
    let refused = conventions
        .settings
        .answers
        .header_limits
        .check(request.headers())
        .or_else(|| addressing::check(&request))
        // An operation that needs a key: 401 or 403 before its handler runs.
        .or_else(|| {
            conventions.settings.routes.authorize(
                summary.view.route(),
                summary.view.method(),
                summary.view.caller(),
            )
        });
    // What the handler and the code it calls know of the request (`edge::context`).
    let request_info = RequestInfo::new(
        request_id,
        summary.view.client(),
        summary
            .view
            .route()
            .map(|route| Arc::clone(conventions.settings.routes.template(route))),
    )
    .with_caller(summary.view.caller().key().cloned(), members.clone());
    Box::pin(async move {
        let in_flight = conventions
            .metrics
            .as_ref()
            .map(|metrics| metrics.in_flight());
        let hsts = conventions.settings.answers.hsts.clone();
        // The inner call is made inside the guarded future so that a panic in its
        // synchronous part (routing) is caught as well. A request over the header limits is
        // not routed.
        let outcome = match refused {
            Some(error) => Ok(Err(error.into())),
            None => {
                // Polled with its context current, so the handler's log lines carry the id.
                AssertUnwindSafe(InContext::new(request_info, async move {
                    service.call(request).await
                }))
                .catch_unwind()
                .await
            }
        };
        // What both ways of answering end with: the convention headers, and what will be
        // recorded of the request once its answer is sent.
        let finish = |head: &mut ResponseHead, summary: RequestSummary, code: Option<ErrorCode>| {
            let status = head.status;
            if let Some(record) = audit_record.take() {
                record.answered(status.as_u16(), code.map(ErrorCode::as_str));
            }
            // A 408 ends the connection: the rest of a body that stopped arriving is not
            // waited for (the HTTP layer would otherwise go on draining it).
            if status == StatusCode::REQUEST_TIMEOUT {
                head.set_connection_type(ConnectionType::Close);
            }
            set_convention_headers(head.headers_mut(), &request_id, hsts, quota);
            conventions.settings.routes.add_deprecation_headers(
                summary.view.route(),
                summary.view.method(),
                head.headers_mut(),
            );
            Answered {
                metrics: conventions.metrics.clone(),
                in_flight,
                slot: Some(slot),
                status,
                request_id,
                view: summary.view,
                trace_id: summary.trace_id,
                started,
                has_body: false,
                aborted: false,
            }
            .head_ready(&conventions.settings.routes)
        };
        let failure = match outcome {
            Ok(Ok(response)) => {
                let mut code = None;
                let mut response = if response.status().as_u16() < 400 {
                    response.map_into_left_body()
                } else {
                    let error = api_error_for_response(
                        &response,
                        &summary.view,
                        &conventions.settings.routes,
                        &request_id,
                    );
                    code = Some(error.code());
                    let rendered = error.rendered(
                        &request_id,
                        conventions.settings.answers.doc_links.resolve(),
                    );
                    let (request, original) = response.into_parts();
                    ServiceResponse::new(request, rendered.into_response(original))
                        .map_into_right_body()
                };
                let answered = finish(response.response_mut().head_mut(), summary, code);
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
                    summary.view.method(),
                    crate::edge::view::path_for_log(summary.view.path())
                );
                ApiError::internal(message)
            }
        };
        // The request is gone (consumed by a failing service or dropped by the unwind), so
        // the answer travels as an error carrying its finished response.
        let mut response = failure.to_response(
            &request_id,
            conventions.settings.answers.doc_links.resolve(),
        );
        let answered = finish(response.head_mut(), summary, Some(failure.code()));
        let response = response.map_body(|_, body| BoxBody::new(Recorded::new(body, answered)));
        Err(InternalError::from_response(failure, response).into())
    })
}

impl WorkerConventions {
    /// The audit of a request for an operation marked `x-member-data`, its record begun;
    /// nothing for any other request.
    fn audit_of(&self, view: &RequestView, request_id: RequestId) -> Audit {
        let guarded = self
            .settings
            .routes
            .guarded(view.route(), view.method())
            .filter(|guarded| guarded.member_data);
        let Some(guarded) = guarded else {
            return Audit {
                members: Members::default(),
                record: None,
            };
        };
        let members = Members::audited_as(Arc::clone(&guarded.operation_id));
        // The ids its path carries, whatever becomes of it: a request refused before its
        // handler (its key, its quota, its input) names what it asked for all the same.
        if let Some(route) = view.route() {
            members.asked(self.settings.routes.path_ids(route, view.path()));
        }
        let key = view
            .caller()
            .named_key()
            .map(|key| (Arc::clone(&key.id), Arc::clone(&key.partner), key.test));
        let record = PendingRecord::new(
            &self.settings.audit,
            request_id,
            key,
            (
                Arc::clone(&guarded.operation_id),
                view.method().as_str(),
                crate::edge::view::path_for_log(view.path()),
            ),
            members.clone(),
            view.client(),
        );
        Audit {
            members,
            record: Some(record),
        }
    }

    /// The 429 for a request over its limit, finished here: it needs nothing the router or
    /// a handler would add, and nothing kept for later.
    fn refuse<B>(
        &self,
        request: ServiceRequest,
        view: RequestView,
        (request_id, audit): (RequestId, Audit),
        refused: Refused,
        started: Instant,
    ) -> ServiceResponse<Recorded<EitherBody<B, BoxBody>>> {
        let (retry_after_secs, quota) = match refused {
            Refused::Quota(refusal) => {
                if let Some(metrics) = &self.metrics {
                    metrics.refused(refusal.policy);
                }
                (refusal.retry_after_secs, Some(refusal.quota))
            }
            // A place frees as soon as one of the client's requests ends; the quota fields
            // would say nothing about it.
            Refused::InFlight => {
                if let Some(metrics) = &self.metrics {
                    metrics.refused_in_flight();
                }
                (1, None)
            }
        };
        let docs = self.settings.answers.doc_links.resolve();
        let mut response =
            Rendered::rate_limited(retry_after_secs, &request_id, docs).into_new_response();
        set_convention_headers(
            response.headers_mut(),
            &request_id,
            self.settings.answers.hsts.clone(),
            quota,
        );
        self.settings.routes.add_deprecation_headers(
            view.route(),
            view.method(),
            response.headers_mut(),
        );
        if let Some(record) = audit.record {
            record.answered(response.status().as_u16(), Some("rate_limited"));
        }
        // Recorded now, not when its body is done: a refusal's body is a few hundred bytes
        // handed over in one piece, and a flood of refusals is what the limiter exists to
        // make cheap (`scripts/soak panics` holds it to the cost of plain pings). Counted, but
        // kept out of the response-head histogram: answered before any work, a flood of
        // refusals would make the route look faster than the requests it served (the latency
        // objective reads that histogram).
        drop(Answered {
            metrics: self.metrics.clone(),
            in_flight: None,
            slot: None,
            status: response.status(),
            trace_id: trace_id_to_log(&request),
            request_id,
            view,
            started,
            has_body: false,
            aborted: false,
        });
        request
            .into_response(response)
            .map_into_right_body()
            .map_body(|_, body| Recorded::already(body))
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

/// What is kept of a request once the router takes it: its view and its trace id,
/// for the access line and for answering a failure.
struct RequestSummary {
    view: RequestView,
    trace_id: Option<TraceId>,
}
