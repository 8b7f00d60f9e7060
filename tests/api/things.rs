//! The rehearsal endpoints (`examples/rehearsal/things.rs`, the module the example server
//! mounts too), tested: pages, scopes, partners kept apart, writes, deprecation, the log's
//! request context, and every response checked against their generated document.

use serde_json::{Value, json};

use partner_api::edge::mount::Endpoints;

use crate::helpers::{ExpectedError, assert_error_at, log_lines_containing, spawn_app};

#[path = "../../examples/rehearsal/things.rs"]
mod endpoints;
pub use endpoints::*;

// ---- The tests ----

#[actix_web::test]
async fn a_list_pages_through_every_thing_with_the_default_limit() {
    let app = spawn_app().await;
    let mut ids = Vec::new();
    let mut query = String::new();
    let mut pages = Vec::new();
    for _ in 0..10 {
        let response = app.get_keyed(&format!("/v1/things{query}")).await;
        assert_eq!(response.status, 200, "{}", response.text());
        let page = response.json();
        let data = page["data"].as_array().unwrap();
        pages.push(data.len());
        ids.extend(
            data.iter()
                .map(|thing| thing["id"].as_str().unwrap().to_owned()),
        );
        if page["has_more"] == json!(false) {
            assert_eq!(page["next_cursor"], Value::Null);
            break;
        }
        assert_eq!(page["next_cursor"], json!(ids.last().unwrap()));
        query = format!("?starting_after={}", ids.last().unwrap());
    }
    assert_eq!(pages, [10, 10, 5]);
    let expected: Vec<String> = (1..=THINGS).map(|n| format!("th_{n:04}")).collect();
    assert_eq!(ids, expected);
}

#[actix_web::test]
async fn a_page_holds_what_limit_asks_for_up_to_a_hundred() {
    let app = spawn_app().await;
    let response = app
        .get_keyed("/v1/things?limit=2&starting_after=th_0003")
        .await;
    assert_eq!(
        response.json(),
        json!({
            "object": "list",
            "data": [
                {"object": "thing", "id": "th_0004", "label": "Thing number 4", "status": "active", "starts_on": null, "price": null, "created": "2026-11-25T00:00:00Z"},
                {"object": "thing", "id": "th_0005", "label": "Thing number 5", "status": "active", "starts_on": null, "price": null, "created": "2026-11-25T00:00:00Z"},
            ],
            "has_more": true,
            "next_cursor": "th_0005",
        })
    );
    let response = app.get_keyed("/v1/things?limit=100").await;
    let page = response.json();
    assert_eq!(page["data"].as_array().unwrap().len(), usize::from(THINGS));
    assert_eq!(
        (&page["has_more"], &page["next_cursor"]),
        (&json!(false), &Value::Null)
    );
}

#[actix_web::test]
async fn list_parameters_out_of_range_are_refused_not_clamped() {
    let app = spawn_app().await;
    for (query, param, message) in [
        (
            "limit=0",
            "limit",
            "Invalid value for parameter limit: it must be a whole number from 1 to 100.",
        ),
        (
            "limit=101",
            "limit",
            "Invalid value for parameter limit: it must be a whole number from 1 to 100.",
        ),
        (
            "limit=ten",
            "limit",
            "Invalid value for parameter limit: it must be a whole number from 1 to 100.",
        ),
        (
            "starting_after=thing%2F1",
            "starting_after",
            "Invalid value for parameter starting_after: it must be the next_cursor of a page: \
             1 to 255 letters, digits, _ and -.",
        ),
    ] {
        let response = app.get_keyed(&format!("/v1/things?{query}")).await;
        assert_error_at(
            &response,
            ExpectedError {
                status: 400,
                error_type: "invalid_request_error",
                code: "parameter_invalid",
                message,
                param: Some(param),
            },
            &app.address,
        );
    }
    let response = app.get_keyed("/v1/things?page=2").await;
    assert_eq!(response.json()["error"]["code"], "parameter_unknown");
}

