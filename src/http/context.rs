//! What a handler, and the code it calls, knows about the request it serves: its id, its
//! client and its route, from the request's one view (`http::view`). The conventions
//! middleware builds the context once, after the rate limit admitted the request; a handler
//! takes it as an argument ([`RequestContext`] is an extractor) and passes it on to what it
//! calls, or reads it with [`RequestContext::current`].
//!
//! Every log line written while the request's handler runs carries the request id: the
//! middleware polls the handler's future inside [`InContext`], which makes the context the
//! current one of its thread for the duration of each poll, and the logger reads it. Code on
//! another thread (the blocking pool) has no current context: it logs with the context it was
//! handed, `context.request_id()`.

use std::cell::RefCell;
use std::future::{Future, Ready, ready};
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};

use crate::errors::ApiError;
use crate::request_id::RequestId;

/// One request as the service decided it; see the module documentation. A partner's
/// identity joins it once API keys exist: it is `#[non_exhaustive]` and read through methods,
/// so that adds a method and breaks no caller. Cloning it copies the id and counts one more
/// reference to the route's template; it can be sent to another thread.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RequestContext {
    request_id: RequestId,
    client: Option<IpAddr>,
    route: Option<Arc<str>>,
}

impl RequestContext {
    /// The context of a request with id `request_id`, from `client` (when known), taken by
    /// the route with template `route` (`/v1/things/{thing}`), or by none.
    pub fn new(request_id: RequestId, client: Option<IpAddr>, route: Option<Arc<str>>) -> Self {
        RequestContext {
            request_id,
            client,
            route,
        }
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

    /// The context of the request whose handler this thread is running now, if any.
    pub fn current() -> Option<RequestContext> {
        CURRENT.try_with(|current| current.borrow().clone()).ok()?
    }

    /// Runs `f` with the id of the current request, if there is one, without cloning it:
    /// what the logger calls for every line.
    pub fn with_current_id<T>(f: impl FnOnce(Option<&RequestId>) -> T) -> T {
        let mut f = Some(f);
        let answer = CURRENT.try_with(|current| {
            // A line logged while the context is being swapped (never, today) goes without.
            let current = current.try_borrow().ok();
            let id = current
                .as_deref()
                .and_then(|context| context.as_ref().map(|context| &context.request_id));
            (f.take().expect("called once"))(id)
        });
        match answer {
            Ok(answer) => answer,
            // The thread is being torn down: no request runs on it any more.
            Err(_) => (f.take().expect("not called yet"))(None),
        }
    }
}

thread_local! {
    static CURRENT: RefCell<Option<RequestContext>> = const { RefCell::new(None) };
}

/// Exchanges `slot` with the thread's current context.
fn swap_current(slot: &mut Option<RequestContext>) {
    let _ = CURRENT.try_with(|current| std::mem::swap(&mut *current.borrow_mut(), slot));
}

pin_project_lite::pin_project! {
    /// A handler's future, polled with its request's context as the thread's current one.
    pub struct InContext<F> {
        #[pin]
        future: F,
        // The context while the future is not being polled; during a poll, the context that
        // was current before (it is exchanged with the thread's, and back).
        context: Option<RequestContext>,
    }
}

impl<F: Future> InContext<F> {
    pub fn new(context: RequestContext, future: F) -> Self {
        InContext {
            future,
            context: Some(context),
        }
    }
}

impl<F: Future> Future for InContext<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        // Exchanged back on the way out, panics included, so that a context is current only
        // while its own future is polled (a nested one's inside it, then its own again). An
        // exchange, not a copy: nothing is allocated or counted per poll.
        struct Restore<'a>(&'a mut Option<RequestContext>);
        impl Drop for Restore<'_> {
            fn drop(&mut self) {
                swap_current(self.0);
            }
        }
        swap_current(this.context);
        let _restore = Restore(this.context);
        this.future.poll(cx)
    }
}

impl FromRequest for RequestContext {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(_: &HttpRequest, _: &mut Payload) -> Self::Future {
        // Extractors run inside the handler's future, which the middleware polls in its
        // context. Without one, the app was built wrong: an internal error, never a guess.
        ready(
            RequestContext::current()
                .ok_or_else(|| ApiError::internal("the request has no context".to_owned())),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_is_current_only_while_its_future_is_polled() {
        let context = RequestContext::new(RequestId::EXAMPLE, None, Some(Arc::from("/v1/ping")));
        let mut seen = None;
        let future = InContext::new(context, async {
            seen = RequestContext::current().map(|context| context.request_id());
        });
        assert!(RequestContext::current().is_none());
        futures_util::FutureExt::now_or_never(future).unwrap();
        assert_eq!(seen, Some(RequestId::EXAMPLE));
        assert!(RequestContext::current().is_none());
        RequestContext::with_current_id(|id| assert!(id.is_none()));
    }
}
