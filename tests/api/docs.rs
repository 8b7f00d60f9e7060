//! The documentation served beside the API: the reference page, the changelog, the 3.0.3
//! rendition, and how every file is served (compression, validators, cache lifetimes, the
//! security policy of HTML pages, HEAD wherever GET).

use std::io::Read as _;

use partner_api::docs::{self, CONTENT_SECURITY_POLICY};
use partner_api::openapi;

use crate::helpers::{ExpectedError, TestApp, TestResponse, spawn_app, spawn_app_with};

const OAS30_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/openapi/v1.oas30.yaml");
const CHANGELOG_RECORD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/openapi/changelog.json");

/// Headers that differ between any two responses, whatever the method.
const PER_RESPONSE: [&str; 4] = [
    "date",
    "service-request-id",
    "ratelimit",
    "ratelimit-policy",
];

fn gunzip(body: &[u8]) -> Vec<u8> {
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(body)
        .read_to_end(&mut plain)
        .expect("the body is gzip");
    plain
}

/// GET and HEAD of `path` at `base`: the same status and headers, and HEAD without a body.
async fn assert_head_answers_like_get(app: &TestApp, base: &str, path: &str) {
    let url = format!("{base}{path}");
    // With the test partner's key, which the operations that need one accept and the others
    // ignore.
    let key = &app.keys.writer;
    let get = app.client.get(&url).bearer_auth(key).send().await.unwrap();
    let head = app.client.head(&url).bearer_auth(key).send().await.unwrap();
    assert_eq!(head.status(), get.status(), "HEAD {path}");
    // A thing an API store does not hold (every store but the test build's starts empty) is a
    // 404, answered alike.
    let missing_thing = path.starts_with("/v1/") && get.status() == 404;
    assert!(
        get.status().is_success() || get.status().is_redirection() || missing_thing,
        "GET {path}: {}",
        get.status()
    );
    let names = |response: &reqwest::Response| {
        let mut pairs: Vec<(String, String)> = response
            .headers()
            .iter()
            .filter(|(name, _)| !PER_RESPONSE.contains(&name.as_str()))
            // Metrics move between two scrapes, and their length with them.
            .filter(|(name, _)| !(path == "/metrics" && name.as_str() == "content-length"))
            .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_owned()))
            .collect();
        pairs.sort();
        pairs
    };
    assert_eq!(names(&head), names(&get), "headers of HEAD {path}");
    assert!(
        head.bytes().await.unwrap().is_empty(),
        "HEAD {path} has a body"
    );
}

#[actix_web::test]
async fn every_served_route_answers_head_like_get() {
    // Enough quota for every route twice.
    let app = spawn_app_with(|config| config.rate_limit_burst = 1000).await;
    // Every GET of the document with the test build's endpoints, its path filled in.
    let operations: Vec<String> = crate::document::operations()
        .into_iter()
        .filter(|operation| operation.method == "get")
        .map(|operation| operation.path)
        .collect();
    assert!(operations.contains(&"/v1/things/th_0001".to_owned()));
    for path in operations.iter().map(String::as_str).chain(docs::PATHS) {
        assert_head_answers_like_get(&app, &app.address, path).await;
    }
    for path in partner_api::server::admin::PATHS {
        assert_head_answers_like_get(&app, &app.admin_address, path).await;
    }
}

