//! The request headers an endpoint reads as input, beside its path, query and body:
//! [`IdempotencyKey`], the `Idempotency-Key` of a POST (draft-ietf-httpapi-idempotency-key-header),
//! which makes sending the same request again safe. Read strictly: a value of another shape,
//! or the header twice, is `parameter_invalid` naming it, before a handler runs.

use std::future::{Ready, ready};

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};
use utoipa::IntoParams;
use utoipa::openapi::Required;
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn, ParameterStyle};
use utoipa::openapi::schema::{ObjectBuilder, Type};

use crate::errors::{ApiError, ErrorCode};

/// The header's name.
pub const IDEMPOTENCY_KEY: &str = "Idempotency-Key";

/// The `Idempotency-Key` a request carries, if any: 1 to 255 visible ASCII characters (a UUID,
/// say). An operation that takes one names it in its annotation, `params(IdempotencyKey)`, and
/// hands it to `api::idempotency::Replays::once`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IdempotencyKey(pub Option<String>);

impl IdempotencyKey {
    const MAX_LEN: usize = 255;

    /// The key of `values` (every `Idempotency-Key` field of a request).
    pub fn of<'a>(
        mut values: impl Iterator<Item = &'a actix_web::http::header::HeaderValue>,
    ) -> Result<IdempotencyKey, ApiError> {
        let Some(first) = values.next() else {
            return Ok(IdempotencyKey(None));
        };
        if values.next().is_some() {
            return Err(ApiError::new(ErrorCode::ParameterInvalid)
                .with_message(format!(
                    "The parameter {IDEMPOTENCY_KEY} was given more than once."
                ))
                .with_param(IDEMPOTENCY_KEY));
        }
        let bytes = first.as_bytes();
        if !(1..=IdempotencyKey::MAX_LEN).contains(&bytes.len())
            || !bytes.iter().all(|byte| (0x21..=0x7e).contains(byte))
        {
            return Err(ApiError::new(ErrorCode::ParameterInvalid)
                .with_message(format!(
                    "Invalid value for parameter {IDEMPOTENCY_KEY}: it must be 1 to 255 visible \
                     ASCII characters (a UUID, say)."
                ))
                .with_param(IDEMPOTENCY_KEY));
        }
        Ok(IdempotencyKey(Some(
            String::from_utf8(bytes.to_vec()).expect("checked ASCII"),
        )))
    }
}

impl FromRequest for IdempotencyKey {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(IdempotencyKey::of(req.headers().get_all(IDEMPOTENCY_KEY)))
    }
}

impl IntoParams for IdempotencyKey {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![
            ParameterBuilder::new()
                .name(IDEMPOTENCY_KEY)
                .parameter_in(ParameterIn::Header)
                .required(Required::False)
                .style(Some(ParameterStyle::Simple))
                .description(Some(
                    "Makes sending the request again safe: the same key with the same body \
                     within 24 hours gets the first answer again, and changes nothing more; the \
                     same key with another body is refused with `idempotency_key_reused`. A new \
                     UUID per request you mean to make once. An error is not kept: the same key \
                     may be sent again after one.",
                ))
                .schema(Some(
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .min_length(Some(1))
                        .max_length(Some(IdempotencyKey::MAX_LEN))
                        .pattern(Some("^[\\x21-\\x7e]+$")),
                ))
                .example(Some(serde_json::json!(
                    "5f0c9a4e-8d7b-4c1e-9f3a-2b6d8e0a1c47"
                )))
                .build(),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::HeaderValue;

    fn key(values: &[&[u8]]) -> Result<IdempotencyKey, ApiError> {
        let values: Vec<HeaderValue> = values
            .iter()
            .map(|value| HeaderValue::from_bytes(value).unwrap())
            .collect();
        IdempotencyKey::of(values.iter())
    }

    #[test]
    fn a_key_is_one_field_of_visible_ascii() {
        assert_eq!(key(&[]).unwrap(), IdempotencyKey(None));
        assert_eq!(
            key(&[b"abc-1"]).unwrap(),
            IdempotencyKey(Some("abc-1".into()))
        );
        for bad in [&b"a b"[..], b"", &[b'x'; 256], "é".as_bytes()] {
            let error = key(&[bad]).unwrap_err();
            assert_eq!(
                (error.code(), error.param()),
                (ErrorCode::ParameterInvalid, Some(IDEMPOTENCY_KEY))
            );
        }
        let error = key(&[b"a", b"b"]).unwrap_err();
        assert_eq!(
            error.message(),
            "The parameter Idempotency-Key was given more than once."
        );
    }
}
