//! The HTML pages and the files they share: the reference (`/docs/`, Swagger UI with the
//! service's own title, links and start-up script), the error pages (`/docs/errors`, generated
//! from the error catalogue with an anchor per code, which is where every `doc_url` points),
//! and the stylesheet every page uses. No page has inline script or style, so the
//! `Content-Security-Policy` can allow the page's own origin and nothing else.

use std::fmt::Write as _;

use crate::errors::{ErrorCode, ErrorType};

/// The `/docs/errors` page: every type and every code of the catalogue, each code under
/// `id="<code>"` with its status, type, when it happens and what a client should do, so that
/// every `doc_url` resolves and a client can handle a code before the first operation that
/// answers it is published. A code none of `in_use` (the served document's operations' codes)
/// is marked as such.
pub fn errors_page(in_use: &[ErrorCode]) -> String {
    let mut page = String::from(ERRORS_INTRODUCTION);
    page.push_str("<h2 id=\"types\">Types</h2>\n<table>\n<tr><th><code>type</code></th><th>Used for</th></tr>\n");
    for error_type in ErrorType::ALL {
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td>{}</td></tr>",
            code_span(error_type.as_str()),
            error_type.used_for()
        );
    }
    page.push_str("</table>\n<h2 id=\"codes\">Codes</h2>\n");
    for code in ErrorCode::ALL {
        let spec = code.spec();
        let unanswered = if in_use.contains(&code) {
            ""
        } else {
            "<dt>Published operations</dt><dd>None answers this code yet: it belongs to \
             operations to come (keys, idempotency, changes of state), and is listed so that \
             a client can handle it from the start.</dd>\n"
        };
        let _ = write!(
            page,
            "<section id=\"{code}\">\n<h3><a href=\"#{code}\"><code>{code}</code></a></h3>\n<dl>\n\
             <dt>HTTP status</dt><dd>{status} {reason}</dd>\n\
             <dt>Type</dt><dd>{error_type}</dd>\n\
             <dt>When</dt><dd>{when}</dd>\n\
             <dt>What to do</dt><dd>{action}</dd>\n{unanswered}</dl>\n</section>\n",
            code = spec.code,
            status = spec.status.as_u16(),
            reason = spec.status.canonical_reason().unwrap_or_default(),
            error_type = code_span(spec.error_type.as_str()),
            when = inline_markup(spec.when),
            action = inline_markup(spec.client_action),
        );
    }
    self::page("Errors", &page)
}

/// Escapes `text` for HTML text and attribute values.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Escapes `text` for HTML and turns `code` spans into `<code>` elements ([`code_span`]).
pub fn inline_markup(text: &str) -> String {
    let mut html = String::with_capacity(text.len() + 16);
    for (index, part) in text.split('`').enumerate() {
        if index % 2 == 1 {
            html.push_str(&code_span(part));
        } else {
            html.push_str(&escape(part));
        }
    }
    html
}

/// `text` as a `<code>` element, escaped, that a narrow column may wrap only between its
/// words: after each `_`, `/`, `.`, `=`, `,` and `;` (`<wbr>`), never inside
/// `invalid_request_error`'s `request`. The pages' tables wrap identifiers and commands there
/// rather than widen the page.
pub fn code_span(text: &str) -> String {
    let mut html = String::from("<code>");
    for character in text.chars() {
        match character {
            '&' => html.push_str("&amp;"),
            '<' => html.push_str("&lt;"),
            '>' => html.push_str("&gt;"),
            '"' => html.push_str("&quot;"),
            '_' | '/' | '.' | '=' | ',' | ';' => {
                html.push(character);
                html.push_str("<wbr>");
            }
            other => html.push(other),
        }
    }
    html.push_str("</code>");
    html
}

const ERRORS_INTRODUCTION: &str = r#"<h1>Errors</h1>
<p>A failed request gets an HTTP status of 400 or higher and a JSON body with a single key
<code>error</code>. Act on <code>type</code> and <code>code</code>; <code>message</code> is for
people and may change. <code>param</code> names the offending parameter (a nested body field is
written <code>parent.child</code>) or is <code>null</code>. Quote the <code>request_id</code>
(also in the <code>Service-Request-Id</code> header) when reporting a problem.</p>
<pre>{
  "error": {
    "type": "invalid_request_error",
    "code": "parameter_unknown",
    "message": "Received unknown parameter: foo",
    "param": "foo",
    "doc_url": "https://api.example.com/docs/errors#parameter_unknown",
    "request_id": "req_8f2d0c6e4b1a4f3e9d7c5b3a1f0e2d4c"
  }
}</pre>
"#;

/// Links every page carries, relative to `/docs/`.
const NAVIGATION: &str = r#"<nav class="site">
<a class="service" href="./">partner-api</a>
<a href="./">API reference</a>
<a href="guide">Guide</a>
<a href="errors">Errors</a>
<a href="changelog">Changelog</a>
<a href="../openapi/v1.yaml">OpenAPI 3.1 (YAML)</a>
<a href="../openapi/v1.json">JSON</a>
<a href="../openapi/v1.oas30.yaml">OpenAPI 3.0.3 (YAML)</a>
<a href="../openapi/v1.oas30.json">JSON</a>
</nav>
"#;

