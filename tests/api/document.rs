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

/// Every catalogue code is documented on every operation, by reference to the shared
/// response of its status with the code among its examples; 404 only where the path names a
/// thing, which may not exist; 502, 503 and 504 as a balancer's, without content. Any other
/// status is read as the error envelope (`default`).
#[test]
fn every_operation_documents_every_convention_error() {
    for operation in operations()
        .into_iter()
        .filter(|operation| operation.method != "head")
    {
        let what = format!("{} {}", operation.method, operation.template);
        let responses = &operation.operation["responses"];
        for code in ErrorCode::ALL {
            let status = code.spec().status.as_str().to_owned();
            if code == ErrorCode::ResourceMissing && !operation.template.contains('{') {
                assert!(responses.get(&status).is_none(), "{what}");
                continue;
            }
            let response = shared_response(&responses[&status]);
            let example = &response["content"]["application/json"]["examples"][code.as_str()]["value"]
                ["error"]["code"];
            assert_eq!(example, code.as_str(), "{what}: {code:?}");
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
                    .starts_with(&format!("Not an answer of the service: a balancer or proxy in front of it answered `{status}`")),
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
