//! partner-api: the HTTP API through which doctors, clinics, pharmacies and medical companies
//! connect their systems to the training and lifestyle programme. The library owns everything;
//! `main.rs` only parses the command line and calls in here, so tests build exactly the app
//! that production runs. Each module below imports only modules listed before it, so none
//! imports one that imports it back (a test holds the order).

// `req_<hex>` request ids.
pub mod request_id;
// Partner keys masked in what the service writes out (messages, access lines, audit records).
pub mod redact;
// The error catalogue, `ApiError`, and an error as the client receives it.
pub mod errors;
// Partner keys: their text, the file of issued keys, the operator's commands, who a request is.
pub mod auth;
// The audit trail of requests for member data, on a sink of its own.
pub mod audit;
// Where member data is kept: this process, or PostgreSQL; its schema and migrations.
pub mod database;
// The HTTP edge: TLS, who the client is, an endpoint's input and context, mounting, routes.
#[macro_use]
pub mod edge;
// The endpoints, one module each, the list of them and what they share.
pub mod api;
// Per-client rate limits and their stores.
pub mod rate_limit;
// What operators see: logs, metrics, the partner's trace id.
pub mod observability;
// The request-conventions middleware: request id, headers, limits, error bodies, access line.
pub mod conventions;
// The OpenAPI document and its 3.0.3 rendition.
pub mod openapi;
// What is served beside the API: the reference, the error pages, the changelog, the documents.
pub mod docs;
// Running the service: settings, the app factory and server, the admin listener, healthcheck.
pub mod server;
