//! A moment, as the contract writes times: RFC 3339 in UTC, ending in `Z`
//! (`2026-12-01T09:30:00Z`, seconds' fractions allowed: `2026-12-01T09:30:00.250Z`)
//! ([`Timestamp`]). A value of another shape (an offset such as `+01:00`, a lower-case `z` or
//! `t`, a space for `T`, a moment that does not exist such as `2026-02-30T00:00:00Z`) is
//! refused with `parameter_invalid` naming the field, before a handler runs. The service
//! writes whole seconds ([`Timestamp::now`]), the shape its schema's pattern says.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::{PartialSchema, ToSchema};

use crate::edge::extract::{invalid, text_of};

/// The shape, as the schema's `pattern` says it to clients.
const PATTERN: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?Z$";

/// A moment in UTC; see the module documentation. Ordered as moments are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(jiff::Timestamp);

impl Timestamp {
    /// `value` when it is a moment written `YYYY-MM-DDTHH:MM:SS[.fraction]Z`.
    pub fn parse(value: &str) -> Option<Timestamp> {
        let bytes = value.as_bytes();
        let whole = bytes.len() >= 20
            && bytes[..19]
                .iter()
                .enumerate()
                .all(|(index, byte)| match index {
                    4 | 7 => *byte == b'-',
                    10 => *byte == b'T',
                    13 | 16 => *byte == b':',
                    _ => byte.is_ascii_digit(),
                });
        let rest = &bytes[19.min(bytes.len())..];
        let fraction = match rest {
            [b'Z'] => true,
            [b'.', digits @ .., b'Z'] => {
                (1..=9).contains(&digits.len()) && digits.iter().all(u8::is_ascii_digit)
            }
            _ => false,
        };
        // jiff checks the day and time exist (no 2026-02-30, no 25:00), and takes no leap
        // second but as the second before it.
        (whole && fraction && &bytes[17..19] != b"60")
            .then(|| value.parse().ok().map(Timestamp))
            .flatten()
    }

    /// Now, to the whole second.
    pub fn now() -> Timestamp {
        Timestamp::from_second(jiff::Timestamp::now().as_second())
            .expect("now is within jiff's range")
    }

    /// The moment `seconds` after 1970-01-01T00:00:00Z, when jiff's range holds it.
    pub fn from_second(seconds: i64) -> Option<Timestamp> {
        jiff::Timestamp::from_second(seconds).ok().map(Timestamp)
    }

    /// The moment as `jiff` knows it, for arithmetic.
    pub fn jiff(self) -> jiff::Timestamp {
        self.0
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // jiff writes RFC 3339 in UTC with `Z`, a fraction only when there is one.
        write!(f, "{}", self.0)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const REQUIREMENT: &str =
            "must be a moment that exists, in UTC, written YYYY-MM-DDTHH:MM:SSZ (RFC 3339)";
        let value = text_of(deserializer, REQUIREMENT)?;
        Timestamp::parse(&value).ok_or_else(|| invalid(REQUIREMENT))
    }
}

impl PartialSchema for Timestamp {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
            .pattern(Some(PATTERN))
            .description(Some(
                "A moment, RFC 3339 in UTC ending in `Z`: `YYYY-MM-DDTHH:MM:SSZ`, seconds' \
                 fractions allowed.",
            ))
            .examples(["2026-12-01T09:30:00Z"])
            .into()
    }
}

impl ToSchema for Timestamp {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Timestamp")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edge::extract::parse_json;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Seen {
        seen_at: Timestamp,
    }

    #[test]
    fn a_moment_is_rfc_3339_in_utc_ending_in_z() {
        for (given, written) in [
            ("2026-12-01T09:30:00Z", "2026-12-01T09:30:00Z"),
            ("2026-12-01T09:30:00.250Z", "2026-12-01T09:30:00.25Z"),
            (
                "2028-02-29T23:59:59.000000001Z",
                "2028-02-29T23:59:59.000000001Z",
            ),
        ] {
            assert_eq!(Timestamp::parse(given).unwrap().to_string(), written);
        }
        for bad in [
            "2026-12-01T09:30:00+01:00",
            "2026-12-01T09:30:00+00:00",
            "2026-12-01T09:30:00z",
            "2026-12-01t09:30:00Z",
            "2026-12-01 09:30:00Z",
            "2026-12-01T09:30Z",
            "2026-12-01T09:30:00.Z",
            "2026-12-01T09:30:00.1234567890Z",
            "2026-02-30T00:00:00Z",
            "2026-12-01T24:00:00Z",
            "2026-12-31T23:59:60Z",
            "2026-12-01",
            "2026-12-01T09:30:00Z ",
            "",
        ] {
            assert_eq!(Timestamp::parse(bad), None, "{bad}");
        }
        let now = Timestamp::now().to_string();
        assert_eq!(Timestamp::parse(&now).map(|t| t.to_string()), Some(now));
    }

    #[test]
    fn a_bad_moment_in_a_body_is_parameter_invalid_naming_the_field() {
        for body in [
            r#"{"seen_at":"2026-12-01T09:30:00+01:00"}"#,
            r#"{"seen_at":1764581400}"#,
            r#"{"seen_at":null}"#,
        ] {
            let error = parse_json::<Seen>(body.as_bytes()).unwrap_err();
            assert_eq!(error.code(), crate::errors::ErrorCode::ParameterInvalid);
            assert_eq!(error.param(), Some("seen_at"));
            assert!(error.message().contains("RFC 3339"), "{}", error.message());
        }
        let error = parse_json::<Seen>(b"{}").unwrap_err();
        assert_eq!(error.code(), crate::errors::ErrorCode::ParameterMissing);
    }
}
