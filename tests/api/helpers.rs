//! Test harness: `spawn_app()` starts the real app (the same factory production uses) on port
//! 0 with a few test-only routes mounted beside the API, and returns a `TestApp` with typed
//! request helpers and exact-response assertions. Log records are captured in memory so tests
//! can check that an id reached the log; set `TEST_LOG=1` to also print them.

use std::sync::{Mutex, Once};

use actix_web::dev::ServerHandle;
use actix_web::http::header::ContentType;
use actix_web::web::Bytes;
use actix_web::{HttpResponse, get, post, web};
use partner_api::edge::context::RequestInfo;
use partner_api::edge::extract::{Body, NoQuery, Query};
use partner_api::observability::client_errors::ClientErrorsAtDebug;
use partner_api::server::config::ServerConfig;
use partner_api::server::startup::{Application, Extension};
use reqwest::Method;
use reqwest::header::HeaderMap;
use serde::Deserialize;
use serde_json::{Value, json};
use utoipa_actix_web::scope;
use utoipa_actix_web::service_config::ServiceConfig;

pub struct TestApp {
    /// `http://127.0.0.1:<port>`
    pub address: String,
    pub local_addr: std::net::SocketAddr,
    pub client: reqwest::Client,
    /// `http://127.0.0.1:<port>` of the admin listener (probes and metrics).
    pub admin_address: String,
    /// The certificate in use, when the app serves HTTPS.
    pub certificates: Option<std::sync::Arc<partner_api::edge::tls::CertificateStore>>,
    /// The keys issued to the app's key file (`keys.json` in `work`).
    pub keys: TestKeys,
    /// A folder of the app's own (its key file, its audit trail), removed when it is dropped.
    pub work: std::path::PathBuf,
    /// What the API's endpoints share: a test seeds the API's stores through it
    /// (`app.api.<table>.seed(...)`), as `things` seeds its own through its context.
    #[allow(dead_code, reason = "the API's context holds no store yet")]
    pub api: web::Data<partner_api::api::ApiContext>,
    /// The keys in force, reloaded at once by [`TestApp::key_for`].
    key_store: partner_api::auth::store::KeyStore,
    handle: ServerHandle,
}

/// The keys of a test app, issued with `partner-api keys issue`'s code into its key file.
pub struct TestKeys {
    /// `pt_test`'s key with every scope an operation needs: the partner owning every thing
    /// the store is seeded with.
    pub writer: String,
    /// `pt_test`'s key with `things:read` only.
    pub reader: String,
    /// `pt_other`'s key with both scopes: another partner.
    pub other: String,
    /// `pt_test`'s key, revoked.
    pub revoked: String,
    /// `pt_test`'s key, expired (its record says it stopped at the start of 2026).
    pub expired: String,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        let handle = self.handle.clone();
        actix_web::rt::spawn(async move { handle.stop(false).await });
        let _ = std::fs::remove_dir_all(&self.work);
    }
}

