//! What every operation of the document gets from the shared machinery, checked for every
//! operation there is, the test build's endpoints included (the API's own document has only
//! `ping`, and a check of one endpoint would pass for a rule that holds for it alone): its tag
//! described, its security declared, the convention errors documented, its `HEAD` twin, and an
//! example for each path parameter, from which [`operations`] fills the path templates that
//! the generic tests elsewhere (routes, `HEAD`, every spelling of a path) send.

use std::sync::LazyLock;

use partner_api::errors::ErrorCode;
use serde_json::{Value, json};

/// The API's document with the test build's endpoints, as the tests' server serves them.
pub static DOCUMENT: LazyLock<Value> = LazyLock::new(|| {
    let document = partner_api::openapi::document_with(&crate::things::ENDPOINTS);
    serde_json::to_value(document).expect("the document serializes")
});

/// Its 3.0.3 rendition, against which every answer is checked too (`contract::check_response`).
pub static DOCUMENT_30: LazyLock<Value> = LazyLock::new(|| {
    partner_api::openapi::oas30::convert(&partner_api::openapi::document_with(
        &crate::things::ENDPOINTS,
    ))
});

/// One operation of [`DOCUMENT`].
pub struct Operation {
    /// `get`, `head`, ...
    pub method: String,
    /// `/v1/things/{thing}`
    pub template: String,
    /// The template with each parameter's example: `/v1/things/th_0001`.
    pub path: String,
    pub operation: &'static Value,
}

/// Every scope an operation of [`DOCUMENT`] needs: what the test apps' key holds.
pub fn every_scope() -> Vec<String> {
    let mut scopes: Vec<String> = operations()
        .iter()
        .filter_map(|operation| operation.operation["x-required-scope"].as_str())
        .map(str::to_owned)
        .collect();
    scopes.sort();
    scopes.dedup();
    scopes
}

/// Every operation of [`DOCUMENT`], with its path filled from its parameters' examples.
pub fn operations() -> Vec<Operation> {
    let prefix = DOCUMENT["servers"][0]["url"]
        .as_str()
        .and_then(|url| {
            url.split_once("://")
                .and_then(|(_, rest)| rest.find('/').map(|slash| &rest[slash..]))
        })
        .expect("the server is <origin>/<version>");
    let mut found = Vec::new();
    for (template, item) in DOCUMENT["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let mut path = format!("{prefix}{template}");
            for parameter in operation["parameters"].as_array().into_iter().flatten() {
                if parameter["in"] == "path" {
                    let name = parameter["name"].as_str().unwrap();
                    let example = parameter["example"].as_str().unwrap_or_else(|| {
                        panic!("{method} {template}: path parameter {name} has no example")
                    });
                    path = path.replace(&format!("{{{name}}}"), example);
                }
            }
            found.push(Operation {
                method: method.clone(),
                template: format!("{prefix}{template}"),
                path,
                operation,
            });
        }
    }
    found
}

/// `reference`, a `$ref` to a shared response, followed.
fn shared_response(reference: &Value) -> &'static Value {
    let name = reference["$ref"]
        .as_str()
        .and_then(|location| location.strip_prefix("#/components/responses/"))
        .unwrap_or_else(|| panic!("not a shared response: {reference}"));
    &DOCUMENT["components"]["responses"][name]
}

/// The generic tests read the API's endpoints and the test build's, whichever the API has.
#[test]
fn the_generic_tests_see_more_than_one_endpoint() {
    let templates: Vec<String> = operations()
        .into_iter()
        .filter(|operation| operation.method == "get")
        .map(|operation| operation.template)
        .collect();
    for template in ["/v1/ping", "/v1/things", "/v1/things/{thing}"] {
        assert!(
            templates.iter().any(|seen| seen == template),
            "{templates:?}"
        );
    }
}

/// The generic tests fill every path template from its parameters' examples, and a partner
/// reading the reference sees what a value looks like.
#[test]
fn every_path_parameter_has_an_example_that_fills_its_template() {
    for operation in operations() {
        assert!(
            !operation.path.contains('{'),
            "{} {}: a path parameter without an example",
            operation.method,
            operation.template
        );
    }
}