/// Every page names the changelog's feed as its alternate, so a feed reader given any page of
/// the documentation finds it.
const FEED_LINK: &str = "<link rel=\"alternate\" type=\"application/atom+xml\" \
                         title=\"partner-api changelog\" href=\"changelog.atom\">\n";

/// A whole page under `/docs/`: `title`, the shared stylesheet and navigation, and `body`.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <link rel=\"icon\" type=\"image/png\" href=\"favicon-32x32.png\">\n\
         <link rel=\"stylesheet\" href=\"docs.css\">\n{FEED_LINK}<title>{title} · partner-api</title>\n\
         </head>\n<body>\n{NAVIGATION}<main>\n{body}</main>\n</body>\n</html>\n",
        title = escape(title),
    )
}

/// The reference, `/docs/`: Swagger UI started by [`REFERENCE_SCRIPT`] under the service's
/// own heading and navigation. The heading is the page's banner, Swagger UI and what stands in
/// for it its main landmark: a `div` with the role rather than `<main>`, whose styles belong
/// to the service's own pages and must not reach into Swagger UI. Swagger UI's first headings are `h3` (its `h2`, the
/// document's title, is hidden: the page has one title), so a heading of level 2, for
/// assistive technology only, names what it draws.
pub fn reference_page() -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <link rel=\"icon\" type=\"image/png\" href=\"favicon-32x32.png\">\n\
         <link rel=\"stylesheet\" href=\"swagger-ui.css\">\n\
         <link rel=\"stylesheet\" href=\"docs.css\">\n{FEED_LINK}\
         <title>API reference · partner-api</title>\n</head>\n<body class=\"reference\">\n\
         {NAVIGATION}<header class=\"reference\">\n\
         <h1>partner-api reference</h1>\n\
         <p>Every operation of v1, with its parameters, answers and errors. Press \
         <em>Execute</em> to call it from this page; its code samples send the same request \
         from curl, Python or TypeScript. How to call the API well (retries, timeouts, limits, support) is \
         in <a href=\"guide\">the guide</a>, errors in <a href=\"errors\">Errors</a>, changes \
         in <a href=\"changelog\">the changelog</a>.</p>\n</header>\n<div role=\"main\">\n\
         <noscript><p class=\"noscript\">This interactive reference needs JavaScript. Without \
         it, read the contract itself, <a href=\"../openapi/v1.yaml\">OpenAPI 3.1 (YAML)</a> \
         or <a href=\"../openapi/v1.json\">JSON</a>, the <a href=\"guide\">guide</a>, the \
         <a href=\"errors\">errors</a> and the <a href=\"changelog\">changelog</a>.</p>\
         </noscript>\n\
         <h2 class=\"visually-hidden\">The API, its operations and schemas</h2>\n\
         <div id=\"swagger-ui\"></div>\n</div>\n\
         <script src=\"swagger-ui-bundle.js\"></script>\n\
         <script src=\"reference.js\"></script>\n</body>\n</html>\n"
    )
}

/// Starts Swagger UI on the reference page: the service's own document, no "Explore" bar
/// (the base layout), "Try it out" open from the first load, one block of code samples per
/// operation (its `x-codeSamples`; Swagger UI's own request snippets are off), and no
/// validator badge (it would send the document to another origin).
pub const REFERENCE_SCRIPT: &str = include_str!("assets/reference.js");

/// The stylesheet of every page under `/docs/`.
pub const STYLESHEET: &str = include_str!("assets/docs.css");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_an_anchor_and_its_facts() {
        let page = errors_page(&[ErrorCode::ResourceMissing]);
        for code in ErrorCode::ALL {
            let spec = code.spec();
            let start = page
                .find(&format!("<section id=\"{}\">", spec.code))
                .unwrap_or_else(|| panic!("no anchor for {}", spec.code));
            let section = &page[start..start + page[start..].find("</section>").unwrap()];
            assert!(section.contains(&format!("<dd>{} ", spec.status.as_u16())));
            assert!(section.contains(&code_span(spec.error_type.as_str())));
            assert!(section.contains(&inline_markup(spec.client_action)));
            assert_eq!(
                section.contains("None answers this code yet"),
                code != ErrorCode::ResourceMissing,
                "{}",
                spec.code
            );
        }
    }

    #[test]
    fn markup_is_escaped_and_code_spans_become_elements() {
        assert_eq!(
            inline_markup("use `Retry-After` <now> & later"),
            "use <code>Retry-After</code> &lt;now&gt; &amp; later"
        );
        assert_eq!(
            inline_markup("`invalid_request_error` at `/docs/errors`"),
            "<code>invalid_<wbr>request_<wbr>error</code> at \
             <code>/<wbr>docs/<wbr>errors</code>"
        );
    }
}