/// A fresh folder under the system's temporary folder.
pub fn work_folder(purpose: &str) -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let folder = std::env::temp_dir().join(format!(
        "partner-api-test-{}-{purpose}-{n}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).unwrap();
    folder
}

/// Issues the test keys into `path`, as the operator's commands would.
fn issue_test_keys(path: &std::path::Path) -> TestKeys {
    use partner_api::auth::commands::{Issue, issue, revoke};
    use partner_api::auth::store::KeyFile;
    let now = jiff::Timestamp::now();
    let issue_one = |partner: &str, scopes: &[&str]| {
        let scopes: Vec<String> = scopes.iter().map(|scope| (*scope).to_owned()).collect();
        let mut out = Vec::new();
        let request = Issue {
            partner,
            scopes: &scopes,
            expires: None,
            group: None,
            test: false,
        };
        issue(path, &request, now, &mut out, &mut Vec::new()).unwrap();
        String::from_utf8(out).unwrap().trim().to_owned()
    };
    // The writer's key holds every scope an operation of the document needs, so that the
    // generic tests reach every operation, whichever the API has.
    let every_scope = crate::document::every_scope();
    let every_scope: Vec<&str> = every_scope.iter().map(String::as_str).collect();
    let both = ["things:read", "things:write"];
    let keys = TestKeys {
        writer: issue_one("pt_test", &every_scope),
        reader: issue_one("pt_test", &["things:read"]),
        other: issue_one("pt_other", &both),
        revoked: issue_one("pt_test", &both),
        expired: issue_one("pt_test", &both),
    };
    let mut file = KeyFile::read(path).unwrap();
    let revoked_id = file.keys[3].id.clone();
    file.keys[4].expires = Some("2026-01-01T00:00:00Z".to_owned());
    std::fs::write(path, serde_json::to_string(&file).unwrap()).unwrap();
    revoke(path, &revoked_id, None, now, &mut Vec::new()).unwrap();
    keys
}

/// The app with default settings (one worker, port 0).
pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

/// The app with settings adjusted by `configure`.
pub async fn spawn_app_with(configure: impl FnOnce(&mut ServerConfig)) -> TestApp {
    spawn_app_seeded(configure, crate::things::THINGS).await
}

/// The app with settings adjusted by `configure` and `things` things in the test build's
/// store (none: every store empty).
pub async fn spawn_app_seeded(configure: impl FnOnce(&mut ServerConfig), things: u16) -> TestApp {
    install_capturing_logger();
    // As `main` does: the test clients (reqwest) take the process's default provider too.
    partner_api::edge::tls::install_provider();
    // Limits that no test reaches unless it asks for tighter ones.
    let mut config = ServerConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        workers: Some(1.try_into().unwrap()),
        shutdown_grace_secs: 5,
        shutdown_delay_secs: 0,
        admin_bind: partner_api::server::config::AdminBind(Some("127.0.0.1:0".parse().unwrap())),
        rate_limit_per_second: 100_000,
        rate_limit_burst: 100_000,
        docs_rate_limit_per_second: 100_000,
        docs_rate_limit_burst: 100_000,
        ..ServerConfig::default()
    };
    let work = work_folder("app");
    let keys_file = work.join("keys.json");
    let keys = issue_test_keys(&keys_file);
    config.keys_file = Some(keys_file);
    config.audit_log = partner_api::audit::sink::AuditTarget::File(work.join("audit.jsonl"));
    configure(&mut config);
    // The test build's endpoints, mounted beside the API's with the store they share, and the
    // helper routes that reach the framework directly.
    let things = |database: &_| {
        let store = crate::things::ThingStore::with_count(database, things)?;
        Ok(Extension::new(store, crate::things::ENDPOINTS).with_framework_routes(helper_routes))
    };
    let application = Application::build_with(&config, things).expect("the test app starts");
    let local_addr = application.local_addr();
    let address = format!("http://{local_addr}");
    let admin_address = application
        .admin_addr()
        .map_or_else(String::new, |addr| format!("http://{addr}"));
    let certificates = application.certificates();
    let api = application.api();
    let key_store = application.keys();
    let handle = application.handle();
    actix_web::rt::spawn(application.run_until_stopped());
    let client = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    TestApp {
        address,
        local_addr,
        admin_address,
        client,
        certificates,
        keys,
        work,
        api,
        key_store,
        handle,
    }
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    /// A request to build on; send it with [`TestApp::send`].
    pub fn request(&self, method: &str, path: &str) -> reqwest::RequestBuilder {
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        self.client.request(method, self.url(path))
    }

    /// Sends the request, reads the whole response, and checks it against the committed
    /// OpenAPI document before any test sees it.
    pub async fn send(&self, request: reqwest::RequestBuilder) -> TestResponse {
        let request = request.build().unwrap();
        let (method, path) = (request.method().clone(), request.url().path().to_owned());
        let response = self.client.execute(request).await.unwrap();
        let response = TestResponse {
            status: response.status().as_u16(),
            headers: response.headers().clone(),
            body: response.bytes().await.unwrap(),
        };
        crate::contract::check_response(&method, &path, &response);
        response
    }

    pub async fn get(&self, path: &str) -> TestResponse {
        self.send(self.request("GET", path)).await
    }

    /// A request with the test partner's key (`keys.writer`: both scopes).
    pub fn keyed(&self, method: &str, path: &str) -> reqwest::RequestBuilder {
        self.request(method, path).bearer_auth(&self.keys.writer)
    }

    /// A key for `partner` with `scopes`, issued into the app's key file (as `partner-api keys
    /// issue` does) and in force at once.
    pub fn key_for(&self, partner: &str, scopes: &[&str]) -> String {
        self.issue_key(partner, scopes, false)
    }

    /// A test key (`pak_test_...`) for `partner` with `scopes`, as `key_for`.
    pub fn test_key_for(&self, partner: &str, scopes: &[&str]) -> String {
        self.issue_key(partner, scopes, true)
    }

    fn issue_key(&self, partner: &str, scopes: &[&str], test: bool) -> String {
        let scopes: Vec<String> = scopes.iter().map(|scope| (*scope).to_owned()).collect();
        let request = partner_api::auth::commands::Issue {
            partner,
            scopes: &scopes,
            expires: None,
            group: None,
            test,
        };
        let mut out = Vec::new();
        let path = self.work.join("keys.json");
        partner_api::auth::commands::issue(
            &path,
            &request,
            jiff::Timestamp::now(),
            &mut out,
            &mut Vec::new(),
        )
        .unwrap();
        self.key_store.reload("a test issued a key");
        String::from_utf8(out).unwrap().trim().to_owned()
    }

    /// `GET path` with the test partner's key.
    pub async fn get_keyed(&self, path: &str) -> TestResponse {
        self.send(self.keyed("GET", path)).await
    }

    /// The audit records written so far, once there are at least `count` (the writer is a
    /// thread of its own): each a JSON object, its `time` checked and left out.
    pub async fn audit_records(&self, count: usize) -> Vec<Value> {
        let path = self.work.join("audit.jsonl");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let records: Vec<Value> = text
                .lines()
                .map(|line| serde_json::from_str(line).expect("an audit line is JSON"))
                .collect();
            if records.len() >= count || std::time::Instant::now() > deadline {
                return records
                    .into_iter()
                    .map(|mut record| {
                        let time = record["time"].as_str().unwrap().to_owned();
                        assert!(
                            time.len() == 24
                                && time.ends_with('Z')
                                && time.parse::<jiff::Timestamp>().is_ok(),
                            "{time}"
                        );
                        record.as_object_mut().unwrap().remove("time");
                        record
                    })
                    .collect();
            }
            actix_web::rt::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// Sends `body` with `Content-Type: application/json`.
    pub async fn send_json(&self, method: &str, path: &str, body: &str) -> TestResponse {
        self.send(
            self.request(method, path)
                .header("content-type", "application/json")
                .body(body.to_owned()),
        )
        .await
    }
}

/// A whole response, already checked against the contract.
pub struct TestResponse {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl TestResponse {
    pub fn header(&self, name: &str) -> String {
        header(&self.headers, name)
    }

    pub fn text(&self) -> String {
        String::from_utf8(self.body.to_vec()).expect("the body is UTF-8")
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|error| panic!("body is not JSON ({error}): {}", self.text()))
    }
}

/// Checks the headers every response carries and returns its request id.
pub fn assert_conventions(headers: &HeaderMap) -> String {
    assert_eq!(header(headers, "content-type"), "application/json");
    assert_eq!(header(headers, "cache-control"), "no-store");
    assert_eq!(header(headers, "x-content-type-options"), "nosniff");
    let request_id = header(headers, "service-request-id");
    let hex = request_id
        .strip_prefix("req_")
        .unwrap_or_else(|| panic!("request id {request_id:?} lacks req_"));
    assert_eq!(hex.len(), 32, "{request_id}");
    assert!(
        hex.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "{request_id}"
    );
    request_id
}

pub fn header(headers: &HeaderMap, name: &str) -> String {
    headers
        .get(name)
        .unwrap_or_else(|| panic!("header {name} missing from {headers:?}"))
        .to_str()
        .unwrap()
        .to_owned()
}

/// What a client should see for an error.
pub struct ExpectedError<'a> {
    pub status: u16,
    pub error_type: &'a str,
    pub code: &'a str,
    pub message: &'a str,
    pub param: Option<&'a str>,
}

