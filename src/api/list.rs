//! The machinery every endpoint that returns many things shares (the contract's "list
//! envelope", endpoint rule 7): [`List<T>`], the envelope it answers with, and the two query
//! parameters it takes, [`Limit`] (`limit`) and [`Cursor`] (`starting_after`).
//!
//! `limit` is 10 when absent and at most 100: Stripe's bounds, which partners' tooling already
//! knows. A page of 100 of the small objects this API returns stays well under the 64 KiB a
//! request body may hold, so a page is never larger than what a partner may send us; 10 keeps
//! the first page quick for the common case of "the latest few". A value outside 1 to 100, or
//! not a whole number, is refused with `parameter_invalid`, never clamped: a client asking for
//! 500 learns that it gets at most 100 instead of silently missing the rest.
//!
//! `starting_after` is the `next_cursor` of the page before, an opaque string of 1 to 255
//! letters, digits, `_` and `-` (the ids of the resources a list pages through); anything else
//! is `parameter_invalid`. An endpoint's query type holds both as fields of these types:
//!
//! ```ignore
//! #[derive(Deserialize, IntoParams)]
//! #[serde(deny_unknown_fields)]
//! #[into_params(parameter_in = Query)]
//! pub struct ListThingsQuery {
//!     #[serde(default)]
//!     pub limit: Limit,
//!     pub starting_after: Option<Cursor>,
//! }
//! ```
//!
//! and the OpenAPI document describes them the same way wherever they appear
//! ([`describe_parameters`]), so no endpoint words them differently.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize};
use utoipa::openapi::path::{Parameter, ParameterIn};
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::{AllOfBuilder, Ref, RefOr, Required};
use utoipa::{PartialSchema, ToSchema};

/// Name of the list envelope's schema in the OpenAPI document.
pub const LIST_ENVELOPE: &str = "ListEnvelope";

/// How many things a page holds: `limit`, 1 to [`Limit::MAX`], [`Limit::DEFAULT`] when
/// absent; see the module documentation for the choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit(u8);

impl Limit {
    pub const DEFAULT: u8 = 10;
    pub const MAX: u8 = 100;

    pub fn get(self) -> usize {
        usize::from(self.0)
    }
}

impl Default for Limit {
    fn default() -> Self {
        Limit(Limit::DEFAULT)
    }
}

impl<'de> Deserialize<'de> for Limit {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let explain =
            || serde::de::Error::custom("must be a whole number from 1 to 100".to_owned());
        // A string, as the query parser hands every value over; a number too, from JSON.
        let value = LimitValue::deserialize(deserializer).map_err(|_: D::Error| explain())?;
        let number = match value {
            LimitValue::Number(number) => number,
            LimitValue::Text(text) => text.parse().map_err(|_| explain())?,
        };
        match u8::try_from(number) {
            Ok(limit) if (1..=Limit::MAX).contains(&limit) => Ok(Limit(limit)),
            _ => Err(explain()),
        }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum LimitValue {
    Number(u64),
    Text(String),
}

impl PartialSchema for Limit {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .minimum(Some(1))
            .maximum(Some(Limit::MAX))
            .default(Some(Limit::DEFAULT.into()))
            .description(Some(LIMIT_DESCRIPTION))
            .into()
    }
}

impl ToSchema for Limit {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("ListLimit")
    }
}

const LIMIT_DESCRIPTION: &str = "How many things the page holds at most: 1 to 100, 10 when \
absent. A value outside that range is refused with `parameter_invalid`.";

/// Where a page starts: `starting_after`, the `next_cursor` of the page before; see the
/// module documentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cursor(String);

impl Cursor {
    const MAX_LEN: usize = 255;

    /// `value` when it has a cursor's shape.
    pub fn new(value: &str) -> Option<Cursor> {
        let shaped = (1..=Cursor::MAX_LEN).contains(&value.len())
            && value
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-');
        shaped.then(|| Cursor(value.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for Cursor {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Cow::<str>::deserialize(deserializer)?;
        Cursor::new(&value).ok_or_else(|| {
            serde::de::Error::custom(
                "must be the next_cursor of a page: 1 to 255 letters, digits, _ and -".to_owned(),
            )
        })
    }
}

impl PartialSchema for Cursor {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some("^[A-Za-z0-9_-]{1,255}$"))
            .description(Some(CURSOR_DESCRIPTION))
            .into()
    }
}

impl ToSchema for Cursor {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("ListCursor")
    }
}

const CURSOR_DESCRIPTION: &str = "Where the page starts: the `next_cursor` of the page before. \
Absent for the first page.";

/// One page of things: the list envelope. Build it with [`List::page`].
#[derive(Debug, Serialize)]
pub struct List<T> {
    object: ListObject,
    data: Vec<T>,
    has_more: bool,
    next_cursor: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "snake_case")]
enum ListObject {
    List,
}

impl<T> List<T> {
    /// The page of `limit` things taken from `things`, which yields the things after the
    /// cursor, in the list's order. One more is read to know whether a next page exists; its
    /// cursor is `cursor_of` the page's last thing.
    pub fn page(
        things: impl IntoIterator<Item = T>,
        limit: Limit,
        cursor_of: impl Fn(&T) -> String,
    ) -> List<T> {
        let mut data: Vec<T> = things.into_iter().take(limit.get() + 1).collect();
        let has_more = data.len() > limit.get();
        data.truncate(limit.get());
        let next_cursor = if has_more {
            data.last().map(cursor_of)
        } else {
            None
        };
        List {
            object: ListObject::List,
            data,
            has_more,
            next_cursor,
        }
    }

