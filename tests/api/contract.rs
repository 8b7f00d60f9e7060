//! The contract at run time: `openapi/v1.yaml` as committed is loaded once, and every response
//! an integration test receives is checked against it (`check_response`): for an operation,
//! the status must be documented, every documented header present and valid, and the body
//! valid against the documented schema; any error, on any path, must be the documented error
//! envelope whose `doc_url` resolves to an anchor of `/docs/errors`. The tests below also keep
//! the committed file equal to what the code emits and to what the server serves.

use std::sync::LazyLock;

use partner_api::errors::{ApiError, ErrorCode};
use partner_api::openapi;
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{TestResponse, assert_conventions, spawn_app};

const COMMITTED_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/openapi/v1.yaml");

/// The committed document, parsed.
pub static DOCUMENT: LazyLock<Value> = LazyLock::new(|| {
    let text = std::fs::read_to_string(COMMITTED_PATH).expect("openapi/v1.yaml is readable");
    yaml_serde::from_str(&text).expect("openapi/v1.yaml is YAML")
});

/// The committed 3.0.3 rendition, parsed.
static DOCUMENT_30: LazyLock<Value> = LazyLock::new(|| {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/openapi/v1.oas30.yaml");
    let text = std::fs::read_to_string(path).expect("openapi/v1.oas30.yaml is readable");
    yaml_serde::from_str(&text).expect("openapi/v1.oas30.yaml is YAML")
});

/// Checks one response against the committed document (or, for an endpoint of the test build,
/// the document generated with it); panics with the reason otherwise.
pub fn check_response(method: &Method, path: &str, response: &TestResponse) {
    // `<origin>/v1`: the path of every operation starts with what follows the origin.
    let server = DOCUMENT["servers"][0]["url"].as_str().unwrap();
    let prefix = server
        .split_once("://")
        .and_then(|(_, rest)| rest.find('/').map(|slash| &rest[slash..]))
        .expect("the server is <origin>/<version>");
    // The path as the router reads it: `/v1/p%69ng` is `/v1/ping`.
    let routed = routed_path(path);
    let path = routed.as_str();
    let operation = path.strip_prefix(prefix).and_then(|relative| {
        let found_in =
            |document: &'static Value| Some((document, find_path_item(document, relative)?));
        found_in(&DOCUMENT).or_else(|| found_in(&crate::document::DOCUMENT))
    });
    let operation = operation.and_then(|(document, item)| {
        Some((document, item.get(method.as_str().to_ascii_lowercase())?))
    });
    match operation {
        Some((document, operation)) => {
            check_operation_response(document, method, path, operation, response)
        }
        None if response.status >= 400 => check_error_outside_operations(path, response),
        // Every success under the version prefix is an operation's, described by a document.
        None if path.starts_with(&format!("{prefix}/")) => {
            panic!(
                "{method} {path}: {} outside every operation",
                response.status
            )
        }
        // Success outside the API's operations: the documentation and test-only routes.
        None => {}
    }
    if response.status >= 400 && method != Method::HEAD {
        check_doc_url(&response.json());
    }
}

/// `path` as actix-web's router reads it: every percent-encoded byte decoded but `%`, `/` and
/// `+` (and a byte sequence that is not UTF-8, left as sent).
fn routed_path(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at]
            .eq(&b'%')
            .then(|| path.get(at + 1..at + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok())
            .filter(|byte| !b"%/+".contains(byte));
        match byte {
            Some(byte) => {
                decoded.push(byte);
                at += 3;
            }
            None => {
                decoded.push(bytes[at]);
                at += 1;
            }
        }
    }
    String::from_utf8(decoded).unwrap_or_else(|_| path.to_owned())
}

/// `value`, or what it refers to when it is a `$ref` into `document` (a shared response or
/// header; schema references are resolved by the validator).
fn follow<'a>(document: &'a Value, value: &'a Value) -> &'a Value {
    match value["$ref"].as_str() {
        Some(location) => {
            let pointer = location
                .strip_prefix('#')
                .expect("a reference within the document");
            document
                .pointer(pointer)
                .unwrap_or_else(|| panic!("{location} is not in the document"))
        }
        None => value,
    }
}

fn find_path_item<'a>(document: &'a Value, relative: &str) -> Option<&'a Value> {
    document["paths"]
        .as_object()?
        .iter()
        .find_map(|(template, item)| {
            let pattern = actix_web::dev::ResourceDef::new(template.as_str());
            pattern.is_match(relative).then_some(item)
        })
}

