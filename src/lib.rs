//! partner-api: the HTTP API through which doctors, clinics, pharmacies and medical companies
//! connect their systems to the training and lifestyle programme. The library owns everything;
//! `main.rs` only parses the command line and calls in here, so tests build exactly the app
//! that production runs.

pub mod api;
pub mod client;
pub mod config;
pub mod conventions;
pub mod docs;
pub mod errors;
pub mod extract;
pub mod healthcheck;
pub mod observability;
pub mod openapi;
pub mod rate_limit;
pub mod request_id;
pub mod routes;
pub mod startup;
pub mod tls;
