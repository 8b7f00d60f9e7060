//! GET and HEAD /v1/ping, and its refusal of parameters it does not know.

use crate::helpers::{ExpectedError, assert_conventions, spawn_app};

#[actix_web::test]
async fn get_ping_answers_pong() {
    let app = spawn_app().await;
    let response = app.get("/v1/ping").await;
    assert_eq!(response.status, 200);
    assert_conventions(&response.headers);
    assert_eq!(response.text(), r#"{"object":"ping","pong":true}"#);
}

#[actix_web::test]
async fn head_ping_answers_like_get_without_a_body() {
    let app = spawn_app().await;
    let response = app.send(app.request("HEAD", "/v1/ping")).await;
    assert_eq!(response.status, 200);
    assert_conventions(&response.headers);
    assert_eq!(response.header("content-length"), "29");
    assert_eq!(response.body.len(), 0);
}

#[actix_web::test]
async fn empty_body_and_empty_object_are_accepted() {
    let app = spawn_app().await;
    for body in ["", "{}", " { } "] {
        let response = app.send_json("GET", "/v1/ping", body).await;
        assert_eq!(response.status, 200, "body {body:?}");
        assert_eq!(response.text(), r#"{"object":"ping","pong":true}"#);
    }
}

#[actix_web::test]
async fn unknown_query_parameter_is_refused() {
    let app = spawn_app().await;
    for query in ["foo=1", "foo", "foo=1&bar=2"] {
        let response = app.get(&format!("/v1/ping?{query}")).await;
        app.assert_error(&response, ExpectedError::unknown_foo());
    }
}

#[actix_web::test]
async fn unknown_body_field_is_refused() {
    let app = spawn_app().await;
    let response = app.send_json("GET", "/v1/ping", r#"{"foo":1}"#).await;
    app.assert_error(&response, ExpectedError::unknown_foo());
}

#[actix_web::test]
async fn a_body_that_is_not_json_is_refused() {
    let app = spawn_app().await;
    let response = app
        .send(
            app.request("GET", "/v1/ping")
                .header("content-type", "text/plain")
                .body("hello"),
        )
        .await;
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
