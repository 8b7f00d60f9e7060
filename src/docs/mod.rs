//! What is served next to the API for people and tools, outside `/v1` so that every `/v1`
//! response stays JSON: the OpenAPI document at `/openapi/v1.json` and `/openapi/v1.yaml`
//! (byte for byte what `partner-api openapi` prints), its 3.0.3 rendition at
//! `/openapi/v1.oas30.json` and `/openapi/v1.oas30.yaml`, the hosted reference at `/docs/`
//! (Swagger UI, vendored into the binary, so nothing is fetched from another origin), the
//! error pages at `/docs/errors` and the changelog at `/docs/changelog`, with its Atom feed at
//! `/docs/changelog.atom`. These routes are not
//! API operations, so they are mounted on the plain actix-web app and stay out of the OpenAPI
//! document on purpose. Every file is rendered once, on first use, and served by
//! [`static_file`]: compressed, cacheable with validators, `HEAD` wherever `GET`.

mod changelog;
pub mod guide;
mod pages;
mod static_file;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use actix_web::http::header;
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, guard, web};

use crate::errors::ApiError;
use crate::openapi;
use static_file::{Lifetime, StaticFile};

pub use static_file::CONTENT_SECURITY_POLICY;

pub const DOCUMENT_JSON_PATH: &str = "/openapi/v1.json";
pub const DOCUMENT_YAML_PATH: &str = "/openapi/v1.yaml";
pub const OAS30_JSON_PATH: &str = "/openapi/v1.oas30.json";
pub const OAS30_YAML_PATH: &str = "/openapi/v1.oas30.yaml";
pub const ERRORS_PATH: &str = "/docs/errors";
pub const CHANGELOG_PATH: &str = "/docs/changelog";
/// The changelog as an Atom feed, which every page names as its `alternate`.
pub const CHANGELOG_FEED_PATH: &str = "/docs/changelog.atom";
/// The partners' guide: where the document's `externalDocs` and `info.contact` point.
pub const GUIDE_PATH: &str = openapi::GUIDE_PATH;
pub const REFERENCE_PATH: &str = "/docs/";
/// Answers with a redirect to [`REFERENCE_PATH`], whose files are addressed relative to it.
const REFERENCE_REDIRECT_PATH: &str = "/docs";

/// Paths a reader may type or be linked to with a slash too many or too few, each with where
/// it is permanently redirected: relative, so that a path prefix a proxy adds is kept.
const REDIRECTS: [(&str, &str); 4] = [
    (REFERENCE_REDIRECT_PATH, "docs/"),
    ("/docs/errors/", "../errors"),
    ("/docs/changelog/", "../changelog"),
    ("/docs/guide/", "../guide"),
];

/// The service's root, which holds no resource: a browser (one that asks for HTML) is sent
/// to the reference; an API client still gets the JSON 404 of any unknown path. Not in
/// [`PATHS`]: for every other method and reader it is no route at all.
pub const ROOT_PATH: &str = "/";

/// The Swagger UI files the reference page loads, by their names in the vendored distribution.
const SWAGGER_UI_FILES: [&str; 3] = [
    "swagger-ui.css",
    "swagger-ui-bundle.js",
    "favicon-32x32.png",
];

/// Every path served here; each answers `GET` and `HEAD` (for the route table's 405 answers,
/// the metrics labels and the test that walks every route).
pub const PATHS: [&str; 18] = [
    DOCUMENT_JSON_PATH,
    DOCUMENT_YAML_PATH,
    OAS30_JSON_PATH,
    OAS30_YAML_PATH,
    REFERENCE_REDIRECT_PATH,
    "/docs/errors/",
    "/docs/changelog/",
    "/docs/guide/",
    REFERENCE_PATH,
    ERRORS_PATH,
    CHANGELOG_PATH,
    CHANGELOG_FEED_PATH,
    GUIDE_PATH,
    "/docs/docs.css",
    "/docs/reference.js",
    "/docs/swagger-ui.css",
    "/docs/swagger-ui-bundle.js",
    "/docs/favicon-32x32.png",
];

/// The files, rendered on first use and shared by all workers: none can change at run time.
/// Not at start-up: that costs every replica the files' memory whether anyone reads the
/// documentation or not, and rendering them at start-up on a thread of its own leaves the heap
/// fragmented for a replica that never serves them (`scripts/soak limiter` shows it after
/// pruning a million clients). Not on a worker either: rendering and compressing them takes
/// long enough that every other request on that worker would notice the wait. So the first
/// request hands the work to the blocking pool ([`Docs::files`]) and waits for it there,
/// while its worker goes on.
#[derive(Clone)]
pub struct Docs {
    /// The origin the served documents name as their server: the configured public URL, or
    /// the listener's own origin (never one a request named: the documents are cached).
    /// `None` only where no server runs: the committed document's placeholder.
    public_origin: Option<Arc<str>>,
    /// The document described: the API's, or the API's with an example server's endpoints.
    describe: Describe,
    files: Arc<OnceLock<HashMap<&'static str, StaticFile>>>,
}