/// An endpoint declares its tag; the document lists the tags in use, each described, and no
/// other.
#[test]
fn every_tag_in_use_is_listed_with_its_description() {
    let mut in_use: Vec<&str> = Vec::new();
    for operation in operations() {
        for tag in operation.operation["tags"].as_array().into_iter().flatten() {
            let tag = tag.as_str().unwrap();
            if !in_use.contains(&tag) {
                in_use.push(tag);
            }
        }
    }
    let listed: Vec<&str> = DOCUMENT["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tag| {
            let name = tag["name"].as_str().unwrap();
            assert!(
                tag["description"]
                    .as_str()
                    .is_some_and(|text| !text.is_empty()),
                "the tag {name} is used by an endpoint: describe it beside its endpoints' list"
            );
            name
        })
        .collect();
    assert_eq!(listed, in_use);
}

/// Every operation says whether it needs a key: one that needs none with OpenAPI's empty list.
#[test]
fn every_operation_declares_its_security() {
    for operation in operations() {
        assert!(
            operation.operation["security"].is_array(),
            "{} {}",
            operation.method,
            operation.template
        );
    }
    let ping = operations()
        .into_iter()
        .find(|operation| operation.path == "/v1/ping" && operation.method == "get")
        .unwrap();
    assert_eq!(ping.operation["security"], json!([]));
}