impl ExpectedError<'_> {
    /// 500 `internal_error` with the catalogue's message: what a fault looks like outside.
    pub fn internal() -> ExpectedError<'static> {
        ExpectedError {
            status: 500,
            error_type: "api_error",
            code: "internal_error",
            message: "An internal error occurred. The request may be retried; if the error \
                      persists, report the request_id.",
            param: None,
        }
    }

    /// 400 `parameter_unknown` naming `foo`.
    pub fn unknown_foo() -> ExpectedError<'static> {
        ExpectedError::invalid_request(
            400,
            "parameter_unknown",
            "Received unknown parameter: foo",
            Some("foo"),
        )
    }

    pub fn invalid_request<'a>(
        status: u16,
        code: &'a str,
        message: &'a str,
        param: Option<&'a str>,
    ) -> ExpectedError<'a> {
        ExpectedError {
            status,
            error_type: "invalid_request_error",
            code,
            message,
            param,
        }
    }
}

/// Asserts the exact status, convention headers and body of an error response, with
/// `doc_url` under `doc_links`; returns the headers for further checks.
pub fn assert_error_at(response: &TestResponse, expected: ExpectedError<'_>, doc_links: &str) {
    assert_eq!(response.status, expected.status, "{}", response.text());
    let request_id = assert_conventions(&response.headers);
    assert_eq!(
        response.json(),
        json!({
            "error": {
                "type": expected.error_type,
                "code": expected.code,
                "message": expected.message,
                "param": expected.param,
                "doc_url": format!("{doc_links}/docs/errors#{}", expected.code),
                "request_id": request_id,
            }
        })
    );
}