#[actix_web::test]
async fn the_reference_names_the_service_and_links_everything_a_partner_needs() {
    let app = spawn_app().await;
    let page = app.get("/docs/").await;
    assert_eq!(page.status, 200);
    assert_eq!(page.header("content-type"), "text/html; charset=utf-8");
    assert_eq!(page.header("cache-control"), "no-cache");
    assert_eq!(
        page.header("content-security-policy"),
        CONTENT_SECURITY_POLICY
    );
    assert_eq!(page.header("x-frame-options"), "DENY");
    let html = page.text();
    assert!(
        html.contains("<title>API reference · partner-api</title>"),
        "{html}"
    );
    assert!(html.contains("<h1>partner-api reference</h1>"), "{html}");
    for link in [
        "href=\"errors\"",
        "href=\"changelog\"",
        "href=\"../openapi/v1.yaml\"",
        "href=\"../openapi/v1.json\"",
        "href=\"../openapi/v1.oas30.yaml\"",
        "href=\"../openapi/v1.oas30.json\"",
        "<script src=\"swagger-ui-bundle.js\"></script>",
        "<script src=\"reference.js\"></script>",
    ] {
        assert!(html.contains(link), "the page lacks {link}");
    }
    // Without JavaScript the page still points to the contract, the errors and the changelog.
    let noscript = html
        .split_once("<noscript>")
        .and_then(|(_, rest)| rest.split_once("</noscript>"))
        .expect("a <noscript> element")
        .0;
    for link in [
        "href=\"../openapi/v1.yaml\"",
        "href=\"../openapi/v1.json\"",
        "href=\"errors\"",
        "href=\"changelog\"",
    ] {
        assert!(noscript.contains(link), "<noscript> lacks {link}");
    }
    assert!(
        !html.contains("<script>") && !html.contains("<style"),
        "inline code breaks the CSP"
    );
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "{html}"
    );

    let script = app.get("/docs/reference.js").await;
    assert_eq!(script.status, 200);
    assert_eq!(script.header("content-type"), "text/javascript");
    let script = script.text();
    for setting in [
        r#"fetch("../openapi/v1.json""#,
        "spec: document",
        r#"layout: "BaseLayout""#,
        "tryItOutEnabled: true",
        "requestSnippetsEnabled: false",
        "validatorUrl: null",
    ] {
        assert!(script.contains(setting), "reference.js lacks {setting}");
    }
    // The standalone preset draws the "Explore" bar; the page does not load it.
    assert!(!script.contains("StandalonePreset"));
    assert_eq!(
        app.get("/docs/swagger-ui-standalone-preset.js")
            .await
            .status,
        404
    );

    let redirect = app.get("/docs").await;
    assert_eq!(redirect.status, 308);
    assert_eq!(redirect.header("location"), "docs/");
}

/// A slash too many on the guide's pages is a redirect, not a raw JSON 404; the root sends a
/// browser to the reference, and an API client still gets the JSON 404 of an unknown path.
#[actix_web::test]
async fn browsers_are_sent_to_the_pages_and_api_clients_get_json() {
    let app = spawn_app().await;
    for (path, location) in [
        ("/docs/errors/", "../errors"),
        ("/docs/changelog/", "../changelog"),
        ("/docs/guide/", "../guide"),
    ] {
        let redirect = app.get(path).await;
        assert_eq!(redirect.status, 308, "{path}");
        assert_eq!(redirect.header("location"), location, "{path}");
    }

    let browser = app
        .send(app.request("GET", "/").header(
            "accept",
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        ))
        .await;
    assert_eq!(browser.status, 302);
    assert_eq!(browser.header("location"), "docs/");
    assert_eq!(browser.header("vary"), "Accept");
    assert!(browser.body.is_empty());

    // An API client that also takes HTML, but not rather than JSON, gets JSON.
    for accept in [
        None,
        Some("*/*"),
        Some("application/json"),
        Some("application/json, text/html"),
    ] {
        for method in ["GET", "POST"] {
            let mut request = app.request(method, "/");
            if let Some(accept) = accept {
                request = request.header("accept", accept);
            }
            let answer = app.send(request).await;
            app.assert_error(
                &answer,
                ExpectedError::invalid_request(
                    404,
                    "resource_missing",
                    &format!("Unrecognized request URL ({method}: /)."),
                    None,
                ),
            );
        }
    }
}

