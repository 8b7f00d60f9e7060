//! The partners' guide, `/docs/guide`: PARTNERS.md, rendered from the file itself at build time
//! (`include_str!`), so that what partners read beside the reference and the guide in the
//! repository are one text and cannot drift. Each heading gets an `id` made from its words
//! (`#support-and-escalation`, [`crate::openapi::SUPPORT_ANCHOR`], which the document's `info.contact`
//! names), for links from the document and from people.

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};

use super::pages;

/// The guide's source, the repository's PARTNERS.md.
const SOURCE: &str = include_str!("../../PARTNERS.md");

/// The whole page.
pub fn guide_page() -> String {
    pages::page("Guide for partners", &render(SOURCE))
}

/// `markdown` as HTML, headings with ids.
fn render(markdown: &str) -> String {
    // Raw HTML in the Markdown is shown as text, never passed on as markup.
    let mut events: Vec<Event<'_>> = Parser::new_ext(markdown, Options::ENABLE_TABLES)
        .map(|event| match event {
            Event::Html(html) | Event::InlineHtml(html) => Event::Text(html),
            other => other,
        })
        .collect();
    let mut index = 0;
    while index < events.len() {
        if let Event::Start(Tag::Heading { .. }) = &events[index] {
            let mut words = String::new();
            for event in &events[index + 1..] {
                match event {
                    Event::End(TagEnd::Heading(_)) => break,
                    Event::Text(text) | Event::Code(text) => words.push_str(text),
                    _ => {}
                }
            }
            if let Event::Start(Tag::Heading { id, .. }) = &mut events[index] {
                *id = Some(CowStr::from(slug(&words)));
            }
        }
        index += 1;
    }
    // Code spans wrap only between their words (`pages::code_span`), in the tables too; a
    // table wider than a phone scrolls inside a region of its own, reached by keyboard and
    // named by its columns, rather than break a word or widen the page.
    let mut named = Vec::new();
    let mut in_head = None;
    for event in &events {
        match event {
            Event::Start(Tag::TableHead) => in_head = Some(Vec::new()),
            Event::Text(text) | Event::Code(text) if in_head.is_some() => {
                if let Some(columns) = &mut in_head {
                    columns.push(text.to_string());
                }
            }
            Event::End(TagEnd::TableHead) => named.push(in_head.take().unwrap_or_default()),
            _ => {}
        }
    }
    let mut names = named.into_iter();
    let events = events.into_iter().flat_map(|event| match event {
        Event::Code(text) => vec![Event::InlineHtml(CowStr::from(pages::code_span(&text)))],
        Event::Start(Tag::Table(alignments)) => {
            let columns = names.next().unwrap_or_default().join(", ");
            let label = pages::escape(&format!("Table: {columns}"));
            let region = format!(
                "<div class=\"table-scroll\" role=\"region\" tabindex=\"0\" aria-label=\"{label}\">\n"
            );
            vec![
                Event::Html(CowStr::from(region)),
                Event::Start(Tag::Table(alignments)),
            ]
        }
        Event::End(TagEnd::Table) => vec![
            Event::End(TagEnd::Table),
            Event::Html(CowStr::from("</div>\n")),
        ],
        other => vec![other],
    });
    let mut html = String::with_capacity(markdown.len() * 2);
    pulldown_cmark::html::push_html(&mut html, events);
    html
}

/// Lower-case letters and digits, runs of anything else one `-`.
fn slug(words: &str) -> String {
    let mut slug = String::with_capacity(words.len());
    for character in words.chars() {
        if character.is_ascii_alphanumeric() {
            slug.push(character.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    slug.trim_end_matches('-').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openapi::SUPPORT_ANCHOR;

    /// Headings get ids from their words; tables and code spans render; the support section
    /// the document links to exists.
    #[test]
    fn the_guide_renders_with_anchored_headings() {
        let html = render(
            "# A `guide`, here\n\n## Retries and backoff\n\n| a | b |\n| --- | --- |\n| 1 | `2_3` |\n",
        );
        assert_eq!(
            html,
            "<h1 id=\"a-guide-here\">A <code>guide</code>, here</h1>\n\
             <h2 id=\"retries-and-backoff\">Retries and backoff</h2>\n\
             <div class=\"table-scroll\" role=\"region\" tabindex=\"0\" aria-label=\"Table: a, b\">\n\
             <table><thead><tr><th>a</th><th>b</th></tr></thead><tbody>\n\
             <tr><td>1</td><td><code>2_<wbr>3</code></td></tr>\n</tbody></table>\n</div>\n"
        );
        assert!(guide_page().contains(&format!("<h2 id=\"{SUPPORT_ANCHOR}\">")));
        assert_eq!(
            render("a <script>x</script> b\n"),
            "<p>a &lt;script&gt;x&lt;/script&gt; b</p>\n"
        );
    }
}
