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

/// The status, request id header and body of a request the generated operations cannot make.
async fn raw(http: &reqwest::Client, method: reqwest::Method, url: &str) -> (u16, String, Vec<u8>) {
    let response = http
        .request(method, url)
        .send()
        .await
        .expect("the server answers");
    let status = response.status().as_u16();
    let request_id = response.headers()["service-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    (status, request_id, response.bytes().await.unwrap().to_vec())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let origin = std::env::args()
        .nth(1)
        .expect("usage: sdk-check <server origin>");
    let base = format!("{origin}/v1");
    let http = reqwest::Client::new();
    let refused_url = format!("{base}/ping");
    let missing_url = format!("{base}/pings");

    // progenitor
    let client = progenitor_generated::Client::new(&base);
    let ping = client.ping().await.expect("ping answers").into_inner();
    assert!(ping.pong, "{ping:?}");
    assert_eq!(ping.object, progenitor_types::PingObject::Ping);
    println!("ok: progenitor: ping answered pong {}", ping.pong);
    for (method, url, code, status) in [
        (
            reqwest::Method::DELETE,
            &refused_url,
            "method_not_allowed",
            405,
        ),
        (reqwest::Method::GET, &missing_url, "resource_missing", 404),
    ] {
        let (answered, request_id, body) = raw(&http, method, url).await;
        assert_eq!(answered, status);
        let envelope: progenitor_types::ErrorEnvelope =
            serde_json::from_slice(&body).expect("the body is the error object");
        assert_eq!(envelope.error.code.as_str(), code);
        assert_eq!(envelope.error.request_id.as_str(), request_id);
        println!("ok: progenitor: {status} parsed: code {code}, request id {request_id}");
    }

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
    for (method, url, code, status) in [
        (
            reqwest::Method::DELETE,
            &refused_url,
            "method_not_allowed",
            405,
        ),
        (reqwest::Method::GET, &missing_url, "resource_missing", 404),
    ] {
        let (answered, request_id, body) = raw(&http, method, url).await;
        assert_eq!(answered, status);
        let envelope: generator_models::ErrorEnvelope =
            serde_json::from_slice(&body).expect("the body is the error object");
        assert_eq!(envelope.error.code, code);
        assert_eq!(envelope.error.request_id, request_id);
        println!(
            "ok: openapi-generator rust: {status} parsed: code {code}, request id {request_id}"
        );
    }
}
