//! The record of the contract's releases, `openapi/changelog.json`, which
//! `scripts/release-contract` appends to: per release its date, what it means for a client
//! (one sentence a change, written for partners) and the changes the breaking-change gate
//! listed between the previously released document and this one. The record is compiled in:
//! the document's revision ([`super::revision`]) and the changelog page the same binary serves
//! are read from it.

use serde::Deserialize;

/// The record, as committed.
const RECORD: &str = include_str!("../../openapi/changelog.json");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    pub releases: Vec<Release>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Release {
    /// `YYYY-MM-DD`.
    pub date: String,
    /// What the release means for a client, one sentence a change.
    pub notes: Vec<String>,
    /// One line per change, as the gate words it.
    pub changes: Vec<String>,
    /// The changes that are no edit of wording: those the gate still finds once both
    /// documents have lost their descriptions, summaries and examples.
    pub contract_changes: Vec<String>,
}

impl Release {
    /// The changes that only edit wording (descriptions, summaries, examples): what a client
    /// sends and receives is the same.
    pub fn wording_edits(&self) -> impl Iterator<Item = &String> {
        self.changes
            .iter()
            .filter(|change| !self.contract_changes.contains(change))
    }
}

/// The record; a record that does not parse is caught by a test before it ships.
pub fn record() -> Result<Record, serde_json::Error> {
    serde_json::from_str(RECORD)
}

/// The revision a release of `date` (`YYYY-MM-DD`) gives the document's `info.version`:
/// `1.YYYYMMDD.0`, the version path's number and the date, written as a semantic version,
/// because generators make it the version of the package they write (a Rust crate or an npm
/// package refuses `1.2026-11-25`), and later releases compare greater.
pub fn revision_of(date: &str) -> String {
    format!("1.{}.0", date.replace('-', ""))
}

/// The date of the latest release, or `unreleased` should the record not parse.
pub fn latest_date() -> String {
    record()
        .ok()
        .and_then(|record| record.releases.last().map(|release| release.date.clone()))
        .unwrap_or_else(|| "unreleased".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_parses_and_lists_releases_in_order() {
        let record = record().expect("openapi/changelog.json parses");
        assert!(!record.releases.is_empty());
        for pair in record.releases.windows(2) {
            assert!(
                pair[0].date < pair[1].date,
                "releases are recorded in date order, one a day at most"
            );
        }
        for release in &record.releases {
            assert!(
                !release.changes.is_empty(),
                "{} lists its changes",
                release.date
            );
            assert!(
                !release.notes.is_empty(),
                "{} says what it means",
                release.date
            );
            for note in &release.notes {
                assert!(note.ends_with('.'), "a note is a sentence: {note}");
            }
            for change in &release.contract_changes {
                assert!(
                    release.changes.contains(change),
                    "{}: {change} is in the full list too",
                    release.date
                );
            }
        }
    }

    #[test]
    fn the_revision_is_the_latest_release() {
        let latest = record().unwrap().releases.last().unwrap().date.clone();
        assert_eq!(super::super::revision(), revision_of(&latest));
        assert_eq!(revision_of("2026-11-25"), "1.20261125.0");
    }
}