/// What writes the document the pages and files are rendered from.
pub type Describe = Arc<dyn Fn() -> utoipa::openapi::OpenApi + Send + Sync>;

impl Default for Docs {
    fn default() -> Docs {
        Docs::new(None)
    }
}

impl Docs {
    /// The documentation of the API, served at `public_origin`.
    pub fn new(public_origin: Option<Arc<str>>) -> Docs {
        Docs::describing(public_origin, Arc::new(openapi::document))
    }

    /// The documentation of the document `describe` writes, served at `public_origin`.
    pub fn describing(public_origin: Option<Arc<str>>, describe: Describe) -> Docs {
        Docs {
            public_origin,
            describe,
            files: Arc::default(),
        }
    }

    /// The rendered files: at once when they are, else rendered on the blocking pool
    /// (concurrent first requests wait there too, never on a worker's thread).
    async fn files(&self) -> Result<&HashMap<&'static str, StaticFile>, ApiError> {
        if let Some(files) = self.files.get() {
            return Ok(files);
        }
        // An error means the rendering panicked (a bug, logged by the panic hook) or the pool
        // is gone (the server is stopping): an internal error, not a second rendering on the
        // worker.
        let files = Arc::clone(&self.files);
        let origin = self.public_origin.clone();
        let describe = Arc::clone(&self.describe);
        web::block(move || {
            files.get_or_init(|| render_files(origin.as_deref(), describe()));
        })
        .await
        .map_err(|error| ApiError::internal(format!("rendering the reference: {error}")))?;
        Ok(self.files.get().expect("rendered just now"))
    }
}

fn render_files(
    public_origin: Option<&str>,
    document: utoipa::openapi::OpenApi,
) -> HashMap<&'static str, StaticFile> {
    const HTML: &str = "text/html; charset=utf-8";
    const JSON: &str = "application/json";
    // RFC 9512 registers application/yaml.
    const YAML: &str = "application/yaml";
    let document = match public_origin {
        Some(origin) => openapi::for_origin(document, origin),
        None => document,
    };
    let mut files = HashMap::from([
        (
            DOCUMENT_JSON_PATH,
            StaticFile::new(JSON, Lifetime::Revalidate, openapi::to_json(&document))
                .for_any_origin(),
        ),
        (
            DOCUMENT_YAML_PATH,
            StaticFile::new(YAML, Lifetime::Revalidate, openapi::to_yaml(&document))
                .for_any_origin(),
        ),
        (
            OAS30_JSON_PATH,
            StaticFile::new(
                JSON,
                Lifetime::Revalidate,
                openapi::oas30::to_json(&document),
            )
            .for_any_origin(),
        ),
        (
            OAS30_YAML_PATH,
            StaticFile::new(
                YAML,
                Lifetime::Revalidate,
                openapi::oas30::to_yaml(&document),
            )
            .for_any_origin(),
        ),
        (
            REFERENCE_PATH,
            StaticFile::new(HTML, Lifetime::Revalidate, pages::reference_page()),
        ),
        (
            ERRORS_PATH,
            StaticFile::new(
                HTML,
                Lifetime::Revalidate,
                pages::errors_page(&openapi::codes_in_use(&document)),
            ),
        ),
        (
            CHANGELOG_PATH,
            StaticFile::new(HTML, Lifetime::Revalidate, changelog::changelog_page()),
        ),
        (
            CHANGELOG_FEED_PATH,
            StaticFile::new(
                "application/atom+xml",
                Lifetime::Revalidate,
                changelog::changelog_feed(public_origin.unwrap_or(openapi::EXAMPLE_ORIGIN)),
            ),
        ),
        (
            GUIDE_PATH,
            StaticFile::new(HTML, Lifetime::Revalidate, guide::guide_page()),
        ),
        (
            "/docs/docs.css",
            StaticFile::new("text/css", Lifetime::Hour, pages::STYLESHEET),
        ),
        (
            "/docs/reference.js",
            StaticFile::new("text/javascript", Lifetime::Hour, pages::REFERENCE_SCRIPT),
        ),
    ]);
    // `serve` hands out the vendored files; its configuration only shapes the initializer
    // script, which the reference does not use (it has its own, above).
    let swagger_config = Arc::new(utoipa_swagger_ui::Config::from(DOCUMENT_JSON_PATH));
    for (path, name) in PATHS
        .iter()
        .filter_map(|path| Some((*path, path.strip_prefix("/docs/")?)))
        .filter(|(_, name)| SWAGGER_UI_FILES.contains(name))
    {
        match utoipa_swagger_ui::serve(name, Arc::clone(&swagger_config)) {
            Ok(Some(file)) => {
                let content_type = match name.rsplit('.').next() {
                    Some("css") => "text/css",
                    Some("js") => "text/javascript",
                    _ => "image/png",
                };
                // The vendored files live in the binary: served from there, not copied.
                let body = match file.bytes {
                    Cow::Borrowed(bytes) => Bytes::from_static(bytes),
                    Cow::Owned(bytes) => Bytes::from(bytes),
                };
                files.insert(path, StaticFile::new(content_type, Lifetime::Hour, body));
            }
            // Not in this build of Swagger UI: the path answers 404 like any unknown one, and
            // a test names the file.
            Ok(None) | Err(_) => log::error!("Swagger UI has no file {name}"),
        }
    }
    files
}