#[actix_web::test]
async fn static_files_are_compressed_when_accepted_and_answered_304_when_unchanged() {
    let app = spawn_app().await;
    let plain = app.get("/docs/swagger-ui-bundle.js").await;
    assert_eq!(plain.status, 200);
    assert_eq!(plain.header("content-type"), "text/javascript");
    assert_eq!(plain.header("cache-control"), "public, max-age=3600");
    assert_eq!(plain.header("vary"), "accept-encoding");
    assert!(plain.headers.get("content-encoding").is_none());
    assert!(plain.body.len() > 500_000, "{} bytes", plain.body.len());

    let gzip = app
        .send(
            app.request("GET", "/docs/swagger-ui-bundle.js")
                .header("accept-encoding", "gzip, br"),
        )
        .await;
    assert_eq!(gzip.status, 200);
    assert_eq!(gzip.header("content-encoding"), "gzip");
    assert_eq!(gzip.header("vary"), "accept-encoding");
    assert!(
        gzip.body.len() * 2 < plain.body.len(),
        "gzip saves less than half"
    );
    assert_eq!(gunzip(&gzip.body), plain.body);
    assert_ne!(
        gzip.header("etag"),
        plain.header("etag"),
        "one validator per representation"
    );

    let refused = app
        .send(
            app.request("GET", "/docs/swagger-ui-bundle.js")
                .header("accept-encoding", "gzip;q=0"),
        )
        .await;
    assert!(refused.headers.get("content-encoding").is_none());
    assert_eq!(refused.body, plain.body);

    for (encoding, first) in [("identity", &plain), ("gzip", &gzip)] {
        let again = app
            .send(
                app.request("GET", "/docs/swagger-ui-bundle.js")
                    .header("accept-encoding", encoding)
                    .header("if-none-match", first.header("etag")),
            )
            .await;
        assert_eq!(again.status, 304, "{encoding}");
        assert!(again.body.is_empty());
        assert_eq!(again.header("etag"), first.header("etag"));
        assert_eq!(again.header("cache-control"), "public, max-age=3600");
    }
    let stale = app
        .send(
            app.request("GET", "/docs/swagger-ui-bundle.js")
                .header("if-none-match", "\"other\""),
        )
        .await;
    assert_eq!(stale.status, 200);
    assert_eq!(stale.body, plain.body);

    // Images are compressed already: one representation, no Vary.
    let icon = app
        .send(
            app.request("GET", "/docs/favicon-32x32.png")
                .header("accept-encoding", "gzip"),
        )
        .await;
    assert_eq!(icon.status, 200);
    assert_eq!(icon.header("content-type"), "image/png");
    assert!(icon.headers.get("content-encoding").is_none());
    assert!(icon.headers.get("vary").is_none());
}

#[actix_web::test]
async fn pages_and_documents_are_revalidated_and_the_api_is_never_cached() {
    let app = spawn_app().await;
    for path in [
        docs::REFERENCE_PATH,
        docs::ERRORS_PATH,
        docs::CHANGELOG_PATH,
        docs::OAS30_JSON_PATH,
    ] {
        let first = app.get(path).await;
        assert_eq!(first.header("cache-control"), "no-cache", "{path}");
        let again = app
            .send(
                app.request("GET", path)
                    .header("if-none-match", first.header("etag")),
            )
            .await;
        assert_eq!(again.status, 304, "{path}");
    }
    let ping = app.get("/v1/ping").await;
    assert_eq!(ping.header("cache-control"), "no-store");
    assert!(ping.headers.get("etag").is_none());
    let missing = app.get("/docs/nothing-here.js").await;
    assert_eq!(missing.status, 404);
    assert_eq!(missing.header("cache-control"), "no-store");
    assert_eq!(missing.json()["error"]["code"], "resource_missing");
}

#[actix_web::test]
async fn every_html_page_forbids_other_origins_and_framing() {
    let app = spawn_app().await;
    for path in [
        docs::REFERENCE_PATH,
        docs::ERRORS_PATH,
        docs::CHANGELOG_PATH,
    ] {
        let page = app.get(path).await;
        assert_eq!(
            page.header("content-security-policy"),
            CONTENT_SECURITY_POLICY,
            "{path}"
        );
        assert_eq!(page.header("x-frame-options"), "DENY", "{path}");
        let html = page.text();
        assert!(
            html.contains("<link rel=\"stylesheet\" href=\"docs.css\">"),
            "{path}"
        );
        assert!(
            !html.contains("<style") && !html.contains("<script>"),
            "{path}"
        );
    }
    assert_eq!(
        CONTENT_SECURITY_POLICY,
        "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; \
         form-action 'none'; frame-ancestors 'none'"
    );
}