    pub fn data(&self) -> &[T] {
        &self.data
    }
}

/// The envelope as the document publishes it once, for every list: its `data` items are
/// whatever the endpoint lists.
pub fn envelope_schema() -> Schema {
    ObjectBuilder::new()
        .description(Some(
            "One page of the things an endpoint lists. Pass `next_cursor` as `starting_after` \
             to fetch the next page, until `has_more` is `false`.",
        ))
        .property(
            "object",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(["list"]))
                .description(Some("Kind of object: always `list`.")),
        )
        .required("object")
        .property(
            "data",
            ArrayBuilder::new()
                .items(ObjectBuilder::new().schema_type(SchemaType::AnyValue))
                .description(Some("The page of things, at most `limit` of them.")),
        )
        .required("data")
        .property(
            "has_more",
            ObjectBuilder::new()
                .schema_type(Type::Boolean)
                .description(Some("Whether a next page exists.")),
        )
        .required("has_more")
        .property(
            "next_cursor",
            ObjectBuilder::new()
                .schema_type(SchemaType::Array(vec![Type::String, Type::Null]))
                .description(Some(
                    "The value to pass as `starting_after` for the next page; `null` on the \
                     last page.",
                )),
        )
        .required("next_cursor")
        .into()
}

/// A list of `T` is the envelope with `T`s as its `data`.
impl<T: ToSchema> PartialSchema for List<T> {
    fn schema() -> RefOr<Schema> {
        AllOfBuilder::new()
            .item(Ref::from_schema_name(LIST_ENVELOPE))
            .item(ObjectBuilder::new().property(
                "data",
                ArrayBuilder::new().items(Ref::from_schema_name(T::name())),
            ))
            .into()
    }
}

impl<T: ToSchema> ToSchema for List<T> {
    fn name() -> Cow<'static, str> {
        format!("{}List", T::name()).into()
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((LIST_ENVELOPE.to_owned(), envelope_schema().into()));
        schemas.push((T::name().into_owned(), T::schema()));
        T::schemas(schemas);
    }
}

/// Gives every `limit` and `starting_after` query parameter of `parameters` the shared
/// description and schema, whatever the endpoint's field said.
pub fn describe_parameters(parameters: &mut [RefOr<Parameter>]) {
    for parameter in parameters {
        let RefOr::T(parameter) = parameter else {
            continue;
        };
        if parameter.parameter_in != ParameterIn::Query {
            continue;
        }
        let (schema, description) = match parameter.name.as_str() {
            "limit" => (Limit::name(), LIMIT_DESCRIPTION),
            "starting_after" => (Cursor::name(), CURSOR_DESCRIPTION),
            _ => continue,
        };
        parameter.schema = Some(Ref::from_schema_name(schema).into());
        parameter.description = Some(description.to_owned());
        parameter.required = Required::False;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errors::ErrorCode;
    use crate::http::extract::parse_query;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Page {
        #[serde(default)]
        limit: Limit,
        starting_after: Option<Cursor>,
    }

    #[test]
    fn limit_is_ten_when_absent_and_one_to_a_hundred_when_given() {
        assert_eq!(parse_query::<Page>("").unwrap().limit.get(), 10);
        for (query, limit) in [("limit=1", 1), ("limit=100", 100), ("limit=37", 37)] {
            assert_eq!(parse_query::<Page>(query).unwrap().limit.get(), limit);
        }
        for query in [
            "limit=0",
            "limit=101",
            "limit=-1",
            "limit=1.5",
            "limit=",
            "limit=ten",
            "limit=99999999999999999999999",
        ] {
            let error = parse_query::<Page>(query).unwrap_err();
            assert_eq!(error.code(), ErrorCode::ParameterInvalid, "{query}");
            assert_eq!(error.param(), Some("limit"), "{query}");
            assert_eq!(
                error.message(),
                "Invalid value for parameter limit: it must be a whole number from 1 to 100.",
                "{query}"
            );
        }
    }

    #[test]
    fn a_cursor_has_the_shape_of_an_id() {
        let page = parse_query::<Page>("starting_after=thing_0042").unwrap();
        assert_eq!(page.starting_after.unwrap().as_str(), "thing_0042");
        let long = format!("starting_after={}", "a".repeat(256));
        for query in [
            "starting_after=",
            "starting_after=a%2Fb",
            "starting_after=%C3%A9",
            &long,
        ] {
            let error = parse_query::<Page>(query).unwrap_err();
            assert_eq!(error.code(), ErrorCode::ParameterInvalid, "{query}");
            assert_eq!(error.param(), Some("starting_after"), "{query}");
        }
    }

    #[test]
    fn a_page_knows_whether_more_follow() {
        let limit = parse_query::<Page>("limit=2").unwrap().limit;
        let cursor = |n: &u32| format!("n{n}");
        let first = List::page(1..=5, limit, cursor);
        assert_eq!(first.data(), [1, 2]);
        assert!(first.has_more);
        assert_eq!(first.next_cursor.as_deref(), Some("n2"));
        let last = List::page(5..=5, limit, cursor);
        assert_eq!(last.data(), [5]);
        assert!(!last.has_more);
        assert_eq!(last.next_cursor, None);
        assert_eq!(
            serde_json::to_value(&last).unwrap(),
            serde_json::json!({"object": "list", "data": [5], "has_more": false, "next_cursor": null})
        );
    }
}