fn check_operation_response(
    document: &Value,
    method: &Method,
    path: &str,
    operation: &Value,
    response: &TestResponse,
) {
    let operation_id = operation["operationId"].as_str().unwrap_or("?");
    let status = response.status.to_string();
    // `default` is for a client's generated types; the service itself answers only with the
    // statuses the operation lists.
    let documented = operation["responses"].get(&status).unwrap_or_else(|| {
        panic!("{method} {path}: status {status} is not documented for operation {operation_id}")
    });
    let documented = follow(document, documented);
    // A 503 is declared as a balancer's, without content (its body may be HTML); the service's
    // own (`service_unavailable`) is the error envelope with the conventions' headers, as the
    // response's description says.
    if response.status == 503 && documented.get("content").is_none() {
        assert!(
            documented["description"]
                .as_str()
                .is_some_and(|text| text.contains("`service_unavailable`")),
            "{method} {path} 503: the description names the service's own 503"
        );
        check_error_outside_operations(path, response);
        return;
    }
    let headers = documented["headers"].as_object();
    assert!(
        headers.is_some_and(|headers| headers.contains_key("Service-Request-Id")),
        "{method} {path} {status}: the documented response has no convention headers"
    );
    for (name, header) in headers.into_iter().flatten() {
        let header = follow(document, header);
        let value = response
            .headers
            .get(name.as_str())
            .unwrap_or_else(|| panic!("{method} {path} {status}: documented header {name} missing"))
            .to_str()
            .unwrap();
        let instance = match header["schema"]["type"].as_str() {
            Some("integer") => json!(value.parse::<i64>().unwrap_or_else(|_| panic!(
                "{method} {path} {status}: header {name}: {value:?} is not an integer"
            ))),
            _ => json!(value),
        };
        validate_in(
            document,
            &header["schema"],
            &instance,
            &format!("{method} {path} {status} header {name}"),
        );
    }
    let content = documented["content"].as_object();
    match content.and_then(|content| content.iter().next()) {
        None => assert!(
            response.body.is_empty(),
            "{method} {path} {status}: body sent where the document describes none"
        ),
        Some((media_type, media)) => {
            let sent = response
                .headers
                .get("content-type")
                .map(|value| value.to_str().unwrap().to_owned())
                .unwrap_or_default();
            assert_eq!(sent, *media_type, "{method} {path} {status}: content type");
            validate_in(
                document,
                &media["schema"],
                &response.json(),
                &format!("{method} {path} {status} body"),
            );
            check_body_against_rendition_3_0(document, method, path, operation_id, response);
        }
    }
}

/// The body checked against the 3.0.3 rendition of `document` too, what a generator reading
/// 3.0 types it with: its `nullable: true` read as 3.0 tools read it (the value may be null).
fn check_body_against_rendition_3_0(
    document: &Value,
    method: &Method,
    path: &str,
    operation_id: &str,
    response: &TestResponse,
) {
    let rendition: &Value = if std::ptr::eq(document, &*DOCUMENT) {
        &DOCUMENT_30
    } else {
        &crate::document::DOCUMENT_30
    };
    let operation = rendition["paths"]
        .as_object()
        .into_iter()
        .flatten()
        .flat_map(|(_, item)| item.as_object().into_iter().flatten())
        .map(|(_, operation)| operation)
        .find(|operation| operation["operationId"] == operation_id)
        .unwrap_or_else(|| panic!("{operation_id} is not in the 3.0.3 rendition"));
    let status = response.status.to_string();
    let documented = follow(rendition, &operation["responses"][&status]);
    let schema = &documented["content"]["application/json"]["schema"];
    let mut as_json_schema = rendition.clone();
    read_nullable_as_3_0_tools_do(&mut as_json_schema);
    let mut schema = schema.clone();
    read_nullable_as_3_0_tools_do(&mut schema);
    validate_in(
        &as_json_schema,
        &schema,
        &response.json(),
        &format!("{method} {path} {status} body, against the 3.0.3 rendition"),
    );
}

/// `nullable: true` as JSON Schema says it: the schema, or null.
fn read_nullable_as_3_0_tools_do(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            map.values_mut().for_each(read_nullable_as_3_0_tools_do);
            if map.remove("nullable") == Some(Value::Bool(true)) {
                let rest = Value::Object(std::mem::take(map));
                map.insert("anyOf".to_owned(), json!([rest, {"type": "null"}]));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(read_nullable_as_3_0_tools_do),
        _ => {}
    }
}

/// 404 for unknown paths and 405 for unknown methods are answered outside any operation; the
/// document describes them in its description with the `ErrorEnvelope` schema.
fn check_error_outside_operations(path: &str, response: &TestResponse) {
    assert_conventions(&response.headers);
    if response.body.is_empty() {
        return; // HEAD
    }
    validate(
        &json!({"$ref": "#/components/schemas/ErrorEnvelope"}),
        &response.json(),
        &format!("error body of {path}"),
    );
}

