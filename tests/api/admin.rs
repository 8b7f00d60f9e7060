//! The admin listener: probes and metrics on their own address, never on the API's, and the
//! API never on theirs; the metrics count exactly what clients were answered.

use partner_api::server::admin;
use partner_api::server::config::AdminBind;
use serde_json::Value;

use crate::helpers::{ExpectedError, TestApp, TestResponse, assert_error_at, spawn_app_with};
use crate::tls::TestPki;

/// A request to the admin listener, read whole (not checked against the API's contract: the
/// admin endpoints are not part of it).
async fn admin_get(app: &TestApp, method: &str, path: &str) -> TestResponse {
    admin_get_accepting(app, method, path, None).await
}

/// What Prometheus 2 sends as `Accept` when it scrapes.
const PROMETHEUS_ACCEPT: &str = "application/openmetrics-text;version=1.0.0,\
    application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

async fn admin_get_accepting(
    app: &TestApp,
    method: &str,
    path: &str,
    accept: Option<&str>,
) -> TestResponse {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = app
        .client
        .request(method, format!("{}{path}", app.admin_address));
    if let Some(accept) = accept {
        request = request.header("accept", accept);
    }
    let response = request.send().await.unwrap();
    TestResponse {
        status: response.status().as_u16(),
        headers: response.headers().clone(),
        body: response.bytes().await.unwrap(),
    }
}

/// The exposition's sample lines starting with `prefix`, as Prometheus scrapes them.
async fn samples(app: &TestApp, prefix: &str) -> Vec<String> {
    let response = admin_get_accepting(app, "GET", "/metrics", Some(PROMETHEUS_ACCEPT)).await;
    assert_eq!(response.status, 200);
    response
        .text()
        .lines()
        .filter(|line| line.starts_with(prefix))
        .map(str::to_owned)
        .collect()
}

async fn app_with_limit(burst: u32) -> TestApp {
    spawn_app_with(|config| {
        config.rate_limit_per_second = 1;
        config.rate_limit_burst = burst;
    })
    .await
}

#[actix_web::test]
async fn probes_answer_plain_text() {
    let app = crate::helpers::spawn_app().await;
    for (path, body) in [("/livez", "ok\n"), ("/readyz", "ready\n")] {
        let response = admin_get(&app, "GET", path).await;
        assert_eq!(response.status, 200, "{path}");
        assert_eq!(response.header("content-type"), "text/plain; charset=utf-8");
        assert_eq!(response.header("cache-control"), "no-store");
        assert_eq!(response.text(), body);
        let head = admin_get(&app, "HEAD", path).await;
        assert_eq!((head.status, head.body.len()), (200, 0), "HEAD {path}");
    }
}