/// Every operation documents exactly the codes it can answer, each by reference to a shared
/// response of its status with the code among its examples: the conventions' on every one;
/// 404 only where the path names a thing, which may not exist; `parameter_missing` only where
/// it takes a body; a refused key's only where it needs a key; a repeated `Idempotency-Key`'s
/// only where it takes one; and the codes it declares (`x-error-codes`). So
/// `/v1/ping` documents no 401, 403 or 409 whatever other endpoints answer. 502, 503 and 504
/// as a balancer's, without content. Any other status is read as the error envelope
/// (`default`).
#[test]
fn every_operation_documents_exactly_the_errors_it_can_answer() {
    use ErrorCode::*;
    let conventions = [
        MethodNotAllowed,
        ParameterUnknown,
        ParameterInvalid,
        JsonInvalid,
        ContentTypeUnsupported,
        PayloadTooLarge,
        RequestHeaderTooLarge,
        RequestInvalid,
        RequestTimeout,
        UriTooLong,
        HttpVersionNotSupported,
        RateLimited,
        InternalError,
    ];
    let keys = [
        KeyMissing,
        KeyMalformed,
        KeyUnknown,
        KeyExpired,
        KeyRevoked,
        KeyScopeMissing,
    ];
    for operation in operations()
        .into_iter()
        .filter(|operation| operation.method != "head")
    {
        let what = format!("{} {}", operation.method, operation.template);
        let responses = &operation.operation["responses"];
        let mut expected: Vec<ErrorCode> = conventions.to_vec();
        if operation.template.contains('{') {
            expected.push(ResourceMissing);
        }
        if operation.operation.get("requestBody").is_some() {
            expected.push(ParameterMissing);
        }
        if operation.operation["security"]
            .as_array()
            .is_some_and(|security| !security.is_empty())
        {
            expected.extend(keys);
        }
        let takes_idempotency_key = operation.operation["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|parameter| parameter["name"] == "Idempotency-Key");
        if takes_idempotency_key {
            expected.extend([IdempotencyKeyInUse, IdempotencyKeyReused]);
        }
        // The codes it declares as its own.
        for name in operation.operation["x-error-codes"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let code = ErrorCode::ALL
                .into_iter()
                .find(|code| code.as_str() == name)
                .unwrap_or_else(|| panic!("{what}: declares {name}, no code"));
            expected.push(code);
        }
        let mut documented: Vec<ErrorCode> = Vec::new();
        for (status, reference) in responses.as_object().unwrap() {
            if ["default", "502", "503", "504"].contains(&status.as_str())
                || status.starts_with('2')
            {
                continue;
            }
            let response = shared_response(reference);
            for (name, example) in response["content"]["application/json"]["examples"]
                .as_object()
                .unwrap_or_else(|| panic!("{what}: {status} has no examples"))
            {
                let code = ErrorCode::ALL
                    .into_iter()
                    .find(|code| code.as_str() == name)
                    .unwrap_or_else(|| panic!("{what}: {name} is no code"));
                assert_eq!(example["value"]["error"]["code"], name.as_str(), "{what}");
                assert_eq!(code.spec().status.as_str(), status, "{what}: {name}");
                documented.push(code);
            }
        }
        documented.sort_by_key(|code| ErrorCode::ALL.iter().position(|listed| listed == code));
        expected.sort_by_key(|code| ErrorCode::ALL.iter().position(|listed| listed == code));
        assert_eq!(documented, expected, "{what}");
        if operation.template == "/v1/ping" {
            for status in ["401", "403", "404", "409", "422"] {
                assert!(responses.get(status).is_none(), "{what}: {status}");
            }
        }
        let default = shared_response(&responses["default"]);
        assert_eq!(
            default["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/ErrorEnvelope",
            "{what}"
        );
        // A balancer's answer is declared without content, so that a generated client does not
        // parse its HTML as the error envelope.
        for status in ["502", "503", "504"] {
            let gateway = shared_response(&responses[status]);
            assert_eq!(gateway.get("content"), None, "{what}: {status}");
            assert!(
                gateway["description"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!(
                        "A balancer or proxy in front of the service answered `{status}`"
                    )),
                "{what}: {status}"
            );
        }
    }
}

/// Every GET has its HEAD twin: its own id, the same headers, no content.
#[test]
fn every_get_has_a_head_twin_without_content() {
    let operations = operations();
    for get in operations
        .iter()
        .filter(|operation| operation.method == "get")
    {
        let head = operations
            .iter()
            .find(|operation| operation.method == "head" && operation.template == get.template)
            .unwrap_or_else(|| panic!("no HEAD for {}", get.template));
        assert_eq!(
            head.operation["operationId"],
            format!("{}_head", get.operation["operationId"].as_str().unwrap())
        );
        for (status, response) in head.operation["responses"].as_object().unwrap() {
            let response = if response.get("$ref").is_some() {
                shared_response(response)
            } else {
                response
            };
            assert!(response.get("content").is_none(), "HEAD {status}");
            // A balancer's answer promises none of the service's headers.
            if ["502", "503", "504"].contains(&status.as_str()) {
                assert_eq!(response.get("headers"), None, "HEAD {status}");
                continue;
            }
            assert!(
                response["headers"]["Service-Request-Id"].is_object(),
                "HEAD {} {status}",
                get.template
            );
        }
    }
}

/// Access to member data is by key: every operation marked `x-member-data` needs the partner
/// key and names its scope (the lint, `partner-member-data-needs-a-key`, holds the document to
/// the same; the test build's `things` are such operations).
#[test]
fn every_operation_on_member_data_needs_a_key() {
    let mut marked = 0;
    for operation in operations() {
        if operation.operation["x-member-data"] != json!(true) {
            continue;
        }
        marked += 1;
        let what = format!("{} {}", operation.method, operation.template);
        assert_eq!(
            operation.operation["security"],
            json!([{"partner_key": []}]),
            "{what}"
        );
        let scope = operation.operation["x-required-scope"]
            .as_str()
            .unwrap_or_default();
        let shaped = scope.split_once(':').is_some_and(|(things, verb)| {
            !things.is_empty() && !verb.is_empty() && !scope.contains(char::is_uppercase)
        });
        assert!(shaped, "{what}: {scope:?}");
    }
    assert!(
        marked >= 7,
        "the test build's seven operations on things, at least"
    );
    // Ping reads no member data and needs no key.
    let ping = &DOCUMENT["paths"]["/ping"]["get"];
    assert_eq!(ping["security"], json!([]));
    assert!(ping.get("x-member-data").is_none());
}