#[test]
fn committed_rendition_is_what_the_code_emits() {
    let committed = std::fs::read_to_string(OAS30_PATH).unwrap();
    let emitted = openapi::oas30::to_yaml(&openapi::document());
    if committed != emitted {
        let diff = similar::TextDiff::from_lines(&committed, &emitted)
            .unified_diff()
            .header("openapi/v1.oas30.yaml (committed)", "emitted by the code")
            .to_string();
        panic!(
            "openapi/v1.oas30.yaml differs from what the code emits:\n\n{diff}\n\
             If the change is intended, run `scripts/update-openapi` and commit the result."
        );
    }
}

#[actix_web::test]
async fn the_server_serves_the_committed_rendition() {
    let app = spawn_app().await;
    // The committed document's placeholder origin (its server, guide and contact) is the one
    // thing a server replaces.
    let committed = crate::helpers::as_served_at(
        &std::fs::read_to_string(OAS30_PATH).unwrap(),
        &format!("http://{}", app.local_addr),
    );
    let yaml = app.get(docs::OAS30_YAML_PATH).await;
    assert_eq!(yaml.status, 200);
    assert_eq!(yaml.header("content-type"), "application/yaml");
    assert!(
        yaml.text() == committed,
        "the served rendition differs from the committed one"
    );
    let json: TestResponse = app.get(docs::OAS30_JSON_PATH).await;
    assert_eq!(json.header("content-type"), "application/json");
    let from_yaml: serde_json::Value = yaml_serde::from_str(&committed).unwrap();
    assert_eq!(json.json(), from_yaml);
    assert_eq!(json.json()["openapi"], "3.0.3");
}

/// The four documents a server serves: both renditions, in JSON and YAML.
const DOCUMENTS: [&str; 4] = [
    docs::DOCUMENT_JSON_PATH,
    docs::DOCUMENT_YAML_PATH,
    docs::OAS30_JSON_PATH,
    docs::OAS30_YAML_PATH,
];

/// The four documents as a server serves them, written for `scripts/lint-openapi` to lint
/// with the project's rules (`target/served-documents/`): what partners' tools read is held
/// to zero findings too, not only the committed YAML.
#[actix_web::test]
async fn the_served_documents_are_written_for_the_lint() {
    let app = spawn_app().await;
    let directory = concat!(env!("CARGO_MANIFEST_DIR"), "/target/served-documents");
    std::fs::create_dir_all(directory).unwrap();
    for path in DOCUMENTS {
        let served = app.get(path).await;
        assert_eq!(served.status, 200, "{path}");
        let name = path.rsplit('/').next().unwrap();
        std::fs::write(format!("{directory}/{name}"), served.text()).unwrap();
    }
}

/// Without `--public-url` the served documents name the listener's own origin, whatever
/// `Host` a request names: a document is the same for every client (and cacheable), so a
/// client generated from a local run's document calls `http://127.0.0.1:<port>/v1` as is.
#[actix_web::test]
async fn served_documents_name_the_listeners_origin_without_a_public_url() {
    let app = spawn_app().await;
    for host in [None, Some("evil.example.test:8080")] {
        for path in [docs::DOCUMENT_JSON_PATH, docs::OAS30_YAML_PATH] {
            let mut request = app.request("GET", path);
            if let Some(host) = host {
                request = request.header("host", host);
            }
            let served = app.send(request).await;
            assert_eq!(served.status, 200, "{path}");
            let document: serde_json::Value = yaml_serde::from_str(&served.text()).unwrap();
            assert_eq!(
                document["servers"],
                serde_json::json!([{
                    "url": format!("http://{}/v1", app.local_addr),
                    "description": "partner-api, version 1",
                }]),
                "{path} {host:?}"
            );
        }
    }
}