#[actix_web::test]
async fn metrics_count_every_answer_by_route_method_and_status() {
    let app = app_with_limit(3).await;
    for _ in 0..3 {
        assert_eq!(app.get("/v1/ping").await.status, 200);
    }
    assert_eq!(app.get("/v1/ping").await.status, 429);
    assert_eq!(app.get("/v1/ping").await.status, 429);
    assert_eq!(app.get("/nowhere/1").await.status, 404);
    assert_eq!(app.get("/nowhere/2").await.status, 404);
    assert_eq!(
        app.send_json("POST", "/docs/errors", "{}").await.status,
        405
    );
    assert_eq!(app.get("/docs/errors").await.status, 200);

    let response = admin_get_accepting(&app, "GET", "/metrics", Some(PROMETHEUS_ACCEPT)).await;
    assert_eq!(response.status, 200);
    assert_eq!(
        response.header("content-type"),
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    );
    assert!(response.text().ends_with("# EOF\n"));
    assert_eq!(
        samples(&app, "partner_api_http_requests_total").await,
        [
            r#"partner_api_http_requests_total{route="/docs/errors",method="GET",status="200"} 1"#,
            r#"partner_api_http_requests_total{route="/docs/errors",method="POST",status="405"} 1"#,
            r#"partner_api_http_requests_total{route="/v1/ping",method="GET",status="200"} 3"#,
            r#"partner_api_http_requests_total{route="/v1/ping",method="GET",status="429"} 2"#,
            r#"partner_api_http_requests_total{route="unmatched",method="GET",status="404"} 2"#,
        ]
    );
    assert_eq!(
        samples(&app, "partner_api_http_request_duration_seconds_count").await,
        [
            r#"partner_api_http_request_duration_seconds_count{route="/docs/errors",method="GET",status_class="2xx"} 1"#,
            r#"partner_api_http_request_duration_seconds_count{route="/docs/errors",method="POST",status_class="4xx"} 1"#,
            r#"partner_api_http_request_duration_seconds_count{route="/v1/ping",method="GET",status_class="2xx"} 3"#,
            r#"partner_api_http_request_duration_seconds_count{route="/v1/ping",method="GET",status_class="4xx"} 2"#,
            r#"partner_api_http_request_duration_seconds_count{route="unmatched",method="GET",status_class="4xx"} 2"#,
        ]
    );
    // The service's own time, for the methods a route serves only: no 404, no 405, and no
    // refusal (429), answered before any work.
    assert_eq!(
        samples(
            &app,
            "partner_api_http_response_head_duration_seconds_count"
        )
        .await,
        [
            r#"partner_api_http_response_head_duration_seconds_count{route="/docs/errors",method="GET"} 1"#,
            r#"partner_api_http_response_head_duration_seconds_count{route="/v1/ping",method="GET"} 3"#,
        ]
    );
    assert_eq!(
        samples(&app, "partner_api_rate_limit_refusals_total").await,
        [
            r#"partner_api_rate_limit_refusals_total{policy="api"} 2"#,
            r#"partner_api_rate_limit_refusals_total{policy="docs"} 0"#,
        ]
    );
    assert_eq!(
        samples(&app, "partner_api_rate_limit_tracked_clients").await,
        [
            r#"partner_api_rate_limit_tracked_clients{policy="api"} 1"#,
            r#"partner_api_rate_limit_tracked_clients{policy="docs"} 1"#,
        ]
    );
    assert_eq!(
        samples(&app, "partner_api_http_requests_in_flight").await,
        ["partner_api_http_requests_in_flight 0"]
    );
    let build = samples(&app, "partner_api_build_info").await;
    assert_eq!(build.len(), 1);
    assert!(
        build[0].starts_with(&format!(
            "partner_api_build_info{{version=\"{}\",commit=\"",
            env!("CARGO_PKG_VERSION")
        )),
        "{build:?}"
    );
    for family in [
        "process_cpu_seconds_total ",
        "process_resident_memory_bytes ",
        "process_open_fds ",
        "process_max_fds ",
        "process_start_time_seconds ",
    ] {
        assert_eq!(samples(&app, family).await.len(), 1, "{family}");
    }
    // No certificate, no certificate metrics.
    assert!(samples(&app, "partner_api_tls").await.is_empty());
}