/// Every `doc_url` points at `/docs/errors#<code>` and that anchor exists.
fn check_doc_url(body: &Value) {
    let code = body["error"]["code"].as_str().unwrap();
    let doc_url = body["error"]["doc_url"].as_str().unwrap();
    assert!(
        doc_url.ends_with(&format!("/docs/errors#{code}")),
        "doc_url {doc_url} does not point at the anchor of {code}"
    );
    assert!(
        ErrorCode::ALL.iter().any(|known| known.as_str() == code),
        "code {code} is not in the catalogue, so /docs/errors has no anchor for it"
    );
}

/// Validates `instance` against a schema of the committed document (JSON Schema 2020-12, the
/// dialect of OpenAPI 3.1), resolving `#/components/...` references in that document. Objects
/// are checked closed: the document leaves room for fields added later, but the server must
/// not send a field the document does not describe.
pub fn validate(schema: &Value, instance: &Value, what: &str) {
    validate_in(&DOCUMENT, schema, instance, what);
}

/// [`validate`], resolving references in `document`.
fn validate_in(document: &Value, schema: &Value, instance: &Value, what: &str) {
    let mut root = schema.clone();
    root["components"] = document["components"].clone();
    close_objects(&mut root);
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&root)
        .unwrap_or_else(|error| panic!("{what}: the documented schema is invalid: {error}"));
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|error| format!("{} at {}", error, error.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match the document: {errors:?}\n{instance}"
    );
}

fn close_objects(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                map.insert("additionalProperties".to_owned(), Value::Bool(false));
            }
            map.values_mut().for_each(close_objects);
        }
        Value::Array(items) => items.iter_mut().for_each(close_objects),
        _ => {}
    }
}

#[test]
fn committed_document_is_what_the_code_emits() {
    let committed = std::fs::read_to_string(COMMITTED_PATH).unwrap();
    let emitted = openapi::to_yaml(&openapi::document());
    if committed != emitted {
        let diff = similar::TextDiff::from_lines(&committed, &emitted)
            .unified_diff()
            .context_radius(3)
            .header(
                "openapi/v1.yaml (committed)",
                "openapi/v1.yaml (emitted by the code)",
            )
            .to_string();
        panic!(
            "openapi/v1.yaml differs from what the code emits:\n\n{diff}\n\
             If the change is intended, run `scripts/update-openapi` and commit the result."
        );
    }
}

#[test]
fn every_example_in_the_document_matches_its_schema() {
    let mut checked = 0;
    for (path, item) in DOCUMENT["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            for (status, response) in operation["responses"].as_object().unwrap() {
                let response = follow(&DOCUMENT, response);
                for (_, media) in response["content"].as_object().into_iter().flatten() {
                    if let Some(example) = media.get("example") {
                        let what = format!("example of {method} {path} {status}");
                        validate(&media["schema"], example, &what);
                        checked += 1;
                    }
                    for (name, example) in media["examples"].as_object().into_iter().flatten() {
                        let what = format!("example {name} of {method} {path} {status}");
                        validate(&media["schema"], &example["value"], &what);
                        check_doc_url(&example["value"]);
                        checked += 1;
                    }
                }
            }
        }
    }
    for (name, schema) in DOCUMENT["components"]["schemas"].as_object().unwrap() {
        if let Some(example) = schema.get("example") {
            validate(schema, example, &format!("example of schema {name}"));
            checked += 1;
        }
    }
    assert!(checked >= 11, "only {checked} examples found");
}

#[actix_web::test]
async fn the_server_serves_the_committed_document() {
    let app = spawn_app().await;
    // The committed document's placeholder origin, in its server, its guide, its contact and
    // its code samples, is the one thing a server replaces: with its listener's own origin
    // here, no `--public-url` being set.
    let origin = format!("http://{}", app.local_addr);
    let committed =
        crate::helpers::as_served_at(&std::fs::read_to_string(COMMITTED_PATH).unwrap(), &origin);
    let document: Value = yaml_serde::from_str(&committed).unwrap();
    assert_eq!(document["servers"][0]["url"], format!("{origin}/v1"));
    assert_eq!(
        document["info"]["contact"]["url"],
        format!("{origin}/docs/guide#support-and-escalation")
    );
    assert!(
        document["paths"]["/ping"]["get"]["x-codeSamples"][0]["source"]
            .as_str()
            .unwrap()
            .contains(&format!("'{origin}/v1/ping'"))
    );

    let yaml = app.get("/openapi/v1.yaml").await;
    assert_eq!(yaml.status, 200);
    assert_eq!(yaml.header("content-type"), "application/yaml");
    assert!(
        yaml.text() == committed,
        "the served YAML differs from openapi/v1.yaml; the drift test shows how"
    );

    let json = app.get("/openapi/v1.json").await;
    assert_eq!(json.status, 200);
    assert_eq!(json.header("content-type"), "application/json");
    assert!(
        json.json() == document,
        "the served JSON differs from openapi/v1.yaml; the drift test shows how"
    );

    let head = app.send(app.request("HEAD", "/openapi/v1.json")).await;
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
}

