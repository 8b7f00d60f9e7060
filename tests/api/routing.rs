//! Unknown paths answer 404 for every method; a known path with another method answers 405
//! with `Allow`. Both come from the shared route table, not from code in any endpoint.

use crate::helpers::{ExpectedError, assert_conventions, spawn_app};

const METHODS: [&str; 8] = [
    "GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "BREW",
];

#[actix_web::test]
async fn unknown_paths_are_resource_missing_for_every_method() {
    let app = spawn_app().await;
    let paths = [
        "/",
        "/v1",
        "/v1/",
        "/v1/ping/",
        "/V1/PING",
        "/v1/pings",
        "/v2/ping",
        "/v1/ping/extra",
        "/docs/nope",
        "/openapi/nope",
        "/v1/p%69ngs",
    ];
    for path in paths {
        // The message names the path as the router decoded it.
        let decoded = path.replace("%69", "i");
        for method in METHODS {
            let response = app.send(app.request(method, path)).await;
            let message = format!("Unrecognized request URL ({method}: {decoded}).");
            app.assert_error(
                &response,
                ExpectedError::invalid_request(404, "resource_missing", &message, None),
            );
        }
    }
}

/// RFC 3986, section 6.2.2.2: a percent-encoded unreserved character is the character itself.
#[actix_web::test]
async fn percent_encoded_unreserved_characters_name_the_same_path() {
    let app = spawn_app().await;
    let response = app.get("/v1/p%69ng").await;
    assert_eq!(response.status, 200);
}

#[actix_web::test]
async fn unknown_path_with_head_answers_404_without_body() {
    let app = spawn_app().await;
    let response = app.send(app.request("HEAD", "/v1/pings")).await;
    assert_eq!(response.status, 404);
    assert_conventions(&response.headers);
    assert_eq!(response.body.len(), 0);
}

#[actix_web::test]
async fn other_methods_on_ping_are_method_not_allowed_with_allow() {
    let app = spawn_app().await;
    for method in [
        "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "BREW", "GETT",
    ] {
        let response = app.send(app.request(method, "/v1/ping")).await;
        let message =
            format!("The method {method} is not allowed on this endpoint. Allowed: GET, HEAD.");
        app.assert_error(
            &response,
            ExpectedError::invalid_request(405, "method_not_allowed", &message, None),
        );
        assert_eq!(response.header("allow"), "GET, HEAD");
    }
}

#[actix_web::test]
async fn a_long_path_is_cut_in_the_message() {
    let app = spawn_app().await;
    let path = format!("/{}", "a".repeat(1000));
    let response = app.get(&path).await;
    let message = format!("Unrecognized request URL (GET: /{}…).", "a".repeat(199));
    app.assert_error(
        &response,
        ExpectedError::invalid_request(404, "resource_missing", &message, None),
    );
}

/// Every path of the document answers the methods it does not serve with 405 and its `Allow`
/// (the methods the document gives it, HEAD with GET), and a near miss of it with 404: from
/// the route table, whatever the endpoint.
#[actix_web::test]
async fn every_path_answers_other_methods_405_and_near_misses_404() {
    let app = spawn_app().await;
    let operations = crate::document::operations();
    let mut paths: Vec<&str> = operations
        .iter()
        .map(|operation| &*operation.path)
        .collect();
    paths.dedup();
    for path in paths {
        let served: Vec<String> = operations
            .iter()
            .filter(|operation| operation.path == path)
            .map(|operation| operation.method.to_ascii_uppercase())
            .collect();
        let allow = [
            "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "TRACE", "PATCH",
        ]
        .into_iter()
        .filter(|method| served.iter().any(|served| served == method))
        .collect::<Vec<_>>()
        .join(", ");
        for method in METHODS
            .into_iter()
            .filter(|method| !served.iter().any(|s| s == method))
        {
            let response = app.send(app.request(method, path)).await;
            let message =
                format!("The method {method} is not allowed on this endpoint. Allowed: {allow}.");
            app.assert_error(
                &response,
                ExpectedError::invalid_request(405, "method_not_allowed", &message, None),
            );
            assert_eq!(response.header("allow"), allow, "{method} {path}");
        }
        let near_miss = format!("{path}/");
        let response = app.get(&near_miss).await;
        let message = format!("Unrecognized request URL (GET: {near_miss}).");
        app.assert_error(
            &response,
            ExpectedError::invalid_request(404, "resource_missing", &message, None),
        );
    }
}

/// Contract rule 5 for every operation, whatever its handler: a query parameter or a body
/// field it does not know is refused with `parameter_unknown` naming it, never ignored.
#[actix_web::test]
async fn every_operation_refuses_what_it_does_not_know() {
    let app = spawn_app().await;
    for operation in crate::document::operations() {
        if operation.method == "head" {
            continue;
        }
        let method = operation.method.to_ascii_uppercase();
        let what = format!("{method} {}", operation.template);
        let separator = if operation.path.contains('?') {
            '&'
        } else {
            '?'
        };
        let query = format!("{}{separator}zz_unknown=1", operation.path);
        // With the test partner's key, which every operation that needs one accepts.
        let response = app.send(app.keyed(&method, &query)).await;
        app.assert_error(
            &response,
            ExpectedError::invalid_request(
                400,
                "parameter_unknown",
                "Received unknown parameter: zz_unknown",
                Some("zz_unknown"),
            ),
        );
        let response = app
            .send(
                app.keyed(&method, &operation.path)
                    .header("content-type", "application/json")
                    .body(r#"{"zz_unknown":1}"#),
            )
            .await;
        assert_eq!(response.status, 400, "{what}: {}", response.text());
        assert_eq!(
            response.json()["error"]["param"],
            "zz_unknown",
            "{what}: {}",
            response.text()
        );
    }
}
