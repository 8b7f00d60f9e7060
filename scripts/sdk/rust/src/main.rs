//! Calls a running partner-api through both generated Rust clients: `GET /v1/ping` parsed as a
//! ping object with `pong` true, a method ping does not answer read as the error object
//! (`method_not_allowed` with the request id of the `Service-Request-Id` header), and an
//! unknown path read the same way (`resource_missing`). Usage: sdk-check <server origin>.

mod progenitor_generated {
    include!(concat!(env!("OUT_DIR"), "/progenitor_client.rs"));
}

use partner_api_client::apis::{configuration::Configuration, utility_api};
use partner_api_client::models as generator_models;
use progenitor_generated::types as progenitor_types;

/// A method ping does not answer (405 `method_not_allowed`) and an unknown path (404
/// `resource_missing`), each read through `Envelope`, a generated client's error model, whose
/// code and request id `fields` gives: both must be the ones the server sent.
async fn check_errors<Envelope: serde::de::DeserializeOwned>(
    client: &str,
    base: &str,
    fields: impl Fn(&Envelope) -> (String, String),
) {
    let http = reqwest::Client::new();
    for (method, path, code, status) in [
        (reqwest::Method::DELETE, "/ping", "method_not_allowed", 405),
        (reqwest::Method::GET, "/pings", "resource_missing", 404),
    ] {
        let response = http
            .request(method, format!("{base}{path}"))
            .send()
            .await
            .expect("the server answers");
        assert_eq!(response.status().as_u16(), status);
        let sent_id = response.headers()["service-request-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let body = response.bytes().await.unwrap();
        let envelope: Envelope =
            serde_json::from_slice(&body).expect("the body is the error object");
        let (parsed_code, request_id) = fields(&envelope);
        assert_eq!(parsed_code, code);
        assert_eq!(request_id, sent_id);
        println!("ok: {client}: {status} parsed: code {code}, request id {request_id}");
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let origin = std::env::args()
        .nth(1)
        .expect("usage: sdk-check <server origin>");
    let base = format!("{origin}/v1");

    // progenitor
    let client = progenitor_generated::Client::new(&base);
    let ping = client.ping().await.expect("ping answers").into_inner();
    assert!(ping.pong, "{ping:?}");
    assert_eq!(ping.object, progenitor_types::PingObject::Ping);
    println!("ok: progenitor: ping answered pong {}", ping.pong);
    check_errors(
        "progenitor",
        &base,
        |envelope: &progenitor_types::ErrorEnvelope| {
            (
                envelope.error.code.to_string(),
                envelope.error.request_id.to_string(),
            )
        },
    )
    .await;

    // openapi-generator, `rust`
    let configuration = Configuration {
        base_path: base.clone(),
        ..Configuration::default()
    };
    let ping = utility_api::ping(&configuration)
        .await
        .expect("ping answers");
    assert!(ping.pong, "{ping:?}");
    assert_eq!(ping.object, generator_models::PingObject::Ping);
    println!(
        "ok: openapi-generator rust: ping answered pong {}",
        ping.pong
    );
    check_errors(
        "openapi-generator rust",
        &base,
        |envelope: &generator_models::ErrorEnvelope| {
            (
                envelope.error.code.clone(),
                envelope.error.request_id.clone(),
            )
        },
    )
    .await;
}
