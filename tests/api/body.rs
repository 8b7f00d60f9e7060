//! The JSON body machinery every POST/PATCH endpoint will use, through the test-only route
//! `POST /test/echo` whose body is `{name_id: string, count: u32, nested?: {size: u32}}`.

use serde_json::{Value, json};

use crate::helpers::{ExpectedError, assert_conventions, spawn_app, spawn_app_with};

#[actix_web::test]
async fn a_valid_body_is_parsed() {
    let app = spawn_app().await;
    let body = r#"{"name_id":"pa_1","count":3,"nested":{"size":2}}"#;
    let response = app.send_json("POST", "/test/echo", body).await;
    assert_eq!(response.status, 200);
    assert_conventions(&response.headers);
    let echoed: Value = response.json();
    assert_eq!(
        echoed,
        json!({"name_id":"pa_1","count":3,"nested":{"size":2}})
    );
}

#[actix_web::test]
async fn charset_parameter_is_accepted() {
    let app = spawn_app().await;
    let response = app
        .send(
            app.request("POST", "/test/echo")
                .header("content-type", "application/json; charset=utf-8")
                .body(r#"{"name_id":"x","count":1}"#),
        )
        .await;
    assert_eq!(response.status, 200);
}

#[actix_web::test]
async fn body_errors_map_to_catalogue_codes() {
    let app = spawn_app().await;
    let cases: [(&str, u16, &str, &str, Option<&str>); 7] = [
        (
            r#"{"name_id":"x","count":1,"nested":{"size":1,"colour":"red"}}"#,
            400,
            "parameter_unknown",
            "Received unknown parameter: nested.colour",
            Some("nested.colour"),
        ),
        (
            r#"{"count":1}"#,
            400,
            "parameter_missing",
            "Missing required parameter: name_id",
            Some("name_id"),
        ),
        (
            r#"{"name_id":"x","count":1,"nested":{}}"#,
            400,
            "parameter_missing",
            "Missing required parameter: nested.size",
            Some("nested.size"),
        ),
        (
            r#"{"name_id":"x","count":"ten"}"#,
            400,
            "parameter_invalid",
            "Invalid value for parameter count.",
            Some("count"),
        ),
        (
            r#"{"name_id":"x","count":-1}"#,
            400,
            "parameter_invalid",
            "Invalid value for parameter count.",
            Some("count"),
        ),
        (
            r#"{"name_id":"x","count":1"#,
            400,
            "json_invalid",
            "The request body is not valid JSON: it ends before the JSON does (line 1, column 24).",
            None,
        ),
        (
            "[1,2]",
            400,
            "parameter_invalid",
            "The request body must be a JSON object.",
            None,
        ),
    ];
    for (body, status, code, message, param) in cases {
        let response = app.send_json("POST", "/test/echo", body).await;
        app.assert_error(
            &response,
            ExpectedError::invalid_request(status, code, message, param),
        );
    }
}

#[actix_web::test]
async fn a_body_without_json_content_type_is_unsupported() {
    let app = spawn_app().await;
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let mut request = app
            .request("POST", "/test/echo")
            .body(r#"{"name_id":"x","count":1}"#);
        if let Some(content_type) = content_type {
            request = request.header("content-type", content_type);
        }
        let response = app.send(request).await;
        app.assert_error(
            &response,
            ExpectedError::invalid_request(
                415,
                "content_type_unsupported",
                "Request bodies must be sent as application/json.",
                None,
            ),
        );
    }
}

#[actix_web::test]
async fn a_body_over_the_default_limit_is_too_large() {
    let app = spawn_app().await;
    let padding = "x".repeat(64 * 1024);
    let body = format!(r#"{{"name_id":"{padding}","count":1}}"#);
    let response = app.send_json("POST", "/test/echo", &body).await;
    app.assert_error(
        &response,
        ExpectedError::invalid_request(
            413,
            "payload_too_large",
            "The request body is larger than the limit of 65536 bytes.",
            None,
        ),
    );
}

#[actix_web::test]
async fn a_streamed_body_over_the_limit_is_too_large() {
    let app = spawn_app_with(|config| config.max_body_bytes = 100).await;
    // No Content-Length: the limit is enforced while reading.
    let chunks: Vec<Result<String, std::io::Error>> =
        (0..20).map(|_| Ok("          ".to_owned())).collect();
    let response = app
        .send(
            app.request("POST", "/test/echo")
                .header("content-type", "application/json")
                .body(reqwest::Body::wrap_stream(futures_util::stream::iter(
                    chunks,
                ))),
        )
        .await;
    app.assert_error(
        &response,
        ExpectedError::invalid_request(
            413,
            "payload_too_large",
            "The request body is larger than the limit of 100 bytes.",
            None,
        ),
    );
}