/// Prometheus asks for OpenMetrics and gets it; a scraper that asks for nothing in particular
/// (curl, Telegraf, Metricbeat) gets the classic text format, where `info` does not exist.
#[actix_web::test]
async fn the_exposition_format_follows_accept() {
    let app = crate::helpers::spawn_app().await;
    assert_eq!(app.get("/v1/ping").await.status, 200);
    let openmetrics = admin_get_accepting(&app, "GET", "/metrics", Some(PROMETHEUS_ACCEPT)).await;
    let text = openmetrics.text();
    assert!(
        text.contains("\n# TYPE partner_api_http_requests counter\n"),
        "{text}"
    );
    assert!(text.contains("\n# TYPE partner_api_build info\n"), "{text}");
    assert!(text.ends_with("# EOF\n"));
    for accept in [
        None,
        Some("*/*"),
        Some("text/plain"),
        Some("application/json"),
    ] {
        let classic = admin_get_accepting(&app, "GET", "/metrics", accept).await;
        assert_eq!(classic.status, 200, "{accept:?}");
        assert_eq!(
            classic.header("content-type"),
            "text/plain; version=0.0.4; charset=utf-8",
            "{accept:?}"
        );
        assert_eq!(classic.header("vary"), "Accept");
        assert_eq!(classic.header("cache-control"), "no-store");
        let text = classic.text();
        for expected in [
            "# TYPE partner_api_http_requests_total counter",
            r#"partner_api_http_requests_total{route="/v1/ping",method="GET",status="200"} 1"#,
            "# TYPE partner_api_http_request_duration_seconds histogram",
            "# TYPE partner_api_build_info gauge",
            "# TYPE process_cpu_seconds_total counter",
        ] {
            assert!(
                text.lines().any(|line| line == expected),
                "{expected}\n{text}"
            );
        }
        assert!(
            !text.contains("# EOF") && !text.contains("# UNIT") && !text.contains(" info\n"),
            "{text}"
        );
    }
}

