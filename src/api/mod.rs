//! The API's endpoints, one module each. A handler is an `async fn` named after its
//! `operationId`, annotated with `#[utoipa::path]` and an actix-web route macro, and reads its
//! input only through `extract::Query` and `extract::Body` with types of its own. It is
//! registered in `routes::register`, which gives it the request conventions, the 404/405
//! handling and its place in the OpenAPI document.

pub mod ping;
