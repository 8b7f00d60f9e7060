//! What every write needs besides its input types: [`Created`], the `201 Created` answer of a
//! create, with the new thing's `Location`; [`Deleted`], the answer of a DELETE; and, for the
//! body of a PATCH, [`Patch<T>`], a field
//! that tells absent (leave it), `null` (unset it) and a value (set it) apart, and
//! [`not_null`], for a field that may be left out but not unset.
//!
//! A PATCH body's type holds one field per changeable field, each `#[serde(default)]`:
//! `Patch<T>` for one that may be unset (`#[schema(value_type = Option<T>)]` in the
//! document), `Option<T>` with `#[serde(default, deserialize_with = "not_null")]` for one that
//! may not (`#[schema(nullable = false)]`). A body that changes nothing (`{}`) is a valid PATCH
//! that answers the thing as it is.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, Responder};
use serde::{Deserialize, Deserializer, Serialize};
use utoipa::ToSchema;

use crate::edge::extract::invalid;
use crate::errors::ApiError;

/// The answer of a DELETE (`200 OK`): what was removed, for good. A second DELETE of the same
/// id answers the contract's 404, as for any id the partner does not have. Its annotation
/// names it: `responses((status = 200, description = "...", body = Deleted))`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({"object": "thing", "id": "th_0001", "deleted": true}))]
pub struct Deleted {
    /// Kind of object removed: the `object` of what it was (`thing`).
    pub object: &'static str,
    /// The id it had: never used again.
    pub id: String,
    /// Always `true`.
    pub deleted: bool,
}

impl Deleted {
    /// The answer for the `kind` with `id`, removed.
    pub fn new(kind: &'static str, id: &str) -> Deleted {
        Deleted {
            object: kind,
            id: id.to_owned(),
            deleted: true,
        }
    }
}

/// The answer of a create: `201 Created`, the new thing's path in `Location`, and the thing.
/// Kept as written, so that an `Idempotency-Key` sent again gets exactly the same answer
/// (`api::idempotency`). Its annotation names the header: `headers(("Location" = String,
/// description = "The new thing's path."))`.
#[derive(Clone, Debug)]
pub struct Created {
    location: HeaderValue,
    body: Bytes,
}

impl Created {
    /// `thing`, created at `location` (`/v1/things/th_...`).
    pub fn new<T: Serialize>(location: &str, thing: &T) -> Result<Created, ApiError> {
        let location = HeaderValue::from_str(location)
            .map_err(|_| ApiError::internal("a Location that is no header value"))?;
        let body = serde_json::to_vec(thing).map_err(|error| {
            ApiError::internal(format!("a created thing does not serialize: {error}"))
        })?;
        Ok(Created {
            location,
            body: Bytes::from(body),
        })
    }

    /// A kept answer again: its `location` and `body` as [`Created::location`] and
    /// [`Created::body`] gave them.
    pub fn from_parts(location: &str, body: Vec<u8>) -> Result<Created, ApiError> {
        let location = HeaderValue::from_str(location)
            .map_err(|_| ApiError::internal("a kept Location that is no header value"))?;
        Ok(Created {
            location,
            body: Bytes::from(body),
        })
    }

    /// The new thing's path, as in `Location`.
    pub fn location(&self) -> &str {
        self.location.to_str().unwrap_or_default()
    }

    /// The JSON body, as sent.
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// The bytes it holds, as kept for a replay.
    pub fn size(&self) -> usize {
        self.body.len() + self.location.len()
    }

    /// The created thing's id, the last segment of its `Location`: what the audit record of
    /// a create (or of its replay) names.
    pub fn id(&self) -> &str {
        let location = self.location.to_str().unwrap_or_default();
        location.rsplit('/').next().unwrap_or(location)
    }
}

impl Responder for Created {
    type Body = actix_web::body::BoxBody;

    fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        let mut response = HttpResponse::with_body(StatusCode::CREATED, self.body);
        let headers = response.headers_mut();
        headers.insert(header::LOCATION, self.location);
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        response.map_into_boxed_body()
    }
}

/// A field of a PATCH body that may be unset; see the module documentation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Patch<T> {
    /// Not in the body: leave the field as it is.
    #[default]
    Absent,
    /// `null`: unset the field.
    Null,
    /// A value: set the field to it.
    Value(T),
}

impl<T> Patch<T> {
    /// `current` changed as the body says.
    pub fn apply_to(self, current: &mut Option<T>) {
        match self {
            Patch::Absent => {}
            Patch::Null => *current = None,
            Patch::Value(value) => *current = Some(value),
        }
    }
}

/// Present in the body: `null` or a value. (Absent never reaches here: `#[serde(default)]`.)
impl<'de, T: Deserialize<'de>> Deserialize<'de> for Patch<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Option::<T>::deserialize(deserializer)? {
            None => Patch::Null,
            Some(value) => Patch::Value(value),
        })
    }
}

/// For a field of a PATCH body that may be left out but not unset: `null` is refused with
/// `parameter_invalid` naming it; see the module documentation.
pub fn not_null<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    match Option::<T>::deserialize(deserializer)? {
        Some(value) => Ok(Some(value)),
        None => Err(invalid(
            "must not be null: leave it out to keep it as it is",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edge::extract::parse_json;
    use crate::errors::ErrorCode;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Change {
        #[serde(default)]
        note: Patch<String>,
        #[serde(default, deserialize_with = "not_null")]
        starts_on: Option<String>,
    }

    #[test]
    fn absent_null_and_a_value_are_told_apart() {
        let change: Change = parse_json(b"{}").unwrap();
        assert_eq!((change.note, change.starts_on), (Patch::Absent, None));
        let change: Change = parse_json(br#"{"note":null}"#).unwrap();
        assert_eq!(change.note, Patch::Null);
        let change: Change = parse_json(br#"{"note":"x","starts_on":"y"}"#).unwrap();
        assert_eq!(
            (change.note, change.starts_on),
            (Patch::Value("x".into()), Some("y".into()))
        );
        let error = parse_json::<Change>(br#"{"starts_on":null}"#).unwrap_err();
        assert_eq!(
            (error.code(), error.param()),
            (ErrorCode::ParameterInvalid, Some("starts_on"))
        );
        assert_eq!(
            error.message(),
            "Invalid value for parameter starts_on: it must not be null: leave it out to keep it \
             as it is."
        );
        let error = parse_json::<Change>(br#"{"note":3}"#).unwrap_err();
        assert_eq!(
            (error.code(), error.param()),
            (ErrorCode::ParameterInvalid, Some("note"))
        );
        let mut current = Some("a".to_owned());
        Patch::Null.apply_to(&mut current);
        assert_eq!(current, None);
        Patch::Value("b".to_owned()).apply_to(&mut current);
        Patch::Absent.apply_to(&mut current);
        assert_eq!(current, Some("b".to_owned()));
    }
}
