//! What is recorded of each answered request, once its response's last byte has been handed
//! to the connection (or the connection dropped it): its access line and its metrics. The
//! response head's time is recorded as soon as the head is ready.

use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Instant;

use actix_web::body::{BodySize, MessageBody};
use actix_web::http::StatusCode;
use actix_web::web::Bytes;

use crate::edge::routes::RouteTable;
use crate::edge::view::RequestView;
use crate::observability::logging::{self, AccessRecord};
use crate::observability::metrics::{InFlight, WorkerMetrics};
use crate::observability::trace_context::TraceId;
use crate::rate_limit::in_flight::WorkerSlot;
use crate::request_id::RequestId;

/// A response body that records its request when the last byte has been handed to the
/// connection, or when the connection drops it unfinished (the client went away): the access
/// line and the metrics' duration then cover the whole answer, a slow reader's included, and
/// the request counts as in flight until then. The app's body is a `BoxBody`, so `Unpin`.
pub struct Recorded<B> {
    body: B,
    /// Taken (and so recorded) at the end of the body, or with the body when it is dropped.
    /// Boxed: a response is moved through several futures, each of which holds it inline
    /// (under HTTP/2, in every open stream's task), and `Answered` is most of its size
    /// (BENCHMARKS.md, "Peak memory under the HTTPS loads").
    answered: Option<Box<Answered>>,
}

impl<B> Recorded<B> {
    /// A body whose request was recorded already.
    pub(super) fn already(body: B) -> Self {
        Recorded {
            body,
            answered: None,
        }
    }
}

impl<B: MessageBody> Recorded<B> {
    pub(super) fn new(body: B, mut answered: Answered) -> Self {
        answered.has_body = answered.view.method() != actix_web::http::Method::HEAD
            && !matches!(body.size(), BodySize::None | BodySize::Sized(0));
        Recorded {
            body,
            answered: Some(Box::new(answered)),
        }
    }
}

/// Dropped with its request not yet recorded: the connection let go of the response before
/// its last byte (the client went away, or read nothing within the send deadline). A body the
/// connection never needed to poll (empty, or the answer to `HEAD`) was handed over whole.
impl<B> Drop for Recorded<B> {
    fn drop(&mut self) {
        if let Some(answered) = &mut self.answered {
            answered.aborted = answered.has_body;
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
pub(super) struct Answered {
    pub(super) metrics: Option<Rc<WorkerMetrics>>,
    pub(super) in_flight: Option<InFlight>,
    /// The request's place under its client's in-flight ceiling.
    pub(super) slot: Option<WorkerSlot>,
    pub(super) status: StatusCode,
    pub(super) request_id: RequestId,
    pub(super) view: RequestView,
    pub(super) trace_id: Option<TraceId>,
    pub(super) started: Instant,
    /// The response has bytes of body for the connection to send (set by [`Recorded::new`]).
    pub(super) has_body: bool,
    /// Its body was dropped before the last byte ([`Recorded`]'s `Drop`).
    pub(super) aborted: bool,
}

impl Answered {
    /// The response head is ready: the service's own time goes into the head histogram now
    /// (the latency objective's measure, which a client that reads slowly, or opens no HTTP/2
    /// window at all, cannot stretch); the rest is recorded when the body is done.
    pub(super) fn head_ready(self, routes: &RouteTable) -> Self {
        // Only a method a route serves: the time of a 404, or of any answer to a method the
        // route does not have, says nothing about a route, and would add series of no use.
        // (A refusal never comes here: see `refuse`.)
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
            if self.aborted {
                metrics.aborted();
            }
        }
        // Out of flight once recorded, so that a scrape never sees neither.
        self.in_flight = None;
        self.slot = None;
        if log {
            logging::write_access(&AccessRecord {
                request_id: &self.request_id,
                client: view.client(),
                method: view.method().as_str(),
                path: view.path(),
                status,
                micros,
                trace_id: self.trace_id.as_ref(),
                aborted: self.aborted,
            });
        }
    }
}
