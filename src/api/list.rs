//! The machinery every endpoint that returns many things shares (the contract's "list
//! envelope", endpoint rule 7): [`List<T>`], the envelope it answers with, and the two query
//! parameters it takes, [`Limit`] (`limit`) and [`Cursor`] (`starting_after`), together
//! [`ListQuery`], the query of a list without filters of its own.
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
//! is `parameter_invalid`. A list without filters takes [`ListQuery`]; one with filters
//! declares its own query type, holding both as fields of these types beside its filters, as
//! [`ListQuery`] does. The OpenAPI document describes them the same way wherever they appear
//! ([`describe_parameters`]), so no endpoint words them differently.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Bound;

use serde::{Deserialize, Deserializer, Serialize};

use super::id::Id;
use crate::edge::extract::invalid;
use crate::errors::ApiError;
use utoipa::openapi::path::{Parameter, ParameterIn};
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::{Ref, RefOr, Required};
use utoipa::{IntoParams, PartialSchema, ToSchema};

/// The query of a list without filters of its own: `limit` and `starting_after`, nothing else
/// (any other parameter is `parameter_unknown`).
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    #[serde(default)]
    pub limit: Limit,
    pub starting_after: Option<Cursor>,
}

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
        const REQUIREMENT: &str = "must be a whole number from 1 to 100";
        // A whole number: the query parser reads it from the text, a JSON body must send a
        // number (the string "5" is refused there, as the schema says).
        let number = u64::deserialize(deserializer).map_err(|_: D::Error| invalid(REQUIREMENT))?;
        match u8::try_from(number) {
            Ok(limit) if (1..=Limit::MAX).contains(&limit) => Ok(Limit(limit)),
            _ => Err(invalid(REQUIREMENT)),
        }
    }
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