#[actix_web::test]
async fn the_documents_answer_405_to_other_methods() {
    let app = spawn_app().await;
    for path in partner_api::docs::PATHS {
        let response = app.send(app.request("POST", path)).await;
        assert_eq!(response.status, 405, "{path}");
        assert_eq!(response.header("allow"), "GET, HEAD");
    }
}

#[actix_web::test]
async fn every_code_has_its_anchor_on_the_served_error_page() {
    let app = spawn_app().await;
    let page = app.get("/docs/errors").await;
    assert_eq!(page.status, 200);
    assert_eq!(page.header("content-type"), "text/html; charset=utf-8");
    let html = page.text();
    assert!(
        !html.contains("<script"),
        "the error page works without JavaScript"
    );
    // Every code of the catalogue, those no published operation answers marked as such.
    let in_use = partner_api::openapi::codes_in_use(&partner_api::openapi::document());
    assert!(in_use.contains(&ErrorCode::ResourceMissing));
    for code in ErrorCode::ALL {
        // The doc_url the service emits for this code, resolved against the page.
        let body = serde_json::to_value(
            ApiError::new(code).envelope("req_x", app.address.as_str().into()),
        )
        .unwrap();
        let doc_url = body["error"]["doc_url"].as_str().unwrap();
        let (page_url, anchor) = doc_url.split_once('#').unwrap();
        assert_eq!(page_url, app.url("/docs/errors"));
        let section = format!("<section id=\"{anchor}\">");
        assert!(
            html.contains(&section),
            "no anchor {anchor} on /docs/errors"
        );
        let spec = code.spec();
        let start = html.find(&section).unwrap();
        let entry = &html[start..start + html[start..].find("</section>").unwrap()];
        assert!(
            entry.contains(&format!("<dd>{} ", spec.status.as_u16())),
            "{entry}"
        );
        assert!(
            entry
                .replace("<wbr>", "")
                .contains(&format!("<code>{}</code>", spec.error_type.as_str())),
            "{entry}"
        );
        assert!(entry.contains("<dt>What to do</dt>"), "{entry}");
        assert_eq!(
            entry.contains("<dt>Published operations</dt><dd>None answers this code yet"),
            !in_use.contains(&code),
            "{entry}"
        );
    }
}

/// The checker itself: responses the document does not describe are refused.
#[test]
fn the_checker_refuses_what_the_document_does_not_describe() {
    use actix_web::web::Bytes;
    use reqwest::header::{HeaderMap, HeaderValue};

    let mut headers = HeaderMap::new();
    headers.insert("content-type", HeaderValue::from_static("application/json"));
    headers.insert("cache-control", HeaderValue::from_static("no-store"));
    headers.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        "service-request-id",
        HeaderValue::from_static("req_0123456789abcdef0123456789abcdef"),
    );
    headers.insert(
        "ratelimit-policy",
        HeaderValue::from_static(r#""api";q=50;w=5"#),
    );
    headers.insert("ratelimit", HeaderValue::from_static(r#""api";r=49;t=1"#));
    let good = || TestResponse {
        status: 200,
        headers: headers.clone(),
        body: Bytes::from_static(br#"{"object":"ping","pong":true}"#),
    };
    check_response(&Method::GET, "/v1/ping", &good());

    let refused = |response: TestResponse, expected: &str| {
        let outcome =
            std::panic::catch_unwind(|| check_response(&Method::GET, "/v1/ping", &response));
        let message = match outcome {
            Ok(()) => panic!("the checker accepted a response it must refuse ({expected})"),
            Err(panic) => panic.downcast_ref::<String>().cloned().unwrap_or_default(),
        };
        assert!(message.contains(expected), "{message}");
    };
    refused(
        TestResponse {
            status: 418,
            ..good()
        },
        "status 418 is not documented for operation ping",
    );
    refused(
        TestResponse {
            body: Bytes::from_static(br#"{"object":"pong","pong":true}"#),
            ..good()
        },
        "GET /v1/ping 200 body does not match the document",
    );
    refused(
        TestResponse {
            body: Bytes::from_static(br#"{"object":"ping","pong":true,"x":1}"#),
            ..good()
        },
        "GET /v1/ping 200 body does not match the document",
    );
    let mut without_id = good();
    without_id.headers.remove("service-request-id");
    refused(without_id, "documented header Service-Request-Id missing");
    let mut bad_quota = good();
    bad_quota
        .headers
        .insert("ratelimit", HeaderValue::from_static("remaining=49"));
    refused(bad_quota, "header RateLimit does not match the document");
}
