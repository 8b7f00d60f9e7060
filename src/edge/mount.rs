//! Mounting endpoints, one line each: `mount!(mount, programmes::list_programmes)` mounts the
//! handler at the path and for the methods its `#[utoipa::path]` documents (HEAD wherever
//! GET), and adds its operation to the OpenAPI document, through the one registration the
//! route table, 404 and 405 are built from (`edge::routes`).
//!
//! [`Mount<C>`] mounts handlers whose shared context is `C` (`api::ApiContext` for the API's
//! endpoints): it admits a handler only if each of its arguments is one of the service's own
//! extractors ([`ArgumentOf`]): `Path`, `Query` and `Body` from `edge::extract`,
//! `IdempotencyKey` from `edge::header`, and
//! `RequestContext<C>` of this very `C`, which the app factory always installs. So a handler
//! that asks for a context the app does not have, or for the raw `HttpRequest`, or for a
//! framework extractor whose errors are not the contract's, does not compile.
//!
//! [`Endpoints<C>`] is a set of endpoints as the app factory and the document generator take
//! it: the function that mounts them, what the reference says of their tags, and which of
//! their operations are deprecated.
//!
//! A handler of the API, mounted in one line:
//!
//! ```
//! use partner_api::api::ApiContext;
//! use partner_api::edge::context::RequestContext;
//! use partner_api::edge::extract::{Body, NoBody, NoQuery, Query};
//! use partner_api::edge::mount::Mount;
//!
//! /// Answer
//! #[utoipa::path(get, path = "/v1/answers", responses((status = 200, description = "42")))]
//! async fn answer(
//!     _context: RequestContext<ApiContext>,
//!     _query: Query<NoQuery>,
//!     _body: Body<NoBody>,
//! ) -> &'static str {
//!     "42"
//! }
//!
//! fn mount(mount: &mut Mount<'_, '_, ApiContext>) {
//!     partner_api::mount!(mount, answer);
//! }
//! ```
//!
//! The same handler asking for the raw request does not compile:
//!
//! ```compile_fail,E0277
//! # use partner_api::api::ApiContext;
//! # use partner_api::edge::extract::{Body, NoBody, NoQuery, Query};
//! # use partner_api::edge::mount::Mount;
//! /// Answer
//! #[utoipa::path(get, path = "/v1/answers", responses((status = 200, description = "42")))]
//! async fn answer(
//!     _request: actix_web::HttpRequest,
//!     _query: Query<NoQuery>,
//!     _body: Body<NoBody>,
//! ) -> &'static str {
//!     "42"
//! }
//!
//! fn mount(mount: &mut Mount<'_, '_, ApiContext>) {
//!     partner_api::mount!(mount, answer);
//! }
//! ```
//!
//! Nor does it asking for a context the endpoints it is mounted with do not share:
//!
//! ```compile_fail,E0277
//! # use partner_api::api::ApiContext;
//! # use partner_api::edge::context::RequestContext;
//! # use partner_api::edge::extract::{Body, NoBody, NoQuery, Query};
//! # use partner_api::edge::mount::Mount;
//! struct SomeStore;
//!
//! /// Answer
//! #[utoipa::path(get, path = "/v1/answers", responses((status = 200, description = "42")))]
//! async fn answer(
//!     _context: RequestContext<SomeStore>,
//!     _query: Query<NoQuery>,
//!     _body: Body<NoBody>,
//! ) -> &'static str {
//!     "42"
//! }
//!
//! fn mount(mount: &mut Mount<'_, '_, ApiContext>) {
//!     partner_api::mount!(mount, answer);
//! }
//! ```

use std::marker::PhantomData;

use actix_web::dev::{AppService, HttpServiceFactory};
use actix_web::{FromRequest, Handler, Responder};
use utoipa_actix_web::OpenApiFactory;
use utoipa_actix_web::service_config::ServiceConfig;

use super::context::RequestContext;
use super::deprecation::Deprecation;
use super::extract::{Body, Path, Query};
use super::header::IdempotencyKey;
use super::routes;

#[doc(hidden)]
pub use pastey::paste;

/// Mounts `handler` (a path to an `async fn` annotated with `#[utoipa::path]`) on `mount`, a
/// [`Mount`]: `mount!(mount, ping::ping)`. See the module documentation.
#[macro_export]
macro_rules! mount {
    // The last segment is the handler; what comes before it, its module path.
    (@split $mount:expr, [$($module:ident)*] $handler:ident) => {
        $crate::edge::mount::paste! {
            $mount.endpoint($($module::)* [<__path_ $handler>], $($module::)* $handler)
        }
    };
    (@split $mount:expr, [$($module:ident)*] $next:ident $($rest:ident)+) => {
        $crate::mount!(@split $mount, [$($module)* $next] $($rest)+)
    };
    ($mount:expr, $($segment:ident)::+ $(,)?) => {
        $crate::mount!(@split $mount, [] $($segment)+)
    };
}

/// Where endpoints sharing context `C` are mounted; see the module documentation.
pub struct Mount<'config, 'app, C: ?Sized> {
    config: &'config mut ServiceConfig<'app>,
    context: PhantomData<fn(&C)>,
}

