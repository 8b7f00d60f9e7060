//! What a handler knows, as one argument: [`RequestContext<C>`], the request it serves as the
//! service decided it (its id, client and route, [`RequestInfo`], and its method and path as
//! the request's one view, `edge::view`, reads them) and what the endpoints mounted with it share (`C`: for the
//! API's endpoints `api::ApiContext`, built once by the app factory). It is dropshot's
//! `RequestContext<C>`: a handler reads `context.app().<part>`, a field, so a part that does
//! not exist is a compile error, and `edge::mount` admits a handler only where the app factory
//! installs its `C`, so the context cannot be missing when a request arrives.
//!
//! Every log line written while the request's handler runs carries the request id: the
//! conventions middleware polls the handler's future inside [`InContext`], which makes the
//! request's [`RequestInfo`] the current one of its thread for the duration of each poll, and
//! the logger reads it. Code on another thread (the blocking pool) has no current request: it
//! logs with the context it was handed, `context.request_id()`.

use std::cell::RefCell;
use std::future::{Future, Ready, ready};
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use actix_web::dev::Payload;
use actix_web::http::Method;
use actix_web::{FromRequest, HttpRequest, web};

use super::view::routed_path;
use crate::audit::Members;
use crate::auth::store::PartnerKey;
use crate::errors::ApiError;
use crate::request_id::RequestId;

/// One request as the service decided it, what every log line written for it needs: its id,
/// its client and its route, and, when it carried a key in force, the key (its id and
/// partner), and the members it touched when its operation is audited. It is
/// `#[non_exhaustive]` and read through methods, so a new part breaks no caller.
/// Cloning it copies the id and counts one more reference to the route's template; it can be
/// sent to another thread.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RequestInfo {
    request_id: RequestId,
    client: Option<IpAddr>,
    route: Option<Arc<str>>,
    key: Option<Arc<PartnerKey>>,
    members: Members,
}

impl RequestInfo {
    /// The request with id `request_id`, from `client` (when known), taken by the route with
    /// template `route` (`/v1/things/{thing}`), or by none.
    pub fn new(request_id: RequestId, client: Option<IpAddr>, route: Option<Arc<str>>) -> Self {
        RequestInfo {
            request_id,
            client,
            route,
            key: None,
            members: Members::default(),
        }
    }

    /// The same request, carrying `key` (the key in force it was sent with) and `members`
    /// (where its handler lists the members it touches, when the operation is audited).
    pub fn with_caller(mut self, key: Option<Arc<PartnerKey>>, members: Members) -> Self {
        self.key = key;
        self.members = members;
        self
    }

    /// The key in force the request carried, if any.
    pub fn key(&self) -> Option<&PartnerKey> {
        self.key.as_deref()
    }

    /// The request's id, as in its `Service-Request-Id` header.
    pub fn request_id(&self) -> RequestId {
        self.request_id
    }

    /// The client's address: the socket's peer, or what the trusted proxy's header says.
    pub fn client(&self) -> Option<IpAddr> {
        self.client
    }

    /// The template of the route that took the request (`/v1/ping`), as the metrics label
    /// it; `None` for a request no route took.
    pub fn route(&self) -> Option<&str> {
        self.route.as_deref()
    }

    /// The request whose handler this thread is running now, if any.
    pub fn current() -> Option<RequestInfo> {
        CURRENT.try_with(|current| current.borrow().clone()).ok()?
    }

    /// Runs `f` with the id of the current request, if there is one, without cloning it:
    /// what the logger calls for every line.
    pub fn with_current_id<T>(f: impl FnOnce(Option<&RequestId>) -> T) -> T {
        let mut f = Some(f);
        let answer = CURRENT.try_with(|current| {
            // A line logged while the request is being swapped (never, today) goes without.
            let current = current.try_borrow().ok();
            let id = current
                .as_deref()
                .and_then(|info| info.as_ref().map(|info| &info.request_id));
            (f.take().expect("called once"))(id)
        });
        match answer {
            Ok(answer) => answer,
            // The thread is being torn down: no request runs on it any more.
            Err(_) => (f.take().expect("not called yet"))(None),
        }
    }
}

