//! Faults on the service side and errors raised by actix-web itself all reach the client as
//! the contract's JSON error object; internal detail goes only to the log.

use crate::helpers::{ExpectedError, log_lines_containing, spawn_app};

#[actix_web::test]
async fn a_panicking_handler_answers_500_and_the_worker_goes_on() {
    let app = spawn_app().await;
    let response = app.get("/test/panic").await;
    app.assert_error(&response, ExpectedError::internal());
    let request_id = response.header("service-request-id");
    let logged = log_lines_containing(&request_id);
    assert!(
        logged.iter().any(|line| line.contains("panicked")
            && line.contains("test panic: secret internal detail")
            && line.contains("/test/panic")),
        "panic not logged with its id: {logged:?}"
    );
    assert!(
        logged
            .iter()
            .any(|line| line.contains("access") && line.contains(" 500 ")),
        "no access line for the panic: {logged:?}"
    );
    // The only worker survived.
    for _ in 0..3 {
        assert_eq!(app.get("/v1/ping").await.status, 200);
    }
}

#[actix_web::test]
async fn framework_extractor_errors_become_json_errors() {
    let app = spawn_app().await;
    let response = app.send_json("POST", "/test/framework-json", "{oops").await;
    app.assert_error(
        &response,
        ExpectedError::invalid_request(
            400,
            "request_invalid",
            "The request could not be understood.",
            None,
        ),
    );
}

#[actix_web::test]
async fn framework_error_text_is_not_sent_to_the_client() {
    let app = spawn_app().await;
    let response = app.get("/test/framework-error").await;
    app.assert_error(
        &response,
        ExpectedError::invalid_request(
            400,
            "request_invalid",
            "The request could not be understood.",
            None,
        ),
    );
}

#[actix_web::test]
async fn a_plain_text_error_response_is_converted() {
    let app = spawn_app().await;
    let response = app.get("/test/plain-error/500").await;
    app.assert_error(&response, ExpectedError::internal());
}

/// A status the catalogue has no row for keeps its status (and its `Retry-After`): a 401, 409
/// or 503 is never rewritten to 400 or 500. The body carries the code of the status's class,
/// and the gap is logged as an error (a test of the catalogue keeps it from happening).
#[actix_web::test]
async fn a_status_without_a_catalogue_row_is_not_rewritten() {
    let app = spawn_app().await;
    for status in [402, 410] {
        let response = app.get(&format!("/test/plain-error/{status}")).await;
        app.assert_error(
            &response,
            ExpectedError::invalid_request(
                status,
                "request_invalid",
                "The request could not be understood.",
                None,
            ),
        );
    }
    // A server error without a row keeps its status, with the code of its class.
    let response = app.get("/test/plain-error/507").await;
    app.assert_error(
        &response,
        ExpectedError {
            status: 507,
            ..ExpectedError::internal()
        },
    );
    // A 503 has one: the service's own `service_unavailable`, its `Retry-After` kept.
    let response = app.get("/test/plain-error/503").await;
    app.assert_error(
        &response,
        ExpectedError {
            status: 503,
            error_type: "api_error",
            code: "service_unavailable",
            message: "Member data cannot be reached right now. Retry after the time given in \
                      the Retry-After header, a create with the same Idempotency-Key.",
            param: None,
        },
    );
    assert_eq!(response.headers["retry-after"], "7");
}