/// Mounts every path of [`PATHS`], served from `docs`.
pub fn register(config: &mut web::ServiceConfig, docs: &Docs) {
    let get_or_head = || guard::Any(guard::Get()).or(guard::Head());
    for (path, location) in REDIRECTS {
        config.service(
            web::resource(path)
                .guard(get_or_head())
                .to(move || async move {
                    HttpResponse::PermanentRedirect()
                        .insert_header((header::LOCATION, location))
                        .finish()
                }),
        );
    }
    config.service(
        web::resource(ROOT_PATH)
            .guard(get_or_head())
            .guard(guard::fn_guard(|context| {
                let accept: Vec<&str> = context
                    .head()
                    .headers()
                    .get_all(header::ACCEPT)
                    .filter_map(|accept| accept.to_str().ok())
                    .collect();
                prefers_html(&accept.join(","))
            }))
            .to(|| async {
                HttpResponse::Found()
                    .insert_header((header::LOCATION, "docs/"))
                    .insert_header((header::VARY, "Accept"))
                    .finish()
            }),
    );
    for path in PATHS {
        if REDIRECTS.iter().any(|(redirected, _)| *redirected == path) {
            continue;
        }
        let docs = docs.clone();
        config.service(
            web::resource(path)
                .guard(get_or_head())
                .to(move |request: HttpRequest| {
                    let docs = docs.clone();
                    async move {
                        docs.files()
                            .await?
                            .get(path)
                            .map(|file| file.respond(&request))
                            .ok_or_else(|| ApiError::resource_missing(request.method(), path))
                    }
                }),
        );
    }
}

/// Whether an `Accept` value (its field lines joined) prefers `text/html` to JSON: `text/html`
/// weighs more than `application/json`, `application/*` and `*/*`, as browsers ask for a
/// page; API clients (`*/*`, `application/json`, or both beside `text/html`) do not.
fn prefers_html(accept: &str) -> bool {
    let mut html: f32 = 0.0;
    let mut json: f32 = 0.0;
    for range in accept.split(',') {
        let mut parts = range.split(';').map(str::trim);
        let media = parts.next().unwrap_or_default().to_ascii_lowercase();
        let weight = parts
            .filter_map(|parameter| parameter.split_once('='))
            .find(|(name, _)| name.trim().eq_ignore_ascii_case("q"))
            .map_or(1.0, |(_, q)| q.trim().parse::<f32>().unwrap_or(0.0));
        match media.as_str() {
            "text/html" => html = html.max(weight),
            "application/json" | "application/*" | "*/*" => json = json.max(weight),
            _ => {}
        }
    }
    html > 0.0 && html > json
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browsers_prefer_html_and_api_clients_do_not() {
        for browser in [
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
            "text/html",
            "TEXT/HTML; q=0.5",
        ] {
            assert!(prefers_html(browser), "{browser}");
        }
        for client in [
            "*/*",
            "application/json",
            "text/html;q=0",
            "text/plain, */*",
            "application/json, text/html",
            "text/html;q=0.5, application/json",
        ] {
            assert!(!prefers_html(client), "{client}");
        }
    }

    #[test]
    fn every_path_but_the_redirects_has_its_file() {
        let files = render_files(None, openapi::document());
        for path in PATHS {
            if !REDIRECTS.iter().any(|(redirected, _)| *redirected == path) {
                assert!(files.contains_key(path), "no file for {path}");
            }
        }
        assert_eq!(files.len(), PATHS.len() - REDIRECTS.len());
    }

    #[test]
    fn the_documents_are_what_the_code_emits() {
        let document = openapi::document();
        let files = render_files(None, openapi::document());
        assert_eq!(
            files[DOCUMENT_YAML_PATH].body(),
            &openapi::to_yaml(&document)
        );
        assert_eq!(
            files[OAS30_JSON_PATH].body(),
            &openapi::oas30::to_json(&document)
        );
    }
}