/// What a handler receives: its request ([`RequestInfo`], with its method and path) and what
/// the endpoints mounted with it share (`C`); see the module documentation. It can be sent to
/// another thread when `C` can (the blocking pool: log with its `request_id()` there).
#[derive(Debug)]
pub struct RequestContext<C: ?Sized> {
    request: RequestInfo,
    method: Method,
    path: Box<str>,
    app: web::Data<C>,
}

impl<C: ?Sized> RequestContext<C> {
    /// The request's id, as in its `Service-Request-Id` header.
    pub fn request_id(&self) -> RequestId {
        self.request.request_id
    }

    /// The client's address: the socket's peer, or what the trusted proxy's header says.
    pub fn client(&self) -> Option<IpAddr> {
        self.request.client
    }

    /// The template of the route that took the request (`/v1/things/{thing}`).
    pub fn route(&self) -> Option<&str> {
        self.request.route()
    }

    /// The request's method (`HEAD` for a `HEAD` served by a `GET` handler).
    pub fn method(&self) -> &Method {
        &self.method
    }

    /// The path as the request's view decided it: decoded and matched by the router
    /// (`/v1/things/thing_0001` for `/v1/things/thing%5F0001`). It may hold any byte a client
    /// percent-encoded: log it with `edge::view::path_for_log`.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What the endpoints share (`api::ApiContext` for the API's own).
    pub fn app(&self) -> &C {
        &self.app
    }

    /// The partner whose key the request carried (`pt_...`): always there for an operation
    /// that needs a key, which is answered 401 or 403 before its handler runs otherwise. What
    /// a handler scopes the data it reads and changes by.
    pub fn partner(&self) -> Option<&str> {
        self.request.key.as_ref().map(|key| &*key.partner)
    }

    /// The id of the key the request carried (`ky_...`), for what the handler records.
    pub fn key_id(&self) -> Option<&str> {
        self.request.key.as_ref().map(|key| &*key.id)
    }

    /// Whether the request's key is a test key (`pak_test_...`): it reaches only test data,
    /// the rows its partner's test keys wrote, never a live one (and a live key never a test
    /// row). `false` without a key.
    pub fn is_test(&self) -> bool {
        self.request.key.as_ref().is_some_and(|key| key.test)
    }

    /// Names the members whose data the handler read or changed, for the request's audit
    /// record (`audit`); a no-op for an operation that is not audited.
    pub fn audit_members<I: IntoIterator<Item = S>, S: AsRef<str>>(&self, ids: I) {
        self.request.members.add(ids);
    }

    /// The request's audit record as it stands, answered `status` (and `code`, for an error):
    /// what a store writes in the transaction that reads or changes member data, so that none
    /// is served or changed without it; `None` when the operation is not audited. A record
    /// that cannot be written is an internal error, never a request without its record.
    pub fn audit_record(
        &self,
        status: u16,
        code: Option<&str>,
    ) -> Result<Option<serde_json::Value>, ApiError> {
        let Some((operation, members)) = self.request.members.so_far() else {
            return Ok(None);
        };
        let key = self.request.key.as_deref();
        let record = crate::audit::AuditRecord {
            time: crate::audit::now(),
            request_id: self.request.request_id.as_str(),
            key_id: key.map(|key| &*key.id),
            partner: key.map(|key| &*key.partner),
            livemode: key.map(|key| !key.test),
            operation: &operation,
            method: self.method.as_str(),
            path: &crate::audit::bounded_path(super::view::path_for_log(&self.path)),
            members,
            status: Some(status),
            code,
            client: self.request.client.map(|client| client.to_string()),
        };
        serde_json::to_value(record)
            .map(Some)
            .map_err(|error| ApiError::internal(format!("an audit record: {error}")))
    }