impl TestApp {
    pub fn assert_error(&self, response: &TestResponse, expected: ExpectedError<'_>) {
        assert_error_at(response, expected, &self.address)
    }
}

// ---- Helper routes mounted straight on the framework, to reach shared machinery (the
// framework's own extractors and errors, panics, slow and blocking handlers) ----

#[derive(Debug, Deserialize, serde::Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EchoBody {
    pub name_id: String,
    pub count: u32,
    pub nested: Option<Nested>,
}

#[derive(Debug, Deserialize, serde::Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Nested {
    pub size: u32,
}

/// Echoes a parsed body, to exercise `Body<T>`.
#[utoipa::path(responses((status = 200, description = "the parsed body")))]
#[post("/echo")]
async fn echo(_query: Query<NoQuery>, Body(body): Body<EchoBody>) -> web::Json<EchoBody> {
    web::Json(body)
}

/// Panics, to exercise panic handling.
#[utoipa::path(responses((status = 500, description = "never answers")))]
#[get("/panic")]
async fn panics() -> HttpResponse {
    panic!("test panic: secret internal detail")
}

/// Answers after a pause, to have a request in flight.
#[utoipa::path(responses((status = 200, description = "after a pause")))]
#[get("/slow")]
async fn slow() -> HttpResponse {
    actix_web::rt::time::sleep(std::time::Duration::from_millis(300)).await;
    HttpResponse::Ok()
        .content_type(ContentType::json())
        .body(r#"{"slow":true}"#)
}

/// Uses actix-web's own JSON extractor, whose errors are the framework's, not ours.
#[utoipa::path(responses((status = 200, description = "the parsed body")))]
#[post("/framework-json")]
async fn framework_json(body: web::Json<EchoBody>) -> web::Json<EchoBody> {
    body
}

/// Answers with a framework error whose text must not reach the client.
#[utoipa::path(responses((status = 400, description = "plain framework error")))]
#[get("/framework-error")]
async fn framework_error() -> Result<HttpResponse, actix_web::Error> {
    Err(actix_web::error::ErrorBadRequest("secret framework text"))
}

/// Answers with a plain-text error response, as a third-party middleware might.
#[utoipa::path(responses((status = 503, description = "plain text error")))]
/// A bare error response with the status in the path (a 503 also carries `Retry-After`), the
/// way a middleware or a future endpoint might build one.
#[get("/plain-error/{status}")]
async fn plain_error(status: web::Path<u16>) -> HttpResponse {
    let status = actix_web::http::StatusCode::from_u16(*status).unwrap();
    let mut response = HttpResponse::build(status);
    if status == actix_web::http::StatusCode::SERVICE_UNAVAILABLE {
        response.insert_header(("retry-after", "7"));
    }
    response
        .content_type(ContentType::plaintext())
        .body("plain text")
}

/// Blocks the worker's thread for `ms` milliseconds, as a handler stuck on a lock would.
#[utoipa::path(responses((status = 200, description = "after the wait")))]
#[get("/block/{ms}")]
async fn blocks(ms: web::Path<u64>) -> HttpResponse {
    std::thread::sleep(std::time::Duration::from_millis(
        ms.into_inner().min(10_000),
    ));
    HttpResponse::Ok().finish()
}

fn helper_routes(config: &mut ServiceConfig) {
    config.service(
        scope::scope("/test")
            .service(echo)
            .service(blocks)
            .service(panics)
            .service(slow)
            .service(framework_json)
            .service(framework_error)
            .service(plain_error),
    );
}

// ---- Captured logs ----

static LOGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct CapturingLogger {
    print: bool,
}

impl log::Log for CapturingLogger {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::Level::Info
    }

    fn log(&self, record: &log::Record) {
        if self.enabled(record.metadata()) {
            // Like the service's own format: a line written inside a request names it.
            let id = RequestInfo::with_current_id(|id| id.map(|id| format!("{id} ")));
            let line = format!(
                "{} {}: {}{}",
                record.level(),
                record.target(),
                id.unwrap_or_default(),
                record.args()
            );
            if self.print {
                eprintln!("{line}");
            }
            LOGS.lock().unwrap().push(line);
        }
    }

    fn flush(&self) {}
}

