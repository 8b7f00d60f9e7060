//! Headers every response carries, fresh request ids, and the configurable docs base.

use std::collections::HashSet;

use crate::helpers::{
    ExpectedError, assert_conventions, assert_error_at, log_lines_containing, spawn_app,
    spawn_app_with,
};

#[actix_web::test]
async fn every_response_carries_the_convention_headers_and_a_fresh_id() {
    let app = spawn_app().await;
    let requests = [
        ("GET", "/v1/ping"),
        ("HEAD", "/v1/ping"),
        ("GET", "/v1/ping?x=1"),
        ("POST", "/v1/ping"),
        ("GET", "/nowhere"),
        ("DELETE", "/v1"),
        ("GET", "/test/panic"),
        ("POST", "/test/echo"),
    ];
    let mut ids = HashSet::new();
    for _ in 0..3 {
        for (method, path) in requests {
            let response = app.send(app.request(method, path)).await;
            let id = assert_conventions(&response.headers);
            assert!(ids.insert(id), "request id reused");
        }
    }
}

#[actix_web::test]
async fn the_access_log_line_carries_the_request_id() {
    let app = spawn_app().await;
    let response = app.get("/v1/ping").await;
    let id = assert_conventions(&response.headers);
    let lines = log_lines_containing(&id);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].starts_with("INFO access: "), "{}", lines[0]);
    assert!(
        lines[0].contains("127.0.0.1 \"GET /v1/ping\" 200 "),
        "{}",
        lines[0]
    );
    assert!(lines[0].ends_with("us"), "{}", lines[0]);
}

#[actix_web::test]
async fn doc_url_uses_the_configured_docs_base() {
    let app = spawn_app_with(|config| {
        config.public_url = Some(parse_base_url("https://developers.example.test/api/"))
    })
    .await;
    let response = app.get("/v1/pong").await;
    assert_error_at(
        &response,
        ExpectedError::invalid_request(
            404,
            "resource_missing",
            "Unrecognized request URL (GET: /v1/pong).",
            None,
        ),
        "https://developers.example.test/api",
    );
}

/// `doc_url` names the one origin the service was given (`--public-url`) or has (its
/// listener's), whatever `Host` or forwarded scheme the client sends: a client never chooses
/// where another's links point. It used to echo `Host: evil.example` into the link.
#[actix_web::test]
async fn doc_url_never_follows_the_host_the_client_addressed() {
    let expected = || {
        ExpectedError::invalid_request(
            404,
            "resource_missing",
            "Unrecognized request URL (GET: /v1/pong).",
            None,
        )
    };
    let app = spawn_app().await;
    let response = app
        .send(
            app.request("GET", "/v1/pong")
                .header("host", "evil.example"),
        )
        .await;
    assert_error_at(&response, expected(), &format!("http://{}", app.local_addr));
    // Nor the scheme a trusted proxy recorded: behind a proxy, `--public-url` says the origin.
    let behind_proxy = spawn_app_with(|config| {
        config.trusted_proxies = vec!["127.0.0.1".parse().unwrap()];
    })
    .await;
    let response = behind_proxy
        .send(
            behind_proxy
                .request("GET", "/v1/pong")
                .header("host", "api.example.test")
                .header("x-forwarded-for", "198.51.100.7")
                .header("x-forwarded-proto", "https"),
        )
        .await;
    assert_error_at(
        &response,
        expected(),
        &format!("http://{}", behind_proxy.local_addr),
    );
}

/// A `Host` refused with a 400 is not echoed into the answer's `doc_url`: the link names the
/// listener's own origin. It used to name `http://evil.example:99999`.
#[actix_web::test]
async fn doc_url_never_echoes_a_refused_host() {
    let app = spawn_app().await;
    let response = app
        .send(
            app.request("GET", "/v1/ping")
                .header("host", "evil.example:99999"),
        )
        .await;
    assert_error_at(
        &response,
        ExpectedError::invalid_request(
            400,
            "request_invalid",
            "The request must have one Host header holding a host name or address, with an \
             optional port.",
            None,
        ),
        &format!("http://{}", app.local_addr),
    );
}

/// A docs base URL as the command line would parse it.
fn parse_base_url(url: &str) -> partner_api::server::config::BaseUrl {
    use clap::Parser;
    partner_api::server::config::Cli::try_parse_from(["partner-api", "--public-url", url])
        .unwrap()
        .server
        .public_url
        .unwrap()
}
