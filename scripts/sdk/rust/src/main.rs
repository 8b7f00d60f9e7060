//! Calls a running partner-api through both generated Rust clients, each generated from the
//! 3.0.3 document a server serves and calling through the stand-in balancer that document
//! names as its server (scripts/check-sdks). For each client: ping is a ping object with `pong`
//! true; pings until one is refused (at most 20) give a 429 read as the generated error
//! envelope, code `rate_limited`, with a request id of the documented form (progenitor's
//! answer carries its headers too: the id is the `Service-Request-Id` one, and `Retry-After`
//! is whole seconds); the balancer's HTML 503 is an `Err` value to retry, its body never
//! parsed into the envelope; and after the wait the retried ping answers again.
//!
//! openapi-generator's client takes its base path from the document (`Configuration::default`);
//! progenitor's `Client::new` takes one from its caller, which passes the document's server URL
//! as it stands. Usage: sdk-check <origin> <served 3.0.3 document, JSON>.

mod progenitor_generated {
    // Types the document publishes that no operation returns yet (the list envelope).
    #![allow(dead_code)]
    include!(concat!(env!("OUT_DIR"), "/progenitor_client.rs"));
}

use std::time::Duration;

use partner_api_client::apis::{
    Error as GeneratorError, configuration::Configuration, utility_api,
};
use partner_api_client::models as generator_models;
use progenitor_generated::types as progenitor_types;

/// The wait after a refusal, and before the next client starts: the tiny quota (2 requests,
/// 1 a second) is whole again after 2 s.
const QUOTA_REFILL: Duration = Duration::from_secs(2);

fn is_request_id(id: &str) -> bool {
    id.len() == 36
        && id.starts_with("req_")
        && id[4..]
            .bytes()
            .all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'))
}

async fn make_unavailable(origin: &str) {
    let answer = reqwest::Client::new()
        .post(format!("{origin}/standin/unavailable"))
        .send()
        .await
        .expect("the stand-in answers");
    assert_eq!(answer.status().as_u16(), 204);
}

async fn check_progenitor(origin: &str, base: &str) {
    let client = progenitor_generated::Client::new(base);
    let ping = client.ping().await.expect("ping answers").into_inner();
    assert!(ping.pong, "{ping:?}");
    assert_eq!(ping.object, progenitor_types::PingObject::Ping);
    println!(
        "ok: progenitor: ping answered pong {} (base URL {base})",
        ping.pong
    );

    let mut attempt = 1;
    let refused = loop {
        match client.ping().await {
            Ok(_) if attempt < 20 => attempt += 1,
            Ok(_) => panic!("20 pings in a row were answered: is the server's quota tiny?"),
            Err(error) => break error,
        }
    };
    let progenitor_client::Error::ErrorResponse(answer) = refused else {
        panic!("the refusal is not the typed error response: {refused:?}");
    };
    assert_eq!(answer.status().as_u16(), 429);
    let header = |name: &str| answer.headers()[name].to_str().unwrap().to_owned();
    let (request_id, retry_after) = (header("service-request-id"), header("retry-after"));
    let envelope: &progenitor_types::ErrorEnvelope = &answer;
    assert_eq!(envelope.error.code.to_string(), "rate_limited");
    assert!(is_request_id(&envelope.error.request_id.to_string()));
    assert_eq!(envelope.error.request_id.to_string(), request_id);
    let seconds: u64 = retry_after.parse().expect("Retry-After is whole seconds");
    assert!(seconds >= 1, "{retry_after}");
    println!(
        "ok: progenitor: 429 read after {attempt} pings: code {}, request id {request_id}, Retry-After {seconds}",
        envelope.error.code.to_string()
    );

    make_unavailable(origin).await;
    let unavailable = client
        .ping()
        .await
        .expect_err("the balancer's 503 is an error");
    assert_eq!(
        unavailable.status().map(|status| status.as_u16()),
        Some(503),
        "{unavailable:?}"
    );
    assert!(
        matches!(unavailable, progenitor_client::Error::UnexpectedResponse(_)),
        "the balancer's 503 is not UnexpectedResponse, as PARTNERS.md says: {unavailable:?}"
    );
    println!(
        "ok: progenitor: the balancer's HTML 503 is an Err to retry ({})",
        variant(&unavailable)
    );

    tokio::time::sleep(Duration::from_secs(seconds).max(QUOTA_REFILL)).await;
    let again = client
        .ping()
        .await
        .expect("the retried ping answers")
        .into_inner();
    assert!(again.pong);
    println!("ok: progenitor: the retried ping answered");
}