    /// The 404 of a thing of `kind` whose `id` names nothing: `No such programme: 'pr_0042'
    /// (GET /v1/programmes/pr_0042).`
    pub fn no_such(&self, kind: &str, id: &str) -> ApiError {
        ApiError::no_such(kind, id, &self.method, &self.path)
    }

    /// The request, to hand to what runs on for it: a spawned task polled in
    /// [`InContext`] logs with its id.
    pub fn request(&self) -> &RequestInfo {
        &self.request
    }
}

impl<C: ?Sized> Clone for RequestContext<C> {
    fn clone(&self) -> Self {
        RequestContext {
            request: self.request.clone(),
            method: self.method.clone(),
            path: self.path.clone(),
            app: self.app.clone(),
        }
    }
}

impl<C: ?Sized + 'static> FromRequest for RequestContext<C> {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        // Extractors run inside the handler's future, which the middleware polls with its
        // request current, and `edge::mount` admits this argument only where the app factory
        // installs `C`. Neither can be missing; were the app built otherwise, the answer is an
        // internal error with the cause in the log, never a panic. The method and path are
        // taken here, for the handlers that ask, as the view took them (`view::routed_path`).
        let current = RequestInfo::current();
        let app = request.app_data::<web::Data<C>>().cloned();
        ready(match (current, app) {
            (Some(info), Some(app)) => Ok(RequestContext {
                request: info,
                method: request.method().clone(),
                path: Box::from(routed_path(request)),
                app,
            }),
            (None, _) => Err(ApiError::internal("the request has no context")),
            (_, None) => Err(ApiError::internal(format!(
                "no context of type {} was installed",
                std::any::type_name::<C>()
            ))),
        })
    }
}

thread_local! {
    static CURRENT: RefCell<Option<RequestInfo>> = const { RefCell::new(None) };
}

/// Exchanges `slot` with the thread's current request.
fn swap_current(slot: &mut Option<RequestInfo>) {
    let _ = CURRENT.try_with(|current| std::mem::swap(&mut *current.borrow_mut(), slot));
}

pin_project_lite::pin_project! {
    /// A handler's future, polled with its request as the thread's current one.
    pub struct InContext<F> {
        #[pin]
        future: F,
        // The request while the future is not being polled; during a poll, the request that
        // was current before (it is exchanged with the thread's, and back).
        request: Option<RequestInfo>,
    }
}

impl<F: Future> InContext<F> {
    pub fn new(request: RequestInfo, future: F) -> Self {
        InContext {
            future,
            request: Some(request),
        }
    }
}

impl<F: Future> Future for InContext<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        // Exchanged back on the way out, panics included, so that a request is current only
        // while its own future is polled (a nested one's inside it, then its own again). An
        // exchange, not a copy: nothing is allocated or counted per poll.
        struct Restore<'a>(&'a mut Option<RequestInfo>);
        impl Drop for Restore<'_> {
            fn drop(&mut self) {
                swap_current(self.0);
            }
        }
        swap_current(this.request);
        let _restore = Restore(this.request);
        this.future.poll(cx)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A request with id `RequestId::EXAMPLE`, taken by `/v1/ping`.
    pub(crate) fn example() -> RequestInfo {
        RequestInfo::new(RequestId::EXAMPLE, None, Some(Arc::from("/v1/ping")))
    }

    #[test]
    fn the_request_is_current_only_while_its_future_is_polled() {
        let mut seen = None;
        let future = InContext::new(example(), async {
            seen = RequestInfo::current()
                .map(|info| (info.request_id(), info.route().map(String::from)));
        });
        assert!(RequestInfo::current().is_none());
        futures_util::FutureExt::now_or_never(future).unwrap();
        assert_eq!(
            seen,
            Some((RequestId::EXAMPLE, Some("/v1/ping".to_owned())))
        );
        assert!(RequestInfo::current().is_none());
        RequestInfo::with_current_id(|id| assert!(id.is_none()));
    }
}