#[actix_web::test]
async fn a_thing_is_found_by_its_id_and_a_malformed_id_is_named() {
    let app = spawn_app().await;
    let response = app.get_keyed("/v1/things/th_0007").await;
    assert_eq!(response.status, 200);
    assert_eq!(
        response.json(),
        json!({"object": "thing", "id": "th_0007", "label": "Thing number 7", "status": "active", "starts_on": null, "price": null, "created": "2026-11-25T00:00:00Z"})
    );
    let head = app.send(app.keyed("HEAD", "/v1/things/th_0007")).await;
    assert_eq!((head.status, head.body.len()), (200, 0));
    let response = app.get_keyed("/v1/things/th_0099").await;
    assert_error_at(
        &response,
        ExpectedError {
            status: 404,
            error_type: "invalid_request_error",
            code: "resource_missing",
            message: "No such thing: 'th_0099' (GET /v1/things/th_0099).",
            param: None,
        },
        &app.address,
    );
    // Percent-encoded, the id is still the router's decoded one.
    let response = app.get_keyed("/v1/things/th%5F0007").await;
    assert_eq!(response.json()["id"], "th_0007");
    let response = app.get_keyed("/v1/things/widget_7").await;
    assert_error_at(
        &response,
        ExpectedError {
            status: 400,
            error_type: "invalid_request_error",
            code: "parameter_invalid",
            message: "Invalid value for parameter thing: it must be a thing's id: th_ and up to 64 \
                      letters and digits.",
            param: Some("thing"),
        },
        &app.address,
    );
    let response = app.send(app.keyed("PUT", "/v1/things/th_0007")).await;
    assert_eq!(response.status, 405);
    assert_eq!(response.headers["allow"], "GET, HEAD, DELETE, PATCH");
}

