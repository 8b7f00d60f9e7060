//! Partner keys at the edge, through the test build's key-protected `things`: each way a key
//! fails has its own 401 code and the challenge RFC 6750 asks for, a key without the scope gets
//! 403, an operation that needs no key ignores one, another partner's things are as missing
//! as things that do not exist, the rate limit counts per valid key and per address otherwise,
//! a key revoked in the file stops working without a restart, and no key reaches a log line.

use serde_json::{Value, json};

use crate::helpers::{ExpectedError, TestApp, log_lines_containing, spawn_app, spawn_app_with};

/// Sends `GET /v1/things/th_0001` with `Authorization: <authorization>` (none for `None`).
async fn retrieve_with(app: &TestApp, authorization: Option<&str>) -> crate::helpers::TestResponse {
    let mut request = app.request("GET", "/v1/things/th_0001");
    if let Some(value) = authorization {
        request = request.header("authorization", value);
    }
    app.send(request).await
}

#[actix_web::test]
async fn each_way_a_key_fails_has_its_code_and_the_bearer_challenge() {
    let app = spawn_app().await;
    let writer = app.keys.writer.clone();
    // One character of a real key changed: the checksum tells it from an unknown key.
    let mut mistyped = writer.clone().into_bytes();
    let last = mistyped.len() - 10;
    mistyped[last] = if mistyped[last] == b'a' { b'b' } else { b'a' };
    let mistyped = String::from_utf8(mistyped).unwrap();
    let unknown = partner_api::auth::key::IssuedKey::generate()
        .expose()
        .to_owned();
    let invalid = r#"Bearer realm="partner-api", error="invalid_token""#;
    for (authorization, code, message, challenge) in [
        (
            None,
            "key_missing",
            "This operation needs a key: send it as Authorization: Bearer <key>.",
            r#"Bearer realm="partner-api""#,
        ),
        (
            Some(format!("Basic {writer}")),
            "key_malformed",
            "The Authorization header does not hold a partner key.",
            invalid,
        ),
        (
            Some(format!("Bearer {}", &writer[..writer.len() - 1])),
            "key_malformed",
            "The Authorization header does not hold a partner key.",
            invalid,
        ),
        (
            Some(format!("Bearer {mistyped}")),
            "key_malformed",
            "The Authorization header does not hold a partner key.",
            invalid,
        ),
        (
            Some(format!("Bearer {unknown}")),
            "key_unknown",
            "No key issued has this value.",
            invalid,
        ),
        (
            Some(format!("Bearer {}", app.keys.expired)),
            "key_expired",
            "The key has expired.",
            invalid,
        ),
        (
            Some(format!("Bearer {}", app.keys.revoked)),
            "key_revoked",
            "The key was revoked.",
            invalid,
        ),
    ] {
        let response = retrieve_with(&app, authorization.as_deref()).await;
        app.assert_error(
            &response,
            ExpectedError::invalid_request(401, code, message, None),
        );
        assert_eq!(response.header("www-authenticate"), challenge, "{code}");
        // No message, header or log line holds what the client sent as its key.
        let sent = authorization.unwrap_or_default();
        if let Some(key) = sent.split(' ').nth(1) {
            assert!(!response.text().contains(key));
            assert!(log_lines_containing(key).is_empty(), "{key} was logged");
        }
    }
    // The scheme in any case, as RFC 6750 allows.
    let response = retrieve_with(&app, Some(&format!("bEaReR {writer}"))).await;
    assert_eq!(response.status, 200, "{}", response.text());
    assert!(log_lines_containing(&writer).is_empty());
}

#[actix_web::test]
async fn a_key_without_the_scope_is_forbidden_and_ping_needs_none() {
    let app = spawn_app().await;
    let reader = format!("Bearer {}", app.keys.reader);
    assert_eq!(retrieve_with(&app, Some(&reader)).await.status, 200);
    let response = app
        .send(
            app.request("POST", "/v1/things/th_0001/archive")
                .header("authorization", &reader),
        )
        .await;
    app.assert_error(
        &response,
        ExpectedError::invalid_request(
            403,
            "key_scope_missing",
            "The key lacks the scope this operation needs: things:write.",
            None,
        ),
    );
    assert_eq!(
        response.header("www-authenticate"),
        r#"Bearer realm="partner-api", error="insufficient_scope""#
    );
    // A key issued now, with the write scope only: in force at once, and it cannot read.
    let writer_only = app.key_for("pt_test", &["things:write"]);
    let response = retrieve_with(&app, Some(&format!("Bearer {writer_only}"))).await;
    assert_eq!(
        response.json()["error"]["message"],
        "The key lacks the scope this operation needs: things:read."
    );
    // Refused before the handler ran: the thing is not archived.
    let thing = app.get_keyed("/v1/things/th_0001").await.json();
    assert_eq!(thing["status"], "active");
    // Ping needs no key, and a key that cannot be used changes nothing there.
    for authorization in ["Bearer nonsense", "Basic abc", &reader] {
        let response = app
            .send(
                app.request("GET", "/v1/ping")
                    .header("authorization", authorization),
            )
            .await;
        assert_eq!(response.status, 200, "{authorization}");
        assert!(response.headers.get("www-authenticate").is_none());
    }
}