/// The served documents name the configured public URL in their server's URL, so a
/// client generated from them calls the right host; browser-based tools on any origin may read
/// them, and nothing else of the service answers another origin.
#[actix_web::test]
async fn served_documents_name_the_public_url_and_any_origin_may_read_them() {
    let app = spawn_app_with(|config| {
        use clap::Parser;
        config.public_url = partner_api::server::config::Cli::try_parse_from([
            "partner-api",
            "--public-url",
            "https://partners.example.test/api",
        ])
        .unwrap()
        .server
        .public_url;
    })
    .await;
    for path in DOCUMENTS {
        let served = app.get(path).await;
        assert_eq!(served.status, 200, "{path}");
        assert_eq!(served.header("access-control-allow-origin"), "*", "{path}");
        let document: serde_json::Value = yaml_serde::from_str(&served.text()).unwrap();
        assert_eq!(
            document["servers"],
            serde_json::json!([{
                "url": "https://partners.example.test/api/v1",
                "description": "partner-api, version 1",
            }]),
            "{path}"
        );
        // The guide, and the support section as the contact, on the same origin.
        assert_eq!(
            document["externalDocs"]["url"], "https://partners.example.test/api/docs/guide",
            "{path}"
        );
        assert_eq!(
            document["info"]["contact"]["url"],
            "https://partners.example.test/api/docs/guide#support-and-escalation",
            "{path}"
        );
    }
    for path in ["/v1/ping", docs::REFERENCE_PATH, docs::ERRORS_PATH] {
        let answer = app.get(path).await;
        assert!(
            answer.headers.get("access-control-allow-origin").is_none(),
            "{path}"
        );
    }
}

#[actix_web::test]
async fn the_changelog_lists_every_recorded_release() {
    let app = spawn_app().await;
    let page = app.get(docs::CHANGELOG_PATH).await;
    assert_eq!(page.status, 200);
    let html = page.text();
    assert!(html.contains("<title>Changelog · partner-api</title>"));
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(CHANGELOG_RECORD).unwrap()).unwrap();
    for release in record["releases"].as_array().unwrap() {
        let date = release["date"].as_str().unwrap();
        assert!(html.contains(&format!("<section id=\"{date}\">")), "{date}");
        for change in release["changes"].as_array().unwrap() {
            // As HTML text: a change names where it is with `>`.
            let text = change
                .as_str()
                .unwrap()
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;");
            let line = format!("<li><code>{text}</code></li>");
            assert!(html.contains(&line), "{line}");
        }
    }
}

/// The changelog's feed: Atom, one entry per release, newest first, with the listener's own
/// origin in its links (no `--public-url` here) but not in its ids, named as the alternate of
/// every page.
#[actix_web::test]
async fn the_changelog_has_an_atom_feed_every_page_names() {
    let app = spawn_app().await;
    let origin = format!("http://{}", app.local_addr);
    let feed = app.get(docs::CHANGELOG_FEED_PATH).await;
    assert_eq!(feed.status, 200);
    assert_eq!(feed.header("content-type"), "application/atom+xml");
    let xml = feed.text();
    assert!(xml.starts_with(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\" xml:lang=\"en\">\n"
    ));
    assert!(xml.contains(&format!(
        "<link rel=\"self\" type=\"application/atom+xml\" href=\"{origin}/docs/changelog.atom\"/>"
    )));
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(CHANGELOG_RECORD).unwrap()).unwrap();
    let dates: Vec<&str> = record["releases"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .map(|release| release["date"].as_str().unwrap())
        .collect();
    let alternate = "<link rel=\"alternate\" type=\"text/html\" href=\"";
    let links: Vec<String> = xml
        .split("<entry>\n")
        .skip(1)
        .map(|entry| {
            let start = entry.find(alternate).unwrap() + alternate.len();
            entry[start..start + entry[start..].find('"').unwrap()].to_owned()
        })
        .collect();
    let expected: Vec<String> = dates
        .iter()
        .map(|date| format!("{origin}/docs/changelog#{date}"))
        .collect();
    assert_eq!(links, expected);
    // The ids are not the origin's: the same wherever the feed is served from.
    assert!(xml.contains("<id>urn:uuid:f8d622c9-770f-4e21-a1d6-720baca5ba36</id>\n"));
    assert!(!xml.contains(&format!("<id>{origin}")));
    assert!(xml.ends_with("</feed>\n"));

    let link = "<link rel=\"alternate\" type=\"application/atom+xml\" title=\"partner-api changelog\" href=\"changelog.atom\">";
    for page in [
        docs::REFERENCE_PATH,
        docs::ERRORS_PATH,
        docs::CHANGELOG_PATH,
        docs::GUIDE_PATH,
    ] {
        let html = app.get(page).await.text();
        assert!(html.contains(link), "{page}");
    }
}