#[actix_web::test]
async fn a_handlers_log_lines_carry_its_request_id() {
    let app = spawn_app().await;
    let response = app.get_keyed("/v1/things?limit=3").await;
    let id = response.headers["service-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let lines = log_lines_containing("listed 3 things on /v1/things");
    assert!(
        lines
            .iter()
            .any(|line| line.contains(&format!("{id} listed 3 things"))),
        "{lines:?}"
    );
}

/// A handler knows its request as the service decided it: the method, and the path as the
/// router decoded it (the `%5F` of the target is `_` here, as it was for the route).
#[actix_web::test]
async fn a_handler_knows_the_method_and_the_decoded_path() {
    let app = spawn_app().await;
    for method in ["GET", "HEAD"] {
        let response = app.send(app.keyed(method, "/v1/things/th%5F0042")).await;
        assert_eq!(response.status, 404);
        let id = response.header("service-request-id");
        let line = format!("{id} no thing th_0042 for {method} /v1/things/th_0042");
        assert_eq!(log_lines_containing(&line).len(), 1, "{method}");
    }
}

/// The document of the API with these endpoints, written for `scripts/lint-openapi` to lint
/// with the project's rules (`target/test-endpoints/v1.yaml`), and what it says of them.
#[test]
fn the_test_endpoints_document_describes_them_from_the_shared_machinery() {
    let document = partner_api::openapi::document_with(&ENDPOINTS);
    let yaml = partner_api::openapi::to_yaml(&document);
    let directory = concat!(env!("CARGO_MANIFEST_DIR"), "/target/test-endpoints");
    std::fs::create_dir_all(directory).unwrap();
    std::fs::write(format!("{directory}/v1.yaml"), &yaml).unwrap();
    // Its 3.0.3 rendition too, linted the same way: a nullable reference (`starts_on`, an
    // `Option<Date>`) is its hard case.
    let rendition = partner_api::openapi::oas30::to_yaml(&document);
    std::fs::write(format!("{directory}/v1.oas30.yaml"), &rendition).unwrap();
    let rendition: Value = yaml_serde::from_str(&rendition).unwrap();
    assert!(!rendition.to_string().contains(r#""null""#));
    assert_eq!(
        rendition["components"]["schemas"]["Thing"]["properties"]["starts_on"],
        json!({
            "type": "string",
            "description": "The day it starts, if one is set.",
            "allOf": [{"$ref": "#/components/schemas/Date"}],
            "nullable": true,
        })
    );
    let document: Value = yaml_serde::from_str(&yaml).unwrap();
    let list = &document["paths"]["/things"];
    // HEAD from the GET, though no annotation names it.
    assert_eq!(list["head"]["operationId"], "list_things_head");
    assert_eq!(
        document["paths"]["/things/{thing}"]["head"]["operationId"],
        "retrieve_thing_head"
    );
    let parameters = list["get"]["parameters"].as_array().unwrap();
    assert_eq!(
        parameters
            .iter()
            .map(|parameter| (
                parameter["name"].as_str().unwrap(),
                &parameter["schema"]["$ref"],
                &parameter["required"]
            ))
            .collect::<Vec<_>>(),
        [
            (
                "limit",
                &json!("#/components/schemas/ListLimit"),
                &json!(false)
            ),
            (
                "starting_after",
                &json!("#/components/schemas/ListCursor"),
                &json!(false)
            ),
        ]
    );
    assert_eq!(
        list["get"]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/ThingList"
    );
    // The page type is the envelope, whole, with things as its data.
    let page = &document["components"]["schemas"]["ThingList"];
    assert_eq!(
        page["required"],
        json!(["object", "data", "has_more", "next_cursor"])
    );
    assert_eq!(
        page["properties"]["data"]["items"]["$ref"],
        "#/components/schemas/Thing"
    );
    // Their tag, described, after the API's own (`document::every_tag_in_use_is_listed_with_its_
    // description` holds every tag to that).
    let tags = document["tags"].as_array().unwrap();
    assert_eq!(
        tags.last().unwrap(),
        &json!({"name": "Things", "description": "Things, to rehearse the endpoints to come."})
    );
    // What two GET endpoints add to the document: their own parameters, success responses
    // and types, and a line or two per shared convention (CONTRIBUTING.md, "How to add an
    // endpoint"); the conventions themselves are described once, in `components`.
    // A shared response an endpoint is the first to use (`NotFound`, here) is written once
    // for all, so it is not counted; nor are the code samples, which are written from the
    // operation, not by its author.
    let lines_without_shared_responses = |document| {
        let mut document: utoipa::openapi::OpenApi = document;
        if let Some(components) = &mut document.components {
            components.responses.clear();
        }
        for item in document.paths.paths.values_mut() {
            let operations = [
                &mut item.get,
                &mut item.head,
                &mut item.post,
                &mut item.patch,
                &mut item.delete,
            ];
            for operation in operations.into_iter().flatten() {
                if let Some(extensions) = &mut operation.extensions {
                    extensions.remove("x-codeSamples");
                }
            }
        }
        partner_api::openapi::to_yaml(&document).lines().count()
    };
    let undeprecated = Endpoints {
        deprecations: &[],
        ..ENDPOINTS
    };
    let added = lines_without_shared_responses(partner_api::openapi::document_with(&undeprecated))
        - lines_without_shared_responses(partner_api::openapi::document());
    // Eight operations (the six annotated and the two GETs' HEAD twins), each about 75 lines
    // of which 40 are references to the conventions' responses, and their types (about 150,
    // money and the timestamp included).
    println!("the eight operations add {added} lines to the document");
    assert!(added <= 8 * 115, "the eight operations add {added} lines");
}

/// A deprecated operation (a row of the deprecations) answers as before, and every answer to
/// it carries `Deprecation`, `Link` and `Sunset`: success, HEAD, an error of its own, the
/// rate limit's refusal. Other operations carry none; the document marks it `deprecated`.
#[actix_web::test]
async fn a_deprecated_operation_says_so_on_every_answer() {
    let app = crate::helpers::spawn_app_with(|config| {
        config.rate_limit_per_second = 1;
        config.rate_limit_burst = 5;
    })
    .await;
    let deprecation_headers = |response: &crate::helpers::TestResponse| {
        ["deprecation", "link", "sunset"].map(|name| {
            response
                .headers
                .get(name)
                .map(|value| value.to_str().unwrap().to_owned())
        })
    };
    let expected = [
        Some("@1795564800".to_owned()),
        Some("</docs/changelog#2026-11-25>; rel=\"deprecation\"".to_owned()),
        Some("Fri, 31 Dec 2027 00:00:00 GMT".to_owned()),
    ];
    let found = app.get_keyed("/v1/things/th_0001").await;
    assert_eq!(found.status, 200);
    assert_eq!(deprecation_headers(&found), expected);
    let head = app.send(app.keyed("HEAD", "/v1/things/th_0001")).await;
    assert_eq!(head.status, 200);
    assert_eq!(deprecation_headers(&head), expected);
    let missing = app.get_keyed("/v1/things/th_9999").await;
    assert_eq!(missing.status, 404);
    assert_eq!(deprecation_headers(&missing), expected);
    let list = app.get_keyed("/v1/things").await;
    assert_eq!(list.status, 200);
    assert_eq!(deprecation_headers(&list), [None, None, None]);
    // The burst of 5 is spent by now (four above and this one); the refusal says it too.
    let mut refused = None;
    for _ in 0..10 {
        let answer = app.get_keyed("/v1/things/th_0001").await;
        if answer.status == 429 {
            refused = Some(answer);
            break;
        }
    }
    let refused = refused.expect("a 429 within ten more requests");
    assert_eq!(deprecation_headers(&refused), expected);

    let document = partner_api::openapi::document_with(&ENDPOINTS);
    let document = serde_json::to_value(&document).unwrap();
    for method in ["get", "head"] {
        let operation = &document["paths"]["/things/{thing}"][method];
        assert_eq!(operation["deprecated"], true, "{method}");
        assert_eq!(
            operation["responses"]["200"]["headers"]["Sunset"]["$ref"],
            "#/components/headers/Sunset",
            "{method}"
        );
    }
    assert!(
        document["paths"]["/things"]["get"]
            .get("deprecated")
            .is_none()
    );
    assert_eq!(
        document["components"]["headers"]["Deprecation"]["schema"]["pattern"],
        "^@[0-9]+$"
    );
}

/// Every code sample of the test build's endpoints calls a concrete URL, the same in the three
/// languages: each path parameter filled with its example (`#[param(example = ...)]`).
#[test]
fn the_code_samples_fill_in_every_path_parameter() {
    let document = serde_json::to_value(partner_api::openapi::document_with(&ENDPOINTS)).unwrap();
    let base = "https://api.example.com/v1";
    for (template, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            // Each path parameter filled with its example, whichever the endpoint.
            let mut concrete = template.clone();
            for parameter in operation["parameters"].as_array().into_iter().flatten() {
                if parameter["in"] == "path" {
                    let name = parameter["name"].as_str().unwrap();
                    let example = parameter["example"].as_str().unwrap();
                    concrete = concrete.replace(&format!("{{{name}}}"), example);
                }
            }
            let samples = operation["x-codeSamples"].as_array().unwrap();
            let labels: Vec<&str> = samples
                .iter()
                .map(|sample| sample["label"].as_str().unwrap())
                .collect();
            assert_eq!(
                labels,
                ["curl", "Python", "TypeScript"],
                "{method} {template}"
            );
            for sample in samples {
                let source = sample["source"].as_str().unwrap();
                let start = source.find(base).expect("the sample calls the server");
                let url: String = source[start..]
                    .chars()
                    .take_while(|character| !matches!(character, '\'' | '"'))
                    .collect();
                assert_eq!(url, format!("{base}{concrete}"), "{method} {template}");
            }
        }
    }
}
