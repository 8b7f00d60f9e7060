//! The partner-facing changelog of v1, `/docs/changelog`, and its Atom feed,
//! `/docs/changelog.atom` (RFC 4287), rendered from the release record (`openapi::releases`):
//! per release, newest first, what it means for a client, one sentence a change; then the
//! changes to the contract counted by kind, the edits of wording (descriptions, summaries,
//! examples) counted apart and not listed as changes, and the breaking-change gate's whole
//! list one click away for whoever diffs documents. The record is compiled in, so the page and
//! the feed always match the documents the same binary serves.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::pages::{escape, inline_markup, page};
use crate::openapi::releases::{self, Release};

/// The feed's path, relative to the changelog page (both are under `/docs/`).
pub const FEED_NAME: &str = "changelog.atom";

/// The `/docs/changelog` page: releases newest first.
pub fn changelog_page() -> String {
    let mut body = String::from(
        "<h1>Changelog</h1>\n<p>What changed in v1, newest first, as released. Within v1 every \
         change is additive, so a client generated from an earlier document keeps working: new \
         endpoints, new optional parameters, new response fields and headers, new error codes \
         under the existing types. Nothing is removed or renamed, no parameter becomes \
         required, no type or format changes and no response enum gains a value; such a change \
         would ship as a new version path, beside v1. The document's <code>info.version</code> \
         names the release it belongs to: <code>1.YYYYMMDD.0</code>, its date. To hear of \
         each release, subscribe to the <a href=\"changelog.atom\">Atom feed</a>.</p>\n",
    );
    match releases::record() {
        Ok(record) => {
            for release in record.releases.iter().rev() {
                let _ = write!(
                    body,
                    "<section id=\"{date}\">\n<h2><a href=\"#{date}\">{date}</a></h2>\n\
                     <p>Revision <code>{revision}</code>.</p>\n<ul>\n",
                    date = escape(&release.date),
                    revision = escape(&releases::revision_of(&release.date)),
                );
                for note in &release.notes {
                    let _ = writeln!(body, "<li>{}</li>", inline_markup(note));
                }
                body.push_str("</ul>\n");
                body.push_str(&summary(release));
                let _ = write!(
                    body,
                    "<details>\n<summary>Every change to the document ({})</summary>\n\
                     <ul class=\"changes\">\n",
                    release.changes.len()
                );
                for change in &release.changes {
                    let _ = writeln!(body, "<li><code>{}</code></li>", escape(change));
                }
                body.push_str("</ul>\n</details>\n</section>\n");
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

/// What a release changed, for people: the changes to the contract counted by kind (`response
/// added: 3`), and the edits of wording counted apart, said to change nothing on the wire.
fn summary(release: &Release) -> String {
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for change in &release.contract_changes {
        *kinds.entry(kind(change)).or_default() += 1;
    }
    let mut summary = match release.contract_changes.len() {
        0 => String::from("<p class=\"summary\">No change to what a client sends or receives"),
        count => format!(
            "<p class=\"summary\">{count} change{plural} to the contract: {kinds}",
            plural = if count == 1 { "" } else { "s" },
            kinds = kinds
                .iter()
                .map(|(kind, count)| format!("{} ({count})", escape(kind)))
                .collect::<Vec<_>>()
                .join(", "),
        ),
    };
    let edits = release.wording_edits().count();
    if edits > 0 {
        let _ = write!(
            summary,
            "; besides, {edits} edit{plural} of descriptions and examples, which change nothing \
             a client sends or receives and are not listed as changes",
            plural = if edits == 1 { "" } else { "s" },
        );
    }
    summary.push_str(".</p>\n");
    summary
}

/// The kind of a change as the gate words it (`GET /ping > 408 response: added`): what
/// changed, read from the last part of where (`response`), and how, with the field that
/// changed if one is named (`operation security added` for `GET /ping: /security added`).
fn kind(change: &str) -> String {
    let (place, how) = change.rsplit_once(": ").unwrap_or((change, "changed"));
    let parts: Vec<&str> = place.split(" > ").collect();
    let last = parts.last().copied().unwrap_or_default();
    let in_response = parts.iter().any(|part| part.ends_with(" response"));
    let noun = if last.starts_with("components/schemas/") {
        "schema"
    } else if last.ends_with(" response") {
        "response"
    } else if last.starts_with("response header ") {
        "response header"
    } else if last.contains('/') && !last.contains(' ') {
        if in_response {
            "response body"
        } else {
            "request body"
        }
    } else if last.contains("parameter ") {
        "parameter"
    } else if parts.len() == 1 && last.contains(" /") {
        "operation"
    } else {
        last
    };
    let mut words = how.split_whitespace();
    let verb = words.next_back().unwrap_or("changed");
    match words.next() {
        Some(field) => {
            let field = field.trim_start_matches('/');
            let field = field.split('/').next().unwrap_or(field);
            format!("{noun} {field} {verb}")
        }
        None => format!("{noun} {verb}"),
    }
}

/// The feed's id: a UUID made once for it. An Atom id must never change (RFC 4287, 4.2.6),
/// and a URL would, with the public URL a deployment configures or the address it binds.
const FEED_ID: uuid::Uuid = uuid::uuid!("f8d622c9-770f-4e21-a1d6-720baca5ba36");

/// A release's entry id: the name-based UUID of its date in the feed's namespace (RFC 9562,
/// version 5), the same on every replica and in every deployment, for ever.
fn entry_id(date: &str) -> String {
    format!("urn:uuid:{}", uuid::Uuid::new_v5(&FEED_ID, date.as_bytes()))
}

/// The Atom feed of releases (RFC 4287), newest first, each entry the release's notes and
/// summary as on the page, linking to its section there; `origin` makes every link absolute.
pub fn changelog_feed(origin: &str) -> String {
    let page_url = format!("{origin}{}", super::CHANGELOG_PATH);
    let releases = releases::record()
        .map(|record| record.releases)
        .unwrap_or_default();
    // No release only if the record does not parse, which a test catches before it ships:
    // the feed is then empty, dated v1's first release.
    let updated = releases
        .last()
        .map(|release| release.date.as_str())
        .unwrap_or("2026-11-23");
    let mut feed = format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n\
         <feed xmlns=\"http://www.w3.org/2005/Atom\" xml:lang=\"en\">\n\
         <title>partner-api changelog</title>\n\
         <subtitle>Each release of the v1 contract: what it means for a client, and what changed.</subtitle>\n\
         <id>urn:uuid:{FEED_ID}</id>\n\
         <updated>{updated}T00:00:00Z</updated>\n\
         <link rel=\"self\" type=\"application/atom+xml\" href=\"{origin}/docs/{FEED_NAME}\"/>\n\
         <link rel=\"alternate\" type=\"text/html\" href=\"{page}\"/>\n\
         <author><name>partner-api</name></author>\n",
        page = escape(&page_url),
        origin = escape(origin),
    );
    for release in releases.iter().rev() {
        let mut content = String::from("<ul>\n");
        for note in &release.notes {
            let _ = writeln!(content, "<li>{}</li>", inline_markup(note));
        }
        content.push_str("</ul>\n");
        content.push_str(&summary(release));
        let _ = write!(
            feed,
            "<entry>\n<title>Contract {revision} ({date})</title>\n\
             <id>{id}</id>\n<published>{date}T00:00:00Z</published>\n\
             <updated>{date}T00:00:00Z</updated>\n\
             <link rel=\"alternate\" type=\"text/html\" href=\"{page}#{date}\"/>\n\
             <content type=\"html\">{content}</content>\n</entry>\n",
            revision = escape(&releases::revision_of(&release.date)),
            id = entry_id(&release.date),
            date = escape(&release.date),
            page = escape(&page_url),
            content = escape(&content),
        );
    }
    feed.push_str("</feed>\n");
    feed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_shows_every_release_its_notes_and_changes() {
        let record = releases::record().unwrap();
        let page = changelog_page();
        for release in &record.releases {
            assert!(page.contains(&format!("<section id=\"{}\">", release.date)));
            for note in &release.notes {
                assert!(page.contains(&inline_markup(note)), "{note}");
            }
            for change in &release.changes {
                assert!(page.contains(&escape(change)), "{change}");
            }
            assert!(page.contains(&summary(release)), "{}", release.date);
        }
        assert!(page.contains("<a href=\"changelog.atom\">Atom feed</a>"));
    }

    #[test]
    fn changes_are_counted_by_kind_and_wording_apart() {
        let release = Release {
            date: "2026-11-25".to_owned(),
            notes: vec!["A note.".to_owned()],
            changes: vec![
                "GET /ping: /security added".to_owned(),
                "GET /ping > 505 response: added".to_owned(),
                "HEAD /ping > 505 response: added".to_owned(),
                "GET /ping > 400 response > response header RateLimit: /description changed"
                    .to_owned(),
                "components/schemas/Id: added".to_owned(),
            ],
            contract_changes: vec![
                "GET /ping: /security added".to_owned(),
                "GET /ping > 505 response: added".to_owned(),
                "HEAD /ping > 505 response: added".to_owned(),
                "components/schemas/Id: added".to_owned(),
            ],
        };
        assert_eq!(
            summary(&release),
            "<p class=\"summary\">4 changes to the contract: operation security added (1), \
             response added (2), schema added (1); besides, 1 edit of descriptions and examples, \
             which change nothing a client sends or receives and are not listed as changes.</p>\n"
        );
    }

    #[test]
    fn kinds_read_the_gates_wording() {
        for (change, expected) in [
            ("GET /ping: added", "operation added"),
            ("GET /things/{thing}: added", "operation added"),
            ("components/schemas/ListEnvelope: added", "schema added"),
            ("GET /ping > default response: added", "response added"),
            (
                "GET /ping > 200 response > response header Sunset: added",
                "response header added",
            ),
            (
                "GET /ping > 405 response > application/json: /schema/properties/error changed",
                "response body schema changed",
            ),
            (
                "GET /ping > query parameter limit: added",
                "parameter added",
            ),
        ] {
            assert_eq!(kind(change), expected, "{change}");
        }
    }

    #[test]
    fn the_feed_has_an_entry_per_release_newest_first_with_absolute_links() {
        let record = releases::record().unwrap();
        let feed = changelog_feed("https://partners.example");
        assert!(feed.starts_with("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\""));
        assert!(feed.contains("<link rel=\"self\" type=\"application/atom+xml\" href=\"https://partners.example/docs/changelog.atom\"/>"));
        let newest = record.releases.last().unwrap();
        assert!(feed.contains(&format!(
            "<updated>{}T00:00:00Z</updated>\n<link rel=\"self\"",
            newest.date
        )));
        let mut at = 0;
        for release in record.releases.iter().rev() {
            let link = format!(
                "href=\"https://partners.example/docs/changelog#{}\"",
                release.date
            );
            let found = feed[at..]
                .find(&link)
                .unwrap_or_else(|| panic!("{link} after the newer ones"));
            at += found + link.len();
        }
        // Ids never change, whatever the origin.
        assert!(feed.contains("<id>urn:uuid:f8d622c9-770f-4e21-a1d6-720baca5ba36</id>"));
        assert_eq!(
            entry_id("2026-11-25"),
            "urn:uuid:002db7ab-81b2-590d-b37b-9df3108aaec6"
        );
        assert!(feed.contains(&format!("<id>{}</id>", entry_id("2026-11-25"))));
        assert_eq!(
            feed.matches("<id>urn:uuid:").count(),
            record.releases.len() + 1
        );
        assert_eq!(feed.matches("<entry>").count(), record.releases.len());
        assert!(!feed.contains("<li>"), "entry content is escaped HTML");
    }
}
