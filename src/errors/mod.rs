//! Errors as the contract defines them. `catalogue.rs` is the table of every code (status,
//! `type`, message, when it happens, what a client should do); [`ApiError`] is the error every
//! handler, extractor and middleware returns; `render.rs` turns one into the response a client
//! receives (only [`ApiError::to_response`] and [`Rendered`] do); `schema.rs` is the error body
//! as the OpenAPI document publishes it.

mod api_error;
mod catalogue;
mod render;
mod schema;

pub use api_error::ApiError;
pub use catalogue::{CodeSpec, ErrorCode, ErrorType};
pub use render::{DocsOrigin, Rendered};
pub use schema::{ErrorEnvelope, ErrorObject, code_schema};