#[actix_web::test]
async fn a_flood_of_random_paths_makes_one_series() {
    let app = crate::helpers::spawn_app().await;
    for n in 0..300 {
        let path = format!("/random-{n}/{}", n * 7919);
        assert_eq!(app.get(&path).await.status, 404);
    }
    assert_eq!(
        samples(&app, "partner_api_http_requests_total").await,
        [r#"partner_api_http_requests_total{route="unmatched",method="GET",status="404"} 300"#]
    );
}

#[actix_web::test]
async fn the_certificate_expiry_and_load_time_are_metrics() {
    let pki = TestPki::new("metrics");
    let (cert, key) = (pki.cert_path.clone(), pki.key_path.clone());
    let before = crate::tls::unix_now();
    let app = spawn_app_with(move |config| {
        config.tls_cert = Some(cert);
        config.tls_key = Some(key);
    })
    .await;
    // rcgen's default validity ends on 4096-01-01T00:00:00Z.
    assert_eq!(
        samples(&app, "partner_api_tls_certificate_expiry_timestamp_seconds").await,
        ["partner_api_tls_certificate_expiry_timestamp_seconds 67090118400"]
    );
    let loaded = samples(&app, "partner_api_tls_certificate_loaded_timestamp_seconds").await;
    let loaded: u64 = loaded[0].rsplit(' ').next().unwrap().parse().unwrap();
    assert!(loaded >= before && loaded <= before + 60, "{loaded}");
    assert_eq!(
        samples(&app, "partner_api_tls_certificate_reload").await,
        [
            "partner_api_tls_certificate_reload_refused_timestamp_seconds 0",
            r#"partner_api_tls_certificate_reloads_total{outcome="loaded"} 0"#,
            r#"partner_api_tls_certificate_reloads_total{outcome="refused"} 0"#,
        ]
    );
    // A bad pair is refused, and that shows.
    std::fs::write(&pki.key_path, "not a key").unwrap();
    app.certificates.as_ref().unwrap().reload_and_log("test");
    assert_eq!(
        samples(&app, "partner_api_tls_certificate_reloads_total").await,
        [
            r#"partner_api_tls_certificate_reloads_total{outcome="loaded"} 0"#,
            r#"partner_api_tls_certificate_reloads_total{outcome="refused"} 1"#,
        ]
    );
    let refused = samples(&app, "partner_api_tls_certificate_reload_refused").await;
    let refused: u64 = refused[0].rsplit(' ').next().unwrap().parse().unwrap();
    assert!(refused >= loaded, "{refused}");
    // The files on disk are refused (a restart would fail): a gauge the alert reads, while the
    // replica, serving its old pair, stays ready.
    assert_eq!(
        samples(&app, "partner_api_tls_certificate_files_refused").await,
        ["partner_api_tls_certificate_files_refused 1"]
    );
    assert_eq!(admin_get(&app, "GET", "/readyz").await.status, 200);
    pki.issue();
    app.certificates.as_ref().unwrap().reload_and_log("test");
    assert_eq!(
        samples(&app, "partner_api_tls_certificate_files_refused").await,
        ["partner_api_tls_certificate_files_refused 0"]
    );
}

/// A certificate that expires while it is served makes the replica unready: every handshake
/// would fail, so a balancer that checks `/readyz` must take it out. `/livez` stays 200 (a
/// restart would not help).
#[actix_web::test]
async fn readiness_fails_once_the_served_certificate_expires() {
    let pki = TestPki::new("expiring");
    let now = crate::tls::unix_now();
    pki.issue_valid(now - 60, now + 2);
    let (cert, key) = (pki.cert_path.clone(), pki.key_path.clone());
    let app = spawn_app_with(move |config| {
        config.tls_cert = Some(cert);
        config.tls_key = Some(key);
        config.tls_watch_secs = 0;
    })
    .await;
    assert_eq!(admin_get(&app, "GET", "/readyz").await.status, 200);
    assert_eq!(readiness_samples(&app).await, READY);
    actix_web::rt::time::sleep(std::time::Duration::from_secs(4)).await;
    let ready = admin_get(&app, "GET", "/readyz").await;
    assert_eq!(ready.status, 503);
    let at = jiff::Timestamp::from_second(i64::try_from(now + 2).unwrap()).unwrap();
    assert_eq!(ready.text(), format!("certificate expired at {at}\n"));
    assert_eq!(ready.header("cache-control"), "no-store");
    assert_eq!(admin_get(&app, "GET", "/livez").await.status, 200);
    // The replica leaves rotation, and its metrics say so and why.
    assert_eq!(
        readiness_samples(&app).await,
        [
            "partner_api_ready 0",
            r#"partner_api_not_ready{reason="worker_stalled"} 0"#,
            r#"partner_api_not_ready{reason="certificate_expired"} 1"#,
            r#"partner_api_not_ready{reason="shutting_down"} 0"#,
        ]
    );
    assert_eq!(
        samples(&app, "partner_api_tls_certificate_not_before").await,
        [format!(
            "partner_api_tls_certificate_not_before_timestamp_seconds {}",
            now - 60
        )]
    );
}

/// The readiness series, in the order they are written.
async fn readiness_samples(app: &TestApp) -> Vec<String> {
    let mut lines = samples(app, "partner_api_ready").await;
    lines.extend(samples(app, "partner_api_not_ready{").await);
    lines
}

/// The readiness series of a ready replica.
const READY: [&str; 4] = [
    "partner_api_ready 1",
    r#"partner_api_not_ready{reason="worker_stalled"} 0"#,
    r#"partner_api_not_ready{reason="certificate_expired"} 0"#,
    r#"partner_api_not_ready{reason="shutting_down"} 0"#,
];

#[actix_web::test]
async fn the_two_listeners_never_serve_each_other() {
    let app = crate::helpers::spawn_app().await;
    // The admin endpoints are unknown paths on the API's listener...
    for path in admin::PATHS {
        let response = app.get(path).await;
        let message = format!("Unrecognized request URL (GET: {path}).");
        app.assert_error(
            &response,
            ExpectedError::invalid_request(404, "resource_missing", &message, None),
        );
    }
    // ...and the API is unknown on the admin listener, which answers in the contract's shape.
    for path in ["/v1/ping", "/docs/", "/openapi/v1.json"] {
        let response = admin_get(&app, "GET", path).await;
        let message = format!("Unrecognized request URL (GET: {path}).");
        assert_error_at(
            &response,
            ExpectedError::invalid_request(404, "resource_missing", &message, None),
            &app.address,
        );
    }
    let response = admin_get(&app, "POST", "/metrics").await;
    assert_error_at(
        &response,
        ExpectedError::invalid_request(
            405,
            "method_not_allowed",
            "The method POST is not allowed on this endpoint. Allowed: GET, HEAD.",
            None,
        ),
        &app.address,
    );
    assert_eq!(response.header("allow"), "GET, HEAD");
    // Nor are they in the contract.
    let document: Value = serde_json::from_str(&partner_api::openapi::to_json(
        &partner_api::openapi::document(),
    ))
    .unwrap();
    let paths = document["paths"].as_object().unwrap();
    for path in admin::PATHS {
        assert!(
            !paths.contains_key(path),
            "{path} is in the OpenAPI document"
        );
    }
}

#[actix_web::test]
async fn with_the_admin_listener_off_nothing_listens_for_it() {
    let app = spawn_app_with(|config| config.admin_bind = AdminBind(None)).await;
    assert_eq!(app.admin_address, "");
    assert_eq!(app.get("/v1/ping").await.status, 200);
}

/// The watchdog: while the one API worker is blocked longer than the threshold, `/livez` and
/// `/readyz` answer 503 naming it, and one stall is counted; once it is free, both answer 200.
#[actix_web::test]
async fn livez_fails_while_a_worker_makes_no_progress() {
    let app = spawn_app_with(|config| config.watchdog_secs = 1).await;
    assert_eq!(admin_get(&app, "GET", "/livez").await.status, 200);
    let blocked = {
        let request = app.request("GET", "/test/block/8000").send();
        actix_web::rt::spawn(request)
    };
    // Bounded: at most 4.5 s of polling for the 503 (the threshold is 1 s; the whole test
    // suite running beside it on two cores can delay the monitor's look by a second or more).
    let mut stalled = None;
    for _ in 0..90 {
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
        let response = admin_get(&app, "GET", "/livez").await;
        if response.status == 503 {
            stalled = Some(response);
            break;
        }
    }
    let stalled = stalled.expect("/livez turned 503 while the worker was blocked");
    assert_eq!(stalled.header("content-type"), "text/plain; charset=utf-8");
    assert_eq!(stalled.header("cache-control"), "no-store");
    let text = stalled.text();
    assert!(
        text.starts_with("stalled: worker 1 (") && text.contains(" has made no progress for "),
        "{text}"
    );
    // The same stall, though a tenth of a second later it may have lasted longer.
    let ready = admin_get(&app, "GET", "/readyz").await;
    let ready_text = ready.text();
    assert_eq!(ready.status, 503);
    let stall = |text: &str| {
        text.split(" has made no progress")
            .next()
            .unwrap()
            .to_owned()
    };
    assert_eq!(stall(&ready_text), stall(&text), "{ready_text}");
    assert_eq!(
        readiness_samples(&app).await,
        [
            "partner_api_ready 0",
            r#"partner_api_not_ready{reason="worker_stalled"} 1"#,
            r#"partner_api_not_ready{reason="certificate_expired"} 0"#,
            r#"partner_api_not_ready{reason="shutting_down"} 0"#,
        ]
    );
    let answered = blocked.await.unwrap().unwrap();
    assert_eq!(answered.status(), 200);
    // Bounded: the worker beats within a quarter of a second of being free.
    let mut live = false;
    for _ in 0..40 {
        if admin_get(&app, "GET", "/livez").await.status == 200 {
            live = true;
            break;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(live, "/livez did not recover");
    assert_eq!(admin_get(&app, "GET", "/readyz").await.status, 200);
    assert_eq!(readiness_samples(&app).await, READY);
    assert_eq!(
        samples(&app, "partner_api_worker_stalls_total").await,
        ["partner_api_worker_stalls_total 1"]
    );
    assert_eq!(
        samples(&app, "partner_api_workers_stalled").await,
        ["partner_api_workers_stalled 0"]
    );
}
