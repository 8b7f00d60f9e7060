//! Deprecated operations and the headers their answers carry (PARTNERS.md, "Deprecation"): a
//! deprecated operation keeps answering exactly as before, and every answer to it (errors and
//! the rate limit's refusals included) carries `Deprecation` (RFC 9745), `Link` to the
//! changelog entry that announced it (`rel="deprecation"`), and, once the date when it stops
//! answering is fixed, `Sunset` (RFC 8594). The operations are listed in one table,
//! `api::DEPRECATIONS`, by `operationId`; the route table turns each entry into header values
//! once, and the OpenAPI document marks the operation `deprecated` from the same entry, so
//! the two cannot disagree.

use std::time::{Duration, SystemTime};

use actix_web::http::header::{HeaderValue, HttpDate};

/// One deprecated operation: a row of `api::DEPRECATIONS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deprecation {
    /// The operation, by its `operationId`; a GET's `HEAD` twin goes with it.
    pub operation_id: &'static str,
    /// The day it was deprecated, `YYYY-MM-DD` (UTC): the day of the release that announced
    /// it, whose changelog entry the `Link` points at.
    pub deprecated_on: &'static str,
    /// The day it stops answering, `YYYY-MM-DD` (UTC), once fixed: no earlier than the end of
    /// the version, announced at least 12 months ahead.
    pub sunset_on: Option<&'static str>,
}

/// The header values of a deprecated operation's answers, written once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeprecationHeaders {
    /// `Deprecation: @<unix seconds>`: the start of the day it was deprecated.
    pub deprecation: HeaderValue,
    /// `Link: <{public URL}/docs/changelog#<day>>; rel="deprecation"`; without a configured
    /// public URL, a reference relative to the request's own origin, as RFC 8288 allows.
    pub link: HeaderValue,
    /// `Sunset: <HTTP-date>`: the start of the day it stops answering.
    pub sunset: Option<HeaderValue>,
}

impl Deprecation {
    /// The header values, with the `Link` into `public_url` (empty: relative to the request's
    /// origin), or why the row is malformed (a test holds every row of the table to this, so a
    /// bad row never ships).
    pub fn headers(&self, public_url: &str) -> Result<DeprecationHeaders, String> {
        if self.operation_id.ends_with("_head") {
            return Err(format!(
                "{}: a HEAD twin goes with its GET; name the GET",
                self.operation_id
            ));
        }
        let deprecated = unix_seconds(self.deprecated_on)?;
        let sunset = self.sunset_on.map(unix_seconds).transpose()?;
        if sunset.is_some_and(|sunset| sunset <= deprecated) {
            return Err(format!(
                "{}: the sunset must come after the deprecation",
                self.operation_id
            ));
        }
        let value = |text: String| HeaderValue::from_str(&text).map_err(|error| error.to_string());
        Ok(DeprecationHeaders {
            deprecation: value(format!("@{deprecated}"))?,
            link: value(format!(
                "<{public_url}/docs/changelog#{}>; rel=\"deprecation\"",
                self.deprecated_on
            ))?,
            sunset: sunset
                .map(|secs| {
                    let when = SystemTime::UNIX_EPOCH + Duration::from_secs(secs);
                    value(HttpDate::from(when).to_string())
                })
                .transpose()?,
        })
    }

    /// Whether this row names the operation `operation_id`, or the `HEAD` twin of the GET it
    /// names.
    pub fn names(&self, operation_id: &str) -> bool {
        operation_id == self.operation_id
            || operation_id
                .strip_suffix("_head")
                .is_some_and(|get| get == self.operation_id)
    }
}

/// Seconds from the Unix epoch to the start (00:00 UTC) of `day`, written `YYYY-MM-DD`
/// exactly (jiff alone would also read other ISO 8601 spellings), from 1970 on.
fn unix_seconds(day: &str) -> Result<u64, String> {
    let malformed = || format!("{day:?} is not a day written YYYY-MM-DD");
    let shape = day.len() == 10
        && day.bytes().enumerate().all(|(at, byte)| match at {
            4 | 7 => byte == b'-',
            _ => byte.is_ascii_digit(),
        });
    if !shape {
        return Err(malformed());
    }
    let date: jiff::civil::Date = day.parse().map_err(|_| malformed())?;
    let start = date
        .to_zoned(jiff::tz::TimeZone::UTC)
        .map_err(|_| malformed())?
        .timestamp()
        .as_second();
    u64::try_from(start).map_err(|_| malformed())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_are_counted_from_the_epoch() {
        assert_eq!(unix_seconds("1970-01-01"), Ok(0));
        assert_eq!(unix_seconds("2000-03-01"), Ok(951_868_800));
        // RFC 9745's example, `@1688169599`, is the last second of 2023-06-30.
        assert_eq!(unix_seconds("2023-07-01"), Ok(1_688_169_600));
        assert_eq!(unix_seconds("2024-02-29"), Ok(1_709_164_800));
        for bad in [
            "2023-02-29",
            "2023-13-01",
            "2023-7-01",
            "23-07-01",
            "2023-07-01T00",
            "",
        ] {
            assert!(unix_seconds(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_headers_are_written_as_the_rfcs_say() {
        let row = Deprecation {
            operation_id: "list_widgets",
            deprecated_on: "2023-07-01",
            sunset_on: Some("2024-07-01"),
        };
        let headers = row.headers("").unwrap();
        assert_eq!(headers.deprecation, "@1688169600");
        assert_eq!(
            headers.link,
            "</docs/changelog#2023-07-01>; rel=\"deprecation\""
        );
        assert_eq!(headers.sunset.unwrap(), "Mon, 01 Jul 2024 00:00:00 GMT");
        assert!(row.names("list_widgets") && row.names("list_widgets_head"));
        assert!(!row.names("list_widgets_page") && !row.names("list"));
        let backwards = Deprecation {
            sunset_on: Some("2023-06-30"),
            ..row
        };
        assert!(backwards.headers("").is_err());
        let behind_a_prefix = row.headers("https://gateway.example.test/partner").unwrap();
        assert_eq!(
            behind_a_prefix.link,
            "<https://gateway.example.test/partner/docs/changelog#2023-07-01>; rel=\"deprecation\""
        );
        let twin = Deprecation {
            operation_id: "list_widgets_head",
            ..row
        };
        assert!(twin.headers("").is_err());
    }
}