/// API1: a partner reads and changes its own things only; another's are as missing as things
/// that do not exist, so their ids are not even confirmed.
#[actix_web::test]
async fn another_partners_things_are_missing() {
    let app = spawn_app().await;
    let other = format!("Bearer {}", app.keys.other);
    let list = app
        .send(
            app.request("GET", "/v1/things")
                .header("authorization", &other),
        )
        .await;
    assert_eq!(
        list.json(),
        serde_json::json!({"object": "list", "data": [], "has_more": false, "next_cursor": null})
    );
    for (method, path) in [
        ("GET", "/v1/things/th_0001"),
        ("PATCH", "/v1/things/th_0001"),
        ("POST", "/v1/things/th_0001/archive"),
    ] {
        let response = app
            .send(
                app.request(method, path)
                    .header("authorization", &other)
                    .header("content-type", "application/json")
                    .body("{}"),
            )
            .await;
        app.assert_error(
            &response,
            ExpectedError::invalid_request(
                404,
                "resource_missing",
                &format!("No such thing: 'th_0001' ({method} {path})."),
                None,
            ),
        );
    }
}

/// A test key reaches only test data: none of its partner's live things, and what it creates
/// is seen by its partner's test keys only; its `Idempotency-Key`s are its own; its audit
/// records say `livemode: false`.
#[actix_web::test]
async fn a_test_key_reaches_only_test_data() {
    let app = spawn_app().await;
    let test_key = app.test_key_for("pt_test", &["things:read", "things:write"]);
    assert!(test_key.starts_with("pak_test_"), "{test_key}");
    let with = |key: &str, method: &str, path: &str| {
        app.request(method, path)
            .header("authorization", format!("Bearer {key}"))
    };
    let list = app.send(with(&test_key, "GET", "/v1/things")).await;
    assert_eq!(
        list.json(),
        serde_json::json!({"object": "list", "data": [], "has_more": false, "next_cursor": null}),
        "the partner's live things are not the test key's"
    );
    let live = app.send(with(&test_key, "GET", "/v1/things/th_0001")).await;
    assert_eq!(live.status, 404);
    assert_eq!(live.json()["error"]["code"], "resource_missing");
    let create = |key: &str| {
        with(key, "POST", "/v1/things")
            .header("content-type", "application/json")
            .header("idempotency-key", "same-key")
            .body(r#"{"label": "Trial"}"#)
    };
    let created = app.send(create(&test_key)).await;
    assert_eq!(created.status, 201, "{}", created.text());
    let id = created.json()["id"].as_str().unwrap().to_owned();
    let path = format!("/v1/things/{id}");
    assert_eq!(app.send(with(&test_key, "GET", &path)).await.status, 200);
    let other_test_key = app.test_key_for("pt_test", &["things:read"]);
    assert_eq!(
        app.send(with(&other_test_key, "GET", &path)).await.status,
        200
    );
    let seen_live = app.send(app.keyed("GET", &path)).await;
    assert_eq!(seen_live.status, 404, "a live key never sees a test row");
    // Neither changes the other mode's things.
    for (key, path) in [
        (test_key.as_str(), "/v1/things/th_0001"),
        (app.keys.writer.as_str(), path.as_str()),
    ] {
        for (method, action) in [("PATCH", ""), ("POST", "/archive")] {
            let response = app
                .send(
                    with(key, method, &format!("{path}{action}"))
                        .header("content-type", "application/json")
                        .body("{}"),
                )
                .await;
            assert_eq!(response.status, 404, "{method} {path}{action}");
        }
    }
    // The same Idempotency-Key from a live key is another key: a create of its own.
    let live_created = app.send(create(&app.keys.writer)).await;
    assert_eq!(live_created.status, 201);
    assert_ne!(live_created.json()["id"], created.json()["id"]);
    let records = app.audit_records(11).await;
    let modes: Vec<(String, Value)> = records
        .iter()
        .map(|record| {
            (
                record["operation"].as_str().unwrap().to_owned(),
                record["livemode"].clone(),
            )
        })
        .collect();
    assert_eq!(
        modes,
        [
            ("list_things".to_owned(), json!(false)),
            ("retrieve_thing".to_owned(), json!(false)),
            ("create_thing".to_owned(), json!(false)),
            ("retrieve_thing".to_owned(), json!(false)),
            ("retrieve_thing".to_owned(), json!(false)),
            ("retrieve_thing".to_owned(), json!(true)),
            ("update_thing".to_owned(), json!(false)),
            ("archive_thing".to_owned(), json!(false)),
            ("update_thing".to_owned(), json!(true)),
            ("archive_thing".to_owned(), json!(true)),
            ("create_thing".to_owned(), json!(true)),
        ]
    );
}

/// The quota is per key in force, wherever its requests come from: two keys from one address
/// have one quota each, and a key that cannot be used counts against its address, so made-up
/// keys buy nothing. Each quota is spent until refused (within a bound), and what follows is
/// read from the `RateLimit` field, so that a slow machine, whose refills come between the
/// requests, waits longer but passes.
#[actix_web::test]
async fn the_rate_limit_counts_per_valid_key_and_per_address_otherwise() {
    let app = spawn_app_with(|config| {
        config.rate_limit_per_second = 1;
        config.rate_limit_burst = 3;
    })
    .await;
    let writer = format!("Bearer {}", app.keys.writer);
    let reader = format!("Bearer {}", app.keys.reader);
    let answered = spend_until_refused(|| retrieve_with(&app, Some(&writer))).await;
    assert!(answered >= 3, "the writer's burst: {answered}");
    // Right after the writer's refusal, the reader's quota is whole: its own.
    let first = retrieve_with(&app, Some(&reader)).await;
    assert_eq!(first.status, 200);
    assert!(first.header("ratelimit").starts_with(r#""api";r=2;"#));
    let answered = spend_until_refused(|| retrieve_with(&app, Some(&reader))).await;
    assert!(answered >= 2, "the rest of the reader's burst: {answered}");
    // Made-up keys, each new: refused as unknown until the address's quota is spent.
    let mut unknown_refused = 0;
    loop {
        let unknown = partner_api::auth::key::IssuedKey::generate()
            .expose()
            .to_owned();
        let status = retrieve_with(&app, Some(&format!("Bearer {unknown}")))
            .await
            .status;
        if status == 429 {
            break;
        }
        assert_eq!(status, 401);
        unknown_refused += 1;
        assert!(
            unknown_refused < 100,
            "100 made-up keys and none rate limited"
        );
    }
    assert!(
        unknown_refused >= 3,
        "the address's burst: {unknown_refused}"
    );
    // The address's quota is the one the made-up keys spent: refused, or a token refilled
    // since and spent now (`r=0`); a quota of its own would have two left. (The writer's, spent
    // before the reader's and the made-up keys' requests, may have refilled by now.)
    assert_spent(&app.get("/v1/ping").await, "the address's quota is spent");
    let other = app
        .send(app.request("GET", "/v1/ping").bearer_auth(&app.keys.other))
        .await;
    assert_eq!(other.status, 200, "another key has its own");
    assert_eq!(other.header("ratelimit"), r#""api";r=2;t=1"#);
}

/// Sends `request` until it is refused with 429 (at most 100 times): how many were answered
/// before. Fails if none is refused.
async fn spend_until_refused<F>(request: impl Fn() -> F) -> usize
where
    F: std::future::Future<Output = crate::helpers::TestResponse>,
{
    for answered in 0..100 {
        let response = request().await;
        if response.status == 429 {
            return answered;
        }
        assert_eq!(response.status, 200);
    }
    panic!("100 requests and none refused");
}

/// A quota spent: 429, or 200 spending a token refilled since (`r=0`).
fn assert_spent(response: &crate::helpers::TestResponse, what: &str) {
    match response.status {
        429 => {}
        200 => assert!(
            response.header("ratelimit").starts_with(r#""api";r=0;"#),
            "{what}: {}",
            response.header("ratelimit")
        ),
        status => panic!("{what}: {status}"),
    }
}

/// A key revoked with `partner-api keys revoke` stops working on a running replica once it
/// reads the file again (every `--tls-watch-secs`), without a restart; a key file that cannot be
/// used is refused and the keys read before stay in force.
#[actix_web::test]
async fn a_key_revoked_in_the_file_stops_working_without_a_restart() {
    let app = spawn_app_with(|config| config.tls_watch_secs = 1).await;
    let path = app.work.join("keys.json");
    let reader = format!("Bearer {}", app.keys.reader);
    assert_eq!(retrieve_with(&app, Some(&reader)).await.status, 200);
    // A file cut short (a copy in progress): refused, the keys stay.
    let whole = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, &whole[..whole.len() / 2]).unwrap();
    let metrics = || async {
        app.client
            .get(format!("{}/metrics", app.admin_address))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };
    let refused =
        wait_for(|| async { metrics().await.contains("partner_api_keys_file_refused 1") }).await;
    assert!(refused, "the cut file is refused");
    assert_eq!(retrieve_with(&app, Some(&reader)).await.status, 200);
    std::fs::write(&path, &whole).unwrap();
    let file = partner_api::auth::store::KeyFile::read(&path).unwrap();
    let reader_id = file.keys[1].id.clone();
    partner_api::auth::commands::revoke(
        &path,
        &reader_id,
        None,
        jiff::Timestamp::now(),
        &mut Vec::new(),
    )
    .unwrap();
    let revoked =
        wait_for(|| async { retrieve_with(&app, Some(&reader)).await.status == 401 }).await;
    assert!(revoked, "the revoked key still works");
    let response = retrieve_with(&app, Some(&reader)).await;
    assert_eq!(response.json()["error"]["code"], "key_revoked");
    assert!(metrics().await.contains("partner_api_keys_file_refused 0"));
    assert!(metrics().await.contains("partner_api_keys_loaded 5"));
}

/// Polls `condition` every 100 ms for at most 10 s.
async fn wait_for<F, Fut>(condition: F) -> bool
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..100 {
        if condition().await {
            return true;
        }
        actix_web::rt::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    false
}