/// The README's first example is what a client sees: the same status line, the same header
/// names (values such as the request id and the date vary) and the same body. It once left out
/// the `RateLimit` headers every answer carries.
#[actix_web::test]
async fn the_readmes_example_shows_what_a_ping_gets() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let example = readme
        .split("$ curl -i localhost:8080/v1/ping\n")
        .nth(1)
        .expect("the README shows a ping with curl -i");
    let mut lines = example.lines();
    assert_eq!(lines.next(), Some("HTTP/1.1 200 OK"));
    let mut shown: Vec<String> = lines
        .by_ref()
        .take_while(|line| !line.is_empty())
        .map(|line| line.split_once(':').expect("a header line").0.to_owned())
        .collect();
    let body = lines.next().expect("the body after the blank line");

    let app = spawn_app().await;
    let ping = app.get("/v1/ping").await;
    assert_eq!(ping.status, 200);
    let mut sent: Vec<String> = ping.headers.keys().map(|name| name.to_string()).collect();
    shown.sort();
    sent.sort();
    assert_eq!(shown, sent);
    assert_eq!(body, ping.text());
}

/// The partners' guide is served beside the reference, from PARTNERS.md itself: each of its
/// sections is on the page, under an anchor the document's contact can name, and the
/// navigation of every page links it.
#[actix_web::test]
async fn the_guide_is_partners_md_served_beside_the_reference() {
    let app = spawn_app().await;
    let guide = app.get(docs::GUIDE_PATH).await;
    assert_eq!(guide.status, 200);
    assert_eq!(guide.header("content-type"), "text/html; charset=utf-8");
    assert_eq!(
        guide.header("content-security-policy"),
        CONTENT_SECURITY_POLICY
    );
    let html = guide.text();
    assert!(html.contains("<title>Guide for partners · partner-api</title>"));
    let source = std::fs::read_to_string("PARTNERS.md").unwrap();
    for heading in source.lines().filter_map(|line| line.strip_prefix("## ")) {
        assert!(
            html.contains(&format!(">{heading}</h2>")),
            "the guide lacks {heading}"
        );
    }
    assert!(html.contains("<h2 id=\"support-and-escalation\">Support and escalation</h2>"));
    // The Keys paragraph says what the published document does: no endpoint needs a key,
    // until one does (CONTRIBUTING.md, "How to add an endpoint", step 6).
    let keyed = partner_api::openapi::codes_in_use(&partner_api::openapi::document())
        .contains(&partner_api::errors::ErrorCode::KeyMissing);
    assert_eq!(
        html.contains("<strong>Keys.</strong> No endpoint needs a key yet"),
        !keyed,
        "PARTNERS.md's Keys paragraph and the document disagree on whether an endpoint needs a key"
    );
    for page in [
        docs::REFERENCE_PATH,
        docs::ERRORS_PATH,
        docs::CHANGELOG_PATH,
        docs::GUIDE_PATH,
    ] {
        assert!(
            app.get(page)
                .await
                .text()
                .contains("<a href=\"guide\">Guide</a>"),
            "{page} does not link the guide"
        );
    }
}
