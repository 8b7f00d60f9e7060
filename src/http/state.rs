//! What endpoints share across requests and workers: stores, clients, pools. The app factory
//! builds one [`AppState`] before the workers start (`server::startup`), from the settings;
//! the one registration function (`api::register`) installs it in the app, so every worker's
//! handlers reach the same values, and tests build their app through the same function with
//! their own values. A handler reads a value with [`State<T>`], as it reads its input with
//! `Query<T>` and `Body<T>`.
//!
//! Today's one endpoint needs none, so production's state is empty; the first endpoint with a
//! store adds it where the app factory builds the state (`AppState::default().with(store)`).

use std::future::{Ready, ready};
use std::ops::Deref;
use std::sync::Arc;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest, web};
use utoipa_actix_web::service_config::ServiceConfig;

use crate::errors::ApiError;

/// The values endpoints share, each reachable by its type; see the module documentation.
#[derive(Clone, Default)]
pub struct AppState {
    installers: Vec<Installer>,
}

/// Installs one shared value in an app (each worker's app installs the same one).
type Installer = Arc<dyn Fn(&mut ServiceConfig) + Send + Sync>;

impl AppState {
    /// Adds `value`, which handlers then read as `State<T>`. One value per type: a second of
    /// the same type hides the first.
    pub fn with<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        let shared = web::Data::new(value);
        self.installers.push(Arc::new(move |config| {
            config.app_data(shared.clone());
        }));
        self
    }

    /// Makes every value reachable from the handlers mounted on `config`'s app.
    pub fn install(&self, config: &mut ServiceConfig) {
        for install in &self.installers {
            install(config);
        }
    }
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AppState({} values)", self.installers.len())
    }
}

/// A shared value of type `T` from the app's state.
#[derive(Debug)]
pub struct State<T: ?Sized>(web::Data<T>);

impl<T: ?Sized> Deref for State<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized> Clone for State<T> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

impl<T: ?Sized + 'static> FromRequest for State<T> {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        // A handler asking for state the app was not built with is a bug in the app factory,
        // answered as an internal error (logged with its cause), never with actix-web's text.
        ready(
            request
                .app_data::<web::Data<T>>()
                .cloned()
                .map(State)
                .ok_or_else(|| {
                    ApiError::internal(format!(
                        "no state of type {} was installed",
                        std::any::type_name::<T>()
                    ))
                }),
        )
    }
}