const LIMIT_DESCRIPTION: &str = "How many resources the page holds at most: 1 to 100, 10 when \
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
            invalid("must be the next_cursor of a page: 1 to 255 letters, digits, _ and -")
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
    /// The same page with each thing turned by `f` (a stored row into what is answered).
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> List<U> {
        List {
            object: self.object,
            data: self.data.into_iter().map(f).collect(),
            has_more: self.has_more,
            next_cursor: self.next_cursor,
        }
    }

    /// The page of `limit` things taken from `things`, which yields the things after the
    /// cursor, in the list's order. One more is read to know whether a next page exists; its
    /// cursor is `cursor_of` the page's last thing (`Cursor::new(&thing.id)`). A thing whose
    /// id is not a cursor could never be paged past: that is a fault of ours, answered as an
    /// internal error rather than with a `next_cursor` the next request would refuse.
    pub fn page(
        things: impl IntoIterator<Item = T>,
        limit: Limit,
        cursor_of: impl Fn(&T) -> Option<Cursor>,
    ) -> Result<List<T>, ApiError> {
        let mut data: Vec<T> = things.into_iter().take(limit.get() + 1).collect();
        let has_more = data.len() > limit.get();
        data.truncate(limit.get());
        let next_cursor = match data.last() {
            Some(last) if has_more => Some(cursor_of(last).ok_or_else(|| {
                ApiError::internal("a listed thing's id is not a cursor".to_owned())
            })?),
            _ => None,
        };
        Ok(List {
            object: ListObject::List,
            data,
            has_more,
            next_cursor: next_cursor.map(|cursor| cursor.0),
        })
    }

    /// The page of `query.limit` resources of `table` (an in-memory table, by id) after
    /// `query.starting_after`, in id order; the cursors are the ids. A list whose store finds
    /// the resources after the cursor itself (a database) hands them to [`List::page`].
    pub fn page_after(table: &BTreeMap<Id, T>, query: &ListQuery) -> Result<List<T>, ApiError>
    where
        T: Clone,
    {
        let after = match &query.starting_after {
            Some(cursor) => Bound::Excluded(cursor.as_str()),
            None => Bound::Unbounded,
        };
        let rest = table.range::<str, _>((after, Bound::Unbounded));
        let page = List::page(rest, query.limit, |(id, _)| Cursor::new(id.as_str()))?;
        Ok(List {
            object: page.object,
            data: page
                .data
                .into_iter()
                .map(|(_, item)| item.clone())
                .collect(),
            has_more: page.has_more,
            next_cursor: page.next_cursor,
        })
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
            "One page of the resources an endpoint lists. Pass `next_cursor` as `starting_after` \
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
                .description(Some("The page of resources, at most `limit` of them.")),
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

/// A list of `T`: the envelope, whole, with `T`s as its `data` (one concrete object, not an
/// `allOf` of the envelope and a `data`, which some SDK generators turn into two types whose
/// `data` disagree).
impl<T: ToSchema> PartialSchema for List<T> {
    fn schema() -> RefOr<Schema> {
        let mut schema = envelope_schema();
        if let Schema::Object(object) = &mut schema {
            object.description = Some(format!(
                "One page of {} objects: the list envelope (`{LIST_ENVELOPE}`).",
                T::name()
            ));
            object.properties.insert(
                "data".to_owned(),
                ArrayBuilder::new()
                    .items(Ref::from_schema_name(T::name()))
                    .description(Some("The page of resources, at most `limit` of them."))
                    .into(),
            );
        }
        schema.into()
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

/// Gives every query parameter of type [`Limit`] or [`Cursor`] the shared description and
/// schema, and marks it optional, whatever the endpoint's field said.
pub fn describe_parameters(parameters: &mut [RefOr<Parameter>]) {
    for parameter in parameters {
        let RefOr::T(parameter) = parameter else {
            continue;
        };
        if parameter.parameter_in != ParameterIn::Query {
            continue;
        }
        let Some(schema) = &parameter.schema else {
            continue;
        };
        let (name, description) = if refers_to(schema, &Limit::name()) {
            (Limit::name(), LIMIT_DESCRIPTION)
        } else if refers_to(schema, &Cursor::name()) {
            (Cursor::name(), CURSOR_DESCRIPTION)
        } else {
            continue;
        };
        parameter.schema = Some(Ref::from_schema_name(name).into());
        parameter.description = Some(description.to_owned());
        parameter.required = Required::False;
    }
}

/// Whether `schema` is a reference to the schema `name`, or an optional one (`oneOf` null
/// and the reference).
fn refers_to(schema: &RefOr<Schema>, name: &str) -> bool {
    let target = format!("#/components/schemas/{name}");
    match schema {
        RefOr::Ref(reference) => reference.ref_location == target,
        RefOr::T(Schema::OneOf(one_of)) => one_of
            .items
            .iter()
            .any(|item| matches!(item, RefOr::Ref(reference) if reference.ref_location == target)),
        RefOr::T(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edge::extract::parse_query;
    use crate::errors::ErrorCode;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Page {
        #[serde(default)]
        limit: Limit,
        starting_after: Option<Cursor>,
    }

    #[test]
    fn a_parameter_given_twice_is_named() {
        let error = parse_query::<Page>("limit=5&limit=6").unwrap_err();
        assert_eq!(error.code(), ErrorCode::ParameterInvalid);
        assert_eq!(error.param(), Some("limit"));
        assert_eq!(
            error.message(),
            "The parameter limit was given more than once."
        );
    }

    #[test]
    fn a_page_after_a_cursor_is_read_in_id_order() {
        let table: BTreeMap<Id, u32> = [("pr_1", 1), ("pr_10", 10), ("pr_2", 2), ("pr_11", 11)]
            .into_iter()
            .map(|(id, n)| (Id::new(id).unwrap(), n))
            .collect();
        let mut seen = Vec::new();
        let mut after = String::new();
        for _ in 0..5 {
            let query: ListQuery = parse_query(&format!("limit=1{after}")).unwrap();
            let page = List::page_after(&table, &query).unwrap();
            seen.extend(page.data.iter().copied());
            match page.next_cursor {
                Some(next) => after = format!("&starting_after={next}"),
                None => break,
            }
        }
        // Text order, as ids are compared: every one once, none again.
        assert_eq!(seen, [1, 10, 11, 2]);
        // A cursor that names no id still pages from where it would sort.
        let query: ListQuery = parse_query("starting_after=pr_15").unwrap();
        assert_eq!(List::page_after(&table, &query).unwrap().data, [2]);
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
        let cursor = |n: &u32| Cursor::new(&format!("n{n}"));
        let first = List::page(1..=5, limit, cursor).unwrap();
        assert_eq!(first.data(), [1, 2]);
        assert!(first.has_more);
        assert_eq!(first.next_cursor.as_deref(), Some("n2"));
        let last = List::page(5..=5, limit, cursor).unwrap();
        assert_eq!(last.data(), [5]);
        assert!(!last.has_more);
        assert_eq!(last.next_cursor, None);
        assert_eq!(
            serde_json::to_value(&last).unwrap(),
            serde_json::json!({"object": "list", "data": [5], "has_more": false, "next_cursor": null})
        );
        // A thing whose id is no cursor cannot be paged past: an internal error, not a
        // next_cursor that the next request would refuse.
        let error = List::page(["a.b", "c"], Limit(1), |id| Cursor::new(id)).unwrap_err();
        assert_eq!(error.code(), ErrorCode::InternalError);
    }

    #[test]
    fn a_limit_in_a_body_is_a_json_number() {
        #[derive(Debug, Deserialize)]
        struct Body {
            limit: Limit,
        }
        assert_eq!(
            serde_json::from_str::<Body>(r#"{"limit":5}"#)
                .unwrap()
                .limit
                .get(),
            5
        );
        for body in [
            r#"{"limit":"5"}"#,
            r#"{"limit":5.0}"#,
            r#"{"limit":0}"#,
            r#"{"limit":null}"#,
        ] {
            assert!(serde_json::from_str::<Body>(body).is_err(), "{body}");
        }
    }
}
