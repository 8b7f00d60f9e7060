//! What is served next to the API for people and tools, outside `/v1` so that every `/v1`
//! response stays JSON: the OpenAPI document at `/openapi/v1.json` and `/openapi/v1.yaml`
//! (byte for byte what `partner-api openapi` prints), the hosted reference at `/docs/`
//! (Swagger UI, vendored into the binary, so nothing is fetched from the internet), and
//! `/docs/errors`, a plain HTML page generated from the error catalogue with an anchor per
//! code, which is where every `doc_url` points. These routes are not API operations, so they
//! are mounted on the plain actix-web app and stay out of the OpenAPI document on purpose.

use std::fmt::Write as _;
use std::sync::LazyLock;

use actix_web::http::header::{self, ContentType};
use actix_web::{HttpResponse, guard, web};
use utoipa_swagger_ui::{Config, SwaggerUi};

use crate::errors::{ErrorCode, ErrorType};
use crate::openapi;

pub const DOCUMENT_JSON_PATH: &str = "/openapi/v1.json";
pub const DOCUMENT_YAML_PATH: &str = "/openapi/v1.yaml";
pub const ERRORS_PATH: &str = "/docs/errors";
const REFERENCE_PATH: &str = "/docs";

/// Paths served here that answer GET and HEAD, for the route table's 405 answers.
pub const PATHS: [&str; 4] = [
    DOCUMENT_JSON_PATH,
    DOCUMENT_YAML_PATH,
    ERRORS_PATH,
    REFERENCE_PATH,
];

/// Rendered on first use and shared by all workers: the document cannot change at run time.
struct Published {
    json: String,
    yaml: String,
    errors_page: String,
}

static PUBLISHED: LazyLock<Published> = LazyLock::new(|| {
    let document = openapi::document();
    Published {
        json: openapi::to_json(&document),
        yaml: openapi::to_yaml(&document),
        errors_page: errors_page(),
    }
});

/// Mounts the documents, the reference and the error pages.
pub fn register(config: &mut web::ServiceConfig) {
    let get_or_head = || guard::Any(guard::Get()).or(guard::Head());
    config
        .service(
            web::resource(DOCUMENT_JSON_PATH)
                .guard(get_or_head())
                .to(|| async { respond(ContentType::json(), &PUBLISHED.json) }),
        )
        .service(
            web::resource(DOCUMENT_YAML_PATH)
                .guard(get_or_head())
                .to(|| async {
                    // RFC 9512 registers application/yaml.
                    let yaml = ContentType("application/yaml".parse().expect("valid media type"));
                    respond(yaml, &PUBLISHED.yaml)
                }),
        )
        .service(
            web::resource(ERRORS_PATH)
                .guard(get_or_head())
                .to(|| async { respond(ContentType::html(), &PUBLISHED.errors_page) }),
        )
        .service(
            // Swagger UI's page loads its assets relative to `/docs/`.
            web::resource(REFERENCE_PATH)
                .guard(get_or_head())
                .to(|| async {
                    HttpResponse::PermanentRedirect()
                        .insert_header((header::LOCATION, "docs/"))
                        .finish()
                }),
        )
        .service(
            SwaggerUi::new("/docs/{_:.*}").config(
                Config::new(["../openapi/v1.json"])
                    .validator_url("none")
                    .display_operation_id(true)
                    .default_models_expand_depth(1),
            ),
        );
}

fn respond(content_type: ContentType, body: &'static str) -> HttpResponse {
    HttpResponse::Ok().content_type(content_type).body(body)
}

/// The `/docs/errors` page: every type and code of the catalogue, each code under
/// `id="<code>"` with its status, type, when it happens and what a client should do.
fn errors_page() -> String {
    let mut page = String::from(ERRORS_PAGE_HEAD);
    page.push_str("<h2 id=\"types\">Types</h2>\n<table>\n<tr><th><code>type</code></th><th>Used for</th></tr>\n");
    for error_type in ErrorType::ALL {
        let _ = writeln!(
            page,
            "<tr><td><code>{}</code></td><td>{}</td></tr>",
            error_type.as_str(),
            error_type.used_for()
        );
    }
    page.push_str("</table>\n<h2 id=\"codes\">Codes</h2>\n");
    for code in ErrorCode::ALL {
        let spec = code.spec();
        let _ = write!(
            page,
            "<section id=\"{code}\">\n<h3><a href=\"#{code}\"><code>{code}</code></a></h3>\n<dl>\n\
             <dt>HTTP status</dt><dd>{status} {reason}</dd>\n\
             <dt>Type</dt><dd><code>{error_type}</code></dd>\n\
             <dt>When</dt><dd>{when}</dd>\n\
             <dt>What to do</dt><dd>{action}</dd>\n</dl>\n</section>\n",
            code = spec.code,
            status = spec.status.as_u16(),
            reason = spec.status.canonical_reason().unwrap_or_default(),
            error_type = spec.error_type.as_str(),
            when = inline_markup(spec.when),
            action = inline_markup(spec.client_action),
        );
    }
    page.push_str(ERRORS_PAGE_FOOT);
    page
}

/// Escapes `text` for HTML and turns `code` spans into `<code>` elements.
fn inline_markup(text: &str) -> String {
    let mut html = String::with_capacity(text.len() + 16);
    for (index, part) in text.split('`').enumerate() {
        let escaped = part
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        if index % 2 == 1 {
            let _ = write!(html, "<code>{escaped}</code>");
        } else {
            html.push_str(&escaped);
        }
    }
    html
}

const ERRORS_PAGE_HEAD: &str = r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>Errors · partner-api</title>
<style>
body { font-family: system-ui, sans-serif; line-height: 1.5; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; color: #1d1d1f; }
code, pre { font-family: ui-monospace, monospace; background: #f3f3f5; border-radius: 3px; padding: 0 .2em; }
pre { padding: .75rem; overflow-x: auto; }
table { border-collapse: collapse; }
th, td { text-align: left; padding: .25rem 1rem .25rem 0; border-bottom: 1px solid #ddd; }
section { border-top: 1px solid #ddd; padding: .25rem .5rem .5rem; scroll-margin-top: 1rem; }
section:target { background: #fff7d1; }
h3 a { color: inherit; text-decoration: none; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0; }
dt { font-weight: 600; }
dd { margin: 0; }
</style>
</head>
<body>
<h1>Errors</h1>
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

const ERRORS_PAGE_FOOT: &str = r#"<p><a href="./">API reference</a> ·
<a href="../openapi/v1.yaml">OpenAPI document</a></p>
</body>
</html>
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_an_anchor_and_its_facts() {
        let page = errors_page();
        for code in ErrorCode::ALL {
            let spec = code.spec();
            let start = page
                .find(&format!("<section id=\"{}\">", spec.code))
                .unwrap_or_else(|| panic!("no anchor for {}", spec.code));
            let section = &page[start..start + page[start..].find("</section>").unwrap()];
            assert!(section.contains(&format!("<dd>{} ", spec.status.as_u16())));
            assert!(section.contains(&format!("<code>{}</code>", spec.error_type.as_str())));
            assert!(section.contains(&inline_markup(spec.client_action)));
        }
    }

    #[test]
    fn markup_is_escaped_and_code_spans_become_elements() {
        assert_eq!(
            inline_markup("use `Retry-After` <now> & later"),
            "use <code>Retry-After</code> &lt;now&gt; &amp; later"
        );
    }
}