/// The name of a progenitor error's variant, for the log.
fn variant(error: &progenitor_client::Error<progenitor_types::ErrorEnvelope>) -> &'static str {
    match error {
        progenitor_client::Error::UnexpectedResponse(_) => "UnexpectedResponse",
        progenitor_client::Error::InvalidResponsePayload(..) => "InvalidResponsePayload",
        progenitor_client::Error::ErrorResponse(_) => "ErrorResponse",
        _ => "another variant",
    }
}

/// The error envelope in openapi-generator's typed error, whichever variant serde chose: the
/// enum is untagged and every variant holds the same envelope, so the first one matches any.
fn generator_envelope(error: &utility_api::PingError) -> Option<&generator_models::ErrorEnvelope> {
    use utility_api::PingError as E;
    match error {
        E::Status400(envelope)
        | E::Status405(envelope)
        | E::Status408(envelope)
        | E::Status413(envelope)
        | E::Status414(envelope)
        | E::Status415(envelope)
        | E::Status429(envelope)
        | E::Status431(envelope)
        | E::Status500(envelope)
        | E::Status505(envelope)
        | E::DefaultResponse(envelope) => Some(envelope),
        _ => None,
    }
}

async fn check_openapi_generator(origin: &str) {
    let configuration = Configuration::default();
    assert_eq!(configuration.base_path, format!("{origin}/v1"));
    let ping = utility_api::ping(&configuration)
        .await
        .expect("ping answers");
    assert!(ping.pong, "{ping:?}");
    assert_eq!(ping.object, generator_models::PingObject::Ping);
    println!(
        "ok: openapi-generator rust: ping answered pong {} (base path {}, none given)",
        ping.pong, configuration.base_path
    );

    let mut attempt = 1;
    let refused = loop {
        match utility_api::ping(&configuration).await {
            Ok(_) if attempt < 20 => attempt += 1,
            Ok(_) => panic!("20 pings in a row were answered: is the server's quota tiny?"),
            Err(error) => break error,
        }
    };
    let GeneratorError::ResponseError(content) = refused else {
        panic!("the refusal is not a response error: {refused:?}");
    };
    assert_eq!(content.status.as_u16(), 429);
    let envelope = content
        .entity
        .as_ref()
        .and_then(generator_envelope)
        .unwrap_or_else(|| panic!("the 429 was not read as the envelope: {}", content.content));
    assert_eq!(envelope.error.code, "rate_limited");
    assert!(is_request_id(&envelope.error.request_id));
    println!(
        "ok: openapi-generator rust: 429 read after {attempt} pings: code {}, request id {}",
        envelope.error.code, envelope.error.request_id
    );

    make_unavailable(origin).await;
    let unavailable = utility_api::ping(&configuration)
        .await
        .expect_err("the balancer's 503 is an error");
    let GeneratorError::ResponseError(content) = unavailable else {
        panic!("the balancer's 503 is not a response error: {unavailable:?}");
    };
    assert_eq!(content.status.as_u16(), 503);
    assert!(
        content
            .entity
            .as_ref()
            .and_then(generator_envelope)
            .is_none()
    );
    assert!(content.content.starts_with("<html>"), "{}", content.content);
    println!(
        "ok: openapi-generator rust: the balancer's HTML 503 is an Err to retry, nothing parsed"
    );

    tokio::time::sleep(QUOTA_REFILL).await;
    let again = utility_api::ping(&configuration)
        .await
        .expect("the retried ping answers");
    assert!(again.pong);
    println!("ok: openapi-generator rust: the retried ping answered");
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: sdk-check <origin> <served 3.0.3 document, JSON>";
    let origin = args.next().expect(usage);
    let document: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(args.next().expect(usage)).unwrap())
            .expect("the document is JSON");
    let base = document["servers"][0]["url"]
        .as_str()
        .expect("a server URL");
    assert_eq!(base, format!("{origin}/v1"));

    check_progenitor(&origin, base).await;
    tokio::time::sleep(QUOTA_REFILL).await;
    check_openapi_generator(&origin).await;
}
