//! The partner-facing changelog of v1, `/docs/changelog`, rendered from the release record
//! (`openapi::releases`): per release, newest first, what it means for a client, one sentence
//! a change, with the breaking-change gate's list of changes folded below it for whoever
//! diffs documents. The record is compiled in, so the page always matches the documents the
//! same binary serves.

use std::fmt::Write as _;

use super::pages::{escape, inline_markup, page};
use crate::openapi::releases;

/// The `/docs/changelog` page: releases newest first.
pub fn changelog_page() -> String {
    let mut body = String::from(
        "<h1>Changelog</h1>\n<p>What changed in v1, newest first, as released. Within v1 every \
         change is additive, so a client generated from an earlier document keeps working: new \
         endpoints, new optional parameters, new response fields and headers, new error codes \
         under the existing types. Nothing is removed or renamed, no parameter becomes \
         required, no type or format changes and no response enum gains a value; such a change \
         would ship as a new version path, beside v1. The document's <code>info.version</code> \
         names the release it belongs to: <code>1.YYYYMMDD.0</code>, its date.</p>\n",
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
                let _ = write!(
                    body,
                    "</ul>\n<details>\n<summary>Every change to the document ({})</summary>\n\
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
        }
    }
}
