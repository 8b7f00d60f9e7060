//! Rate limiting as a client sees it: bursts, 429 with an honest `Retry-After`, quota headers,
//! one bucket per client (IPv6 per /64), forwarding headers trusted only from trusted proxies.

use std::net::IpAddr;
use std::time::Duration;

use crate::helpers::{ExpectedError, TestApp, log_lines_containing, spawn_app_with};

const RATE_LIMITED: &str =
    "Too many requests. Retry after the time given in the Retry-After header.";

/// An app whose API allows `burst` requests at once, refilled at `per_second`.
async fn limited_app(per_second: u32, burst: u32, trusted_proxies: &[&str]) -> TestApp {
    let trusted: Vec<_> = trusted_proxies
        .iter()
        .map(|cidr| cidr.parse().unwrap())
        .collect();
    spawn_app_with(move |config| {
        config.rate_limit_per_second = per_second;
        config.rate_limit_burst = burst;
        config.trusted_proxies = trusted;
    })
    .await
}

async fn ping_from(app: &TestApp, forwarded_for: Option<&str>) -> crate::helpers::TestResponse {
    let mut request = app.request("GET", "/v1/ping");
    if let Some(client) = forwarded_for {
        request = request.header("x-forwarded-for", client);
    }
    app.send(request).await
}

fn assert_rate_limited(app: &TestApp, response: &crate::helpers::TestResponse) {
    app.assert_error(
        response,
        ExpectedError {
            status: 429,
            error_type: "rate_limit_error",
            code: "rate_limited",
            message: RATE_LIMITED,
            param: None,
        },
    );
    assert_eq!(response.header("retry-after"), "1");
}

