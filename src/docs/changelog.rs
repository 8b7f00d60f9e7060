//! The partner-facing changelog of v1, `/docs/changelog`. It is rendered from
//! `openapi/changelog.json`, the record that `scripts/release-contract` appends to when a
//! release happens: each release's date and the changes the breaking-change gate listed
//! between the previously released document and this one. The record is compiled in, so the
//! page always matches the documents the same binary serves.

use std::fmt::Write as _;

use serde::Deserialize;

use super::pages::{escape, page};

/// The record, as committed.
const RECORD: &str = include_str!("../../openapi/changelog.json");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    releases: Vec<Release>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Release {
    /// `YYYY-MM-DD`.
    date: String,
    summary: String,
    /// One line per change, as the gate words it.
    changes: Vec<String>,
}

/// The `/docs/changelog` page: releases newest first.
pub fn changelog_page() -> String {
    let mut body = String::from(
        "<h1>Changelog</h1>\n<p>What changed in v1, newest first, as released. Within v1 every \
         change is additive, so a client generated from an earlier document keeps working: new \
         endpoints, new optional parameters, new response fields and headers, new error codes \
         under the existing types. Nothing is removed or renamed, no parameter becomes \
         required, no type or format changes and no response enum gains a value; such a change \
         would ship as a new version path, beside v1.</p>\n",
    );
    match serde_json::from_str::<Record>(RECORD) {
        Ok(record) => {
            for release in record.releases.iter().rev() {
                let _ = write!(
                    body,
                    "<section id=\"{date}\">\n<h2><a href=\"#{date}\">{date}</a></h2>\n<p>{summary}</p>\n<ul>\n",
                    date = escape(&release.date),
                    summary = escape(&release.summary),
                );
                for change in &release.changes {
                    let _ = writeln!(body, "<li><code>{}</code></li>", escape(change));
                }
                body.push_str("</ul>\n</section>\n");
            }
        }
        // A record that does not parse is caught by a test before it ships; should one ever
        // reach a server, the page says so instead of failing.
        Err(error) => {
            log::error!("openapi/changelog.json does not parse: {error}");
            body.push_str("<p>The changelog is unavailable.</p>\n");
        }
    }
    page("Changelog", &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_parses_and_lists_releases_in_order() {
        let record: Record = serde_json::from_str(RECORD).expect("openapi/changelog.json parses");
        assert!(!record.releases.is_empty());
        for pair in record.releases.windows(2) {
            assert!(
                pair[0].date <= pair[1].date,
                "releases are recorded in date order"
            );
        }
        for release in &record.releases {
            assert!(
                !release.changes.is_empty(),
                "{} lists its changes",
                release.date
            );
        }
    }

    #[test]
    fn the_page_shows_every_release_and_change() {
        let record: Record = serde_json::from_str(RECORD).unwrap();
        let page = changelog_page();
        for release in &record.releases {
            assert!(page.contains(&format!("<section id=\"{}\">", release.date)));
            for change in &release.changes {
                assert!(page.contains(&escape(change)), "{change}");
            }
        }
    }
}