impl<'config, 'app, C: ?Sized + 'static> Mount<'config, 'app, C> {
    /// Endpoints mounted on `config`, whose app must install a `web::Data<C>`: the app factory
    /// and the document generator (whose app serves nothing) are its only callers.
    pub(crate) fn new(config: &'config mut ServiceConfig<'app>) -> Self {
        Mount {
            config,
            context: PhantomData,
        }
    }

    /// Mounts `handler` as `documented` (its `#[utoipa::path]`) describes it. Called through
    /// [`mount!`], which names both from the handler's name; called by hand, it could pair one
    /// handler with another's documentation, so it is not part of the documented interface.
    #[doc(hidden)]
    pub fn endpoint<D, F, Args>(&mut self, documented: D, handler: F) -> &mut Self
    where
        D: utoipa::Path + OpenApiFactory + 'static,
        F: Handler<Args>,
        Args: FromRequest + ArgumentsOf<C> + 'static,
        F::Output: Responder + 'static,
    {
        self.config.service(Endpoint {
            documented,
            handler,
            arguments: PhantomData,
        });
        self
    }
}

/// One mounted handler: actix-web's service for the router, utoipa's operation for the
/// document, both from the same annotation.
struct Endpoint<D, F, Args> {
    documented: D,
    handler: F,
    arguments: PhantomData<fn(Args)>,
}

impl<D, F, Args> HttpServiceFactory for Endpoint<D, F, Args>
where
    D: utoipa::Path,
    F: Handler<Args>,
    Args: FromRequest + 'static,
    F::Output: Responder + 'static,
{
    fn register(self, config: &mut AppService) {
        routes::resource::<D>().to(self.handler).register(config);
    }
}

impl<D: OpenApiFactory, F, Args> OpenApiFactory for Endpoint<D, F, Args> {
    fn paths(&self) -> utoipa::openapi::path::Paths {
        self.documented.paths()
    }

    fn schemas(
        &self,
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        self.documented.schemas(schemas);
    }
}

/// The arguments listed here and no others: no crate outside this one can add a type to
/// [`ArgumentOf`].
mod sealed {
    pub trait Sealed<C: ?Sized> {}
}

/// An argument a handler mounted with context `C` may take; see the module documentation.
/// It is sealed: only the types below are.
#[diagnostic::on_unimplemented(
    message = "a handler mounted with context `{C}` cannot take `{Self}`",
    note = "a handler reads its input through `edge::extract::{{Path, Query, Body}}` and its \
            request and what it shares through `RequestContext<{C}>`"
)]
pub trait ArgumentOf<C: ?Sized>: sealed::Sealed<C> {}

impl<C: ?Sized> sealed::Sealed<C> for RequestContext<C> {}
impl<C: ?Sized, T> sealed::Sealed<C> for Path<T> {}
impl<C: ?Sized, T> sealed::Sealed<C> for Query<T> {}
impl<C: ?Sized, T> sealed::Sealed<C> for Body<T> {}
impl<C: ?Sized> sealed::Sealed<C> for IdempotencyKey {}
impl<C: ?Sized> ArgumentOf<C> for IdempotencyKey {}
impl<C: ?Sized> ArgumentOf<C> for RequestContext<C> {}
impl<C: ?Sized, T> ArgumentOf<C> for Path<T> {}
impl<C: ?Sized, T> ArgumentOf<C> for Query<T> {}
impl<C: ?Sized, T> ArgumentOf<C> for Body<T> {}

/// A handler's arguments, each an [`ArgumentOf<C>`].
pub trait ArgumentsOf<C: ?Sized> {}

macro_rules! arguments_of {
    ($($argument:ident),*) => {
        impl<C: ?Sized, $($argument: ArgumentOf<C>),*> ArgumentsOf<C> for ($($argument,)*) {}
    };
}

arguments_of!();
arguments_of!(A);
arguments_of!(A, B);
arguments_of!(A, B, D);
arguments_of!(A, B, D, E);
arguments_of!(A, B, D, E, G);
arguments_of!(A, B, D, E, G, H);

/// A set of endpoints sharing context `C`; see the module documentation.
pub struct Endpoints<C: ?Sized + 'static> {
    /// Mounts every endpoint of the set, one `mount!` line each.
    pub mount: fn(&mut Mount<'_, '_, C>),
    /// What the reference says of each tag the set's endpoints declare
    /// (`#[utoipa::path(tag = ...)]`); a tag in use without its line fails a test.
    pub tags: &'static [(&'static str, &'static str)],
    /// The set's deprecated operations, by `operationId`.
    pub deprecations: &'static [Deprecation],
}

impl<C: ?Sized + 'static> Endpoints<C> {
    /// No endpoints at all.
    pub const NONE: Endpoints<C> = Endpoints {
        mount: |_| {},
        tags: &[],
        deprecations: &[],
    };

    /// Mounts the set on `config`.
    pub(crate) fn mount_on(&self, config: &mut ServiceConfig<'_>) {
        (self.mount)(&mut Mount::new(config));
    }
}

impl<C: ?Sized> Clone for Endpoints<C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C: ?Sized> Copy for Endpoints<C> {}
