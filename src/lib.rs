//! partner-api: the HTTP API through which doctors, clinics, pharmacies and medical companies
//! connect their systems to the training and lifestyle programme. The library owns everything;
//! `main.rs` only parses the command line and calls in here, so tests build exactly the app
//! that production runs.

// The endpoints, one module each, and `register`, the list of them.
pub mod api;
// Who the client is: the peer address, or the one trusted proxies forwarded.
pub mod client;
// Flags, environment variables, defaults and their validation.
pub mod config;
// The request-conventions middleware: request id, headers, limits, error bodies, access line.
pub mod conventions;
// What is served beside the API: the reference, the error pages, the changelog, the documents.
pub mod docs;
// The error catalogue, `ApiError`, and an error as the client receives it.
pub mod errors;
// `Query<T>` and `Body<T>`: an endpoint's input, parsed strictly.
pub mod extract;
// The `healthcheck` subcommand.
pub mod healthcheck;
// What operators see: logs, metrics, the admin listener.
pub mod observability;
// The OpenAPI document and its 3.0.3 rendition.
pub mod openapi;
// Per-client rate limits and their stores.
pub mod rate_limit;
// `req_<hex>` request ids.
pub mod request_id;
// The machinery endpoints are mounted with, and the route table behind 404 and 405.
pub mod routes;
// The app factory and the running server: binding, workers, graceful shutdown.
pub mod startup;
// HTTPS: certificates, their checks and rotation.
pub mod tls;