fn install_capturing_logger() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let print = std::env::var_os("TEST_LOG").is_some();
        // In front of it, what stands in front of the service's logger.
        log::set_boxed_logger(Box::new(ClientErrorsAtDebug(CapturingLogger { print }))).unwrap();
        log::set_max_level(log::LevelFilter::Info);
    });
}

/// Log lines so far that contain `needle`.
pub fn log_lines_containing(needle: &str) -> Vec<String> {
    LOGS.lock()
        .unwrap()
        .iter()
        .filter(|line| line.contains(needle))
        .cloned()
        .collect()
}

/// A committed OpenAPI document as a server reached at `origin` serves it: the placeholder
/// origin in its server, samples, guide, contact and error examples' `doc_url` is the one
/// thing a server replaces.
pub fn as_served_at(committed: &str, origin: &str) -> String {
    committed
        .replace("https://api.example.com/v1", &format!("{origin}/v1"))
        .replace(
            "https://api.example.com/docs/guide",
            &format!("{origin}/docs/guide"),
        )
        .replace(
            "https://api.example.com/docs/errors#",
            &format!("{origin}/docs/errors#"),
        )
}

/// Whether the socket this process accepted on `server` from `client` has TCP_NODELAY set
/// (the app runs in the test's process, so its sockets are among the process's descriptors).
/// Panics when no such socket is open.
pub fn accepted_socket_nodelay(server: std::net::SocketAddr, client: std::net::SocketAddr) -> bool {
    for entry in std::fs::read_dir("/proc/self/fd").unwrap() {
        let Some(fd) = entry
            .unwrap()
            .file_name()
            .to_str()
            .and_then(|n| n.parse().ok())
        else {
            continue;
        };
        // SAFETY: `borrow_raw` wants the descriptor open while borrowed, and another test's
        // thread may close it meanwhile; nothing here owns, closes or maps it, though: only
        // getsockname, getpeername and getsockopt are made on the number, which on a closed
        // descriptor fail (EBADF) and on a reused one see other addresses, both skipped.
        let descriptor = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        let socket = socket2::SockRef::from(&descriptor);
        let address = |found: std::io::Result<socket2::SockAddr>| {
            found.ok().and_then(|address| address.as_socket())
        };
        if address(socket.local_addr()) == Some(server)
            && address(socket.peer_addr()) == Some(client)
        {
            return socket.tcp_nodelay().unwrap();
        }
    }
    panic!("no socket accepted on {server} from {client}");
}

/// The `created` of a thing this test created: RFC 3339 in UTC to the second, ending in `Z`,
/// within a minute of now.
pub fn created_just_now(thing: &serde_json::Value) -> String {
    let created = thing["created"]
        .as_str()
        .expect("a created moment")
        .to_owned();
    let moment = partner_api::api::timestamp::Timestamp::parse(&created)
        .unwrap_or_else(|| panic!("created {created} is not RFC 3339 in UTC"));
    assert_eq!(created.len(), "2026-12-01T09:30:00Z".len(), "{created}");
    let age = jiff::Timestamp::now().as_second() - moment.jiff().as_second();
    assert!((0..=60).contains(&age), "created {created}, {age} s ago");
    created
}