#[actix_web::test]
async fn a_burst_is_served_then_refused_with_quota_headers() {
    let app = limited_app(1, 3, &[]).await;
    for remaining in [2, 1, 0] {
        let response = ping_from(&app, None).await;
        assert_eq!(response.status, 200);
        assert_eq!(response.header("ratelimit-policy"), r#""api";q=3;w=3"#);
        let quota = response.header("ratelimit");
        assert!(
            quota.starts_with(&format!(r#""api";r={remaining};t="#)),
            "{quota}"
        );
    }
    let refused = ping_from(&app, None).await;
    assert_rate_limited(&app, &refused);
    assert_eq!(refused.header("ratelimit-policy"), r#""api";q=3;w=3"#);
    assert_eq!(refused.header("ratelimit"), r#""api";r=0;t=3"#);
}

#[actix_web::test]
async fn a_client_that_waits_retry_after_is_served_again() {
    let app = limited_app(10, 1, &[]).await;
    assert_eq!(ping_from(&app, None).await.status, 200);
    let refused = ping_from(&app, None).await;
    assert_rate_limited(&app, &refused);
    let wait: u64 = refused.header("retry-after").parse().unwrap();
    actix_web::rt::time::sleep(Duration::from_secs(wait)).await;
    assert_eq!(ping_from(&app, None).await.status, 200);
}

#[actix_web::test]
async fn two_clients_have_independent_buckets() {
    let app = limited_app(1, 2, &[]).await;
    // A second client on another loopback address.
    let other: IpAddr = "127.0.0.2".parse().unwrap();
    let other_client = reqwest::Client::builder()
        .no_proxy()
        .local_address(other)
        .build()
        .unwrap();
    for _ in 0..2 {
        assert_eq!(ping_from(&app, None).await.status, 200);
    }
    assert_eq!(ping_from(&app, None).await.status, 429);
    let response = other_client.get(app.url("/v1/ping")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
}

#[actix_web::test]
async fn spoofed_forwarding_headers_are_ignored_from_untrusted_peers() {
    let app = limited_app(1, 2, &[]).await;
    let mut statuses = Vec::new();
    for spoof in [
        "198.51.100.1",
        "198.51.100.2",
        "198.51.100.3",
        "198.51.100.4",
    ] {
        let response = ping_from(&app, Some(spoof)).await;
        statuses.push(response.status);
        let id = response.header("service-request-id");
        let logged = log_lines_containing(&id);
        assert!(
            logged
                .iter()
                .any(|line| line.contains(&format!("{id} 127.0.0.1 "))),
            "{logged:?}"
        );
    }
    assert_eq!(statuses, [200, 200, 429, 429]);
}

#[actix_web::test]
async fn a_trusted_proxy_names_the_client() {
    let app = limited_app(1, 2, &["127.0.0.1"]).await;
    for _ in 0..2 {
        assert_eq!(ping_from(&app, Some("203.0.113.5")).await.status, 200);
    }
    assert_eq!(ping_from(&app, Some("203.0.113.5")).await.status, 429);
    // Another client behind the same proxy has its own bucket, and the log names it.
    let other = ping_from(&app, Some("1.1.1.1, 203.0.113.6")).await;
    assert_eq!(other.status, 200);
    let id = other.header("service-request-id");
    let logged = log_lines_containing(&id);
    assert!(
        logged
            .iter()
            .any(|line| line.contains(&format!("{id} 203.0.113.6 "))),
        "{logged:?}"
    );
}

#[actix_web::test]
async fn ipv6_clients_share_a_bucket_per_64() {
    let app = limited_app(1, 2, &["127.0.0.1"]).await;
    assert_eq!(ping_from(&app, Some("2001:db8:0:7::1")).await.status, 200);
    assert_eq!(ping_from(&app, Some("2001:db8:0:7::2")).await.status, 200);
    assert_eq!(
        ping_from(&app, Some("2001:db8:0:7:ffff::3")).await.status,
        429
    );
    assert_eq!(ping_from(&app, Some("2001:db8:0:8::1")).await.status, 200);
}

#[actix_web::test]
async fn a_client_that_cannot_be_determined_is_limited_as_unknown() {
    let app = limited_app(1, 1, &["127.0.0.1"]).await;
    let first = ping_from(&app, Some("not-an-address")).await;
    assert_eq!(first.status, 200);
    let id = first.header("service-request-id");
    assert!(
        log_lines_containing(&id)
            .iter()
            .any(|line| line.contains(&format!("{id} - "))),
        "the access log marks an unknown client with -"
    );
    // All undeterminable clients share one bucket.
    assert_eq!(ping_from(&app, Some("unknown")).await.status, 429);
}

/// The reference and the documents have a quota of their own: with the API's spent, the first
/// document still has its whole burst. Each quota is spent until refused (within a bound), so
/// that a slow machine, whose refills come between the requests, waits longer but passes.
#[actix_web::test]
async fn the_reference_has_its_own_limit() {
    let app = spawn_app_with(|config| {
        config.rate_limit_per_second = 1;
        config.rate_limit_burst = 1;
        config.docs_rate_limit_per_second = 1;
        config.docs_rate_limit_burst = 3;
    })
    .await;
    let (answered, _) = spend_until_refused(|| ping_from(&app, None)).await;
    assert!(answered >= 1, "the API's burst");
    let document = app.get("/openapi/v1.json").await;
    assert_eq!(document.status, 200);
    assert_eq!(document.header("ratelimit-policy"), r#""docs";q=3;w=3"#);
    assert!(
        document.header("ratelimit").starts_with(r#""docs";r=2;"#),
        "the documents' whole burst: {}",
        document.header("ratelimit")
    );
    let (answered, refused) = spend_until_refused(|| app.get("/openapi/v1.json")).await;
    assert!(answered >= 2, "the rest of the documents' burst");
    assert_rate_limited(&app, &refused);
}

/// Sends `request` until it is refused with 429 (at most 100 times): how many were answered
/// before, and the refusal. Fails if none is refused.
async fn spend_until_refused<F>(request: impl Fn() -> F) -> (usize, crate::helpers::TestResponse)
where
    F: std::future::Future<Output = crate::helpers::TestResponse>,
{
    for answered in 0..100 {
        let response = request().await;
        if response.status == 429 {
            return (answered, response);
        }
        assert_eq!(response.status, 200);
    }
    panic!("100 requests and none refused");
}
