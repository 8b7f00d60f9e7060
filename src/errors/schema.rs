//! The error body as the OpenAPI document publishes it: [`ErrorEnvelope`] and [`ErrorObject`],
//! and the schemas of the `code` and `type` fields, generated from the catalogue.

use serde::Serialize;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

use super::catalogue::{ErrorCode, ErrorType};

/// The `code` schema of the OpenAPI document, generated from the catalogue: a string, not an
/// enum, because generated clients reject enum values they were not built with and new codes
/// are an additive change (PARTNERS.md, "What v1 promises"). The known codes are listed in the
/// description and as examples; a new code appears by being added to [`ErrorCode::ALL`].
impl PartialSchema for ErrorCode {
    fn schema() -> RefOr<Schema> {
        code_schema(&ErrorCode::ALL)
    }
}

/// The `code` schema listing `codes`: a document lists the codes its operations can answer
/// (and `resource_missing`, any unknown path's), so a code only an endpoint still unpublished
/// answers stays out of it.
pub fn code_schema(codes: &[ErrorCode]) -> RefOr<Schema> {
    {
        let listing: Vec<String> = ErrorCode::ALL
            .iter()
            .filter(|code| codes.contains(code))
            .map(|code| {
                let spec = code.spec();
                format!(
                    "- `{}` ({}): {}",
                    spec.code,
                    spec.status.as_u16(),
                    spec.when
                )
            })
            .collect();
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some("^[a-z][a-z_]*$"))
            .description(Some(format!(
                "Machine-readable error code, an open set: new codes are added under the \
                 existing types without a new API version, so a client treats a code it does not \
                 know by its `type`. The codes today:\n\n{}",
                listing.join("\n")
            )))
            .examples(
                ErrorCode::ALL
                    .iter()
                    .filter(|code| codes.contains(code))
                    .map(|code| code.as_str()),
            )
            .into()
    }
}

impl ToSchema for ErrorCode {}

/// The `type` enum of the OpenAPI document, generated from [`ErrorType::ALL`].
impl PartialSchema for ErrorType {
    fn schema() -> RefOr<Schema> {
        let listing: Vec<String> = ErrorType::ALL
            .iter()
            .map(|error_type| format!("- `{}`: {}", error_type.as_str(), error_type.used_for()))
            .collect();
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(format!(
                "Error category; act on it first, then on `code`.\n\n{}",
                listing.join("\n")
            )))
            .enum_values(Some(
                ErrorType::ALL.iter().map(|error_type| error_type.as_str()),
            ))
            .into()
    }
}

impl ToSchema for ErrorType {}

/// The body of every error response: a single top-level key `error`.
#[derive(Serialize, ToSchema)]
pub struct ErrorEnvelope<'a> {
    pub error: ErrorObject<'a>,
}

/// Details of a failed request.
#[derive(Serialize, ToSchema)]
pub struct ErrorObject<'a> {
    /// Error category; clients act on `type` and `code`, never on `message`.
    #[serde(rename = "type")]
    pub error_type: ErrorType,
    /// Machine-readable error code.
    pub code: ErrorCode,
    /// Text for people. It may change at any time; do not parse it.
    #[schema(value_type = String)]
    pub message: &'a str,
    /// Name of the offending parameter, `null` when none applies. A nested body field is
    /// written `parent.child`.
    #[schema(value_type = Option<String>, required = true)]
    pub param: Option<&'a str>,
    /// Address of this error code's explanation: `<docs base>/docs/errors#<code>`.
    pub doc_url: String,
    /// Id of the request, `req_` and 32 lowercase hex digits; the same value as the
    /// `Service-Request-Id` response header. Quote it when reporting a problem.
    #[schema(value_type = String, pattern = "^req_[0-9a-f]{32}$")]
    pub request_id: &'a str,
}
