//! A day without a time, as the contract writes it: `YYYY-MM-DD`, meaning that day where the
//! member lives ([`Date`]). A value of another shape, or a day that does not exist
//! (`2026-02-30`), is refused with `parameter_invalid` naming the field, before a handler runs.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::{PartialSchema, ToSchema};

use crate::edge::extract::{invalid, text_of};

/// A day, `YYYY-MM-DD`; see the module documentation. Ordered as days are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date(jiff::civil::Date);

impl Date {
    /// `value` when it is a day written `YYYY-MM-DD` (exactly ten characters).
    pub fn parse(value: &str) -> Option<Date> {
        let shaped = value.len() == 10
            && value.bytes().enumerate().all(|(index, byte)| match index {
                4 | 7 => byte == b'-',
                _ => byte.is_ascii_digit(),
            });
        shaped.then(|| value.parse().ok().map(Date)).flatten()
    }

    /// The day `year`-`month`-`day`, when it exists.
    pub fn new(year: i16, month: i8, day: i8) -> Option<Date> {
        jiff::civil::Date::new(year, month, day).ok().map(Date)
    }

    /// The day as `jiff` knows it, for arithmetic.
    pub fn civil(self) -> jiff::civil::Date {
        self.0
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // jiff writes the ISO 8601 calendar date, `YYYY-MM-DD`, for years 0 to 9999.
        write!(f, "{}", self.0)
    }
}

impl Serialize for Date {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Date {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const REQUIREMENT: &str = "must be a day that exists, written YYYY-MM-DD";
        let value = text_of(deserializer, REQUIREMENT)?;
        Date::parse(&value).ok_or_else(|| invalid(REQUIREMENT))
    }
}

impl PartialSchema for Date {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Date)))
            .description(Some(
                "A day, `YYYY-MM-DD`, meaning that day where the member lives.",
            ))
            .examples(["2026-12-01"])
            .into()
    }
}

impl ToSchema for Date {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Date")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edge::extract::parse_json;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Starts {
        starts_on: Date,
    }

    #[test]
    fn a_day_is_yyyy_mm_dd_and_exists() {
        assert_eq!(Date::parse("2026-12-01").unwrap().to_string(), "2026-12-01");
        assert_eq!(Date::parse("2028-02-29"), Date::new(2028, 2, 29));
        for bad in [
            "2026-02-30",
            "2026-13-01",
            "2026-1-01",
            "20261201",
            "2026-12-01T00:00:00Z",
            " 2026-12-01",
            "２０２６-12-01",
            "",
        ] {
            assert_eq!(Date::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_bad_day_in_a_body_is_parameter_invalid_naming_the_field() {
        for body in [
            r#"{"starts_on":"2026-02-30"}"#,
            r#"{"starts_on":20261201}"#,
            r#"{"starts_on":null}"#,
        ] {
            let error = parse_json::<Starts>(body.as_bytes()).unwrap_err();
            assert_eq!(error.code(), crate::errors::ErrorCode::ParameterInvalid);
            assert_eq!(error.param(), Some("starts_on"));
            assert!(
                error.message().contains("YYYY-MM-DD"),
                "{}",
                error.message()
            );
        }
        assert_eq!(
            parse_json::<Starts>(br#"{"starts_on":"2026-12-01"}"#)
                .unwrap()
                .starts_on,
            Date::new(2026, 12, 1).unwrap()
        );
        // Missing is missing, not invalid: the field's own reading does not swallow it.
        let error = parse_json::<Starts>(b"{}").unwrap_err();
        assert_eq!(error.code(), crate::errors::ErrorCode::ParameterMissing);
        assert_eq!(error.param(), Some("starts_on"));
    }
}
