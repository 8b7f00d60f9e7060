//! Writes, through the test build's `things`: a create answers 201 with `Location` and, with
//! an `Idempotency-Key`, exactly once; a PATCH tells an absent field, `null` and a value apart;
//! an action (`/archive`) changes a thing's state, and a thing in a state that does not allow
//! a change gets 409 `state_conflict`, which only the operations that declare it document. Each
//! request for member data leaves one audit record, whatever its answer.

use serde_json::{Value, json};

use crate::helpers::{ExpectedError, TestApp, TestResponse, spawn_app, spawn_app_seeded};

async fn send_keyed(
    app: &TestApp,
    method: &str,
    path: &str,
    body: &str,
    idempotency: Option<&str>,
) -> TestResponse {
    let mut request = app
        .keyed(method, path)
        .header("content-type", "application/json")
        .body(body.to_owned());
    if let Some(key) = idempotency {
        request = request.header("idempotency-key", key);
    }
    app.send(request).await
}

#[actix_web::test]
async fn a_create_answers_201_with_its_location_and_an_idempotency_key_makes_it_once() {
    let app = spawn_app_seeded(|_| {}, 0).await;
    let body = r#"{"label": "Morning walks", "starts_on": "2026-12-01"}"#;
    let first = send_keyed(&app, "POST", "/v1/things", body, Some("key-1")).await;
    assert_eq!(first.status, 201, "{}", first.text());
    let thing = first.json();
    let id = thing["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("th_") && id.len() == 19, "{id}");
    let created_at = crate::helpers::created_just_now(&thing);
    assert_eq!(
        thing,
        json!({"object": "thing", "id": id, "label": "Morning walks", "status": "active",
               "starts_on": "2026-12-01", "price": null, "created": created_at})
    );
    assert_eq!(first.header("location"), format!("/v1/things/{id}"));
    assert_eq!(app.get_keyed(&first.header("location")).await.json(), thing);
    // The same key and body again, even written otherwise: the first answer, nothing created.
    let again = send_keyed(
        &app,
        "POST",
        "/v1/things",
        r#"{ "starts_on":"2026-12-01","label":"Morning walks" }"#,
        Some("key-1"),
    )
    .await;
    assert_eq!(
        (again.status, again.body.clone()),
        (201, first.body.clone())
    );
    assert_eq!(again.header("location"), first.header("location"));
    assert_ne!(
        again.header("service-request-id"),
        first.header("service-request-id")
    );
    let listed = app.get_keyed("/v1/things").await.json();
    assert_eq!(listed["data"].as_array().unwrap().len(), 1);
    // The same key with another body: refused, nothing created.
    let other = send_keyed(
        &app,
        "POST",
        "/v1/things",
        r#"{"label": "Evening walks"}"#,
        Some("key-1"),
    )
    .await;
    app.assert_error(
        &other,
        ExpectedError::invalid_request(
            422,
            "idempotency_key_reused",
            "This Idempotency-Key was first used with another request.",
            None,
        ),
    );
    // Another partner's same key is its own.
    let theirs = app
        .send(
            app.request("POST", "/v1/things")
                .bearer_auth(&app.keys.other)
                .header("content-type", "application/json")
                .header("idempotency-key", "key-1")
                .body(body),
        )
        .await;
    assert_eq!(theirs.status, 201);
    assert_ne!(theirs.json()["id"], thing["id"]);
    // Without a key, each create is new; an invalid key is named.
    let a = send_keyed(&app, "POST", "/v1/things", body, None).await;
    let b = send_keyed(&app, "POST", "/v1/things", body, None).await;
    assert_ne!(a.json()["id"], b.json()["id"]);
    let bad = send_keyed(&app, "POST", "/v1/things", body, Some("a key with spaces")).await;
    app.assert_error(
        &bad,
        ExpectedError::invalid_request(
            400,
            "parameter_invalid",
            "Invalid value for parameter Idempotency-Key: it must be 1 to 255 visible ASCII \
             characters (a UUID, say).",
            Some("Idempotency-Key"),
        ),
    );
    // A refused create keeps nothing: the same key may be sent again, fixed.
    let refused = send_keyed(
        &app,
        "POST",
        "/v1/things",
        r#"{"label": ""}"#,
        Some("key-2"),
    )
    .await;
    app.assert_error(
        &refused,
        ExpectedError::invalid_request(
            400,
            "parameter_invalid",
            "Invalid value for parameter label: it must be a string of 1 to 200 characters.",
            Some("label"),
        ),
    );
    let missing = send_keyed(
        &app,
        "POST",
        "/v1/things",
        r#"{"starts_on": null}"#,
        Some("key-2"),
    )
    .await;
    app.assert_error(
        &missing,
        ExpectedError::invalid_request(
            400,
            "parameter_missing",
            "Missing required parameter: label",
            Some("label"),
        ),
    );
    let fixed = send_keyed(
        &app,
        "POST",
        "/v1/things",
        r#"{"label": "Fixed"}"#,
        Some("key-2"),
    )
    .await;
    assert_eq!(fixed.status, 201);
    assert_eq!(fixed.json()["starts_on"], Value::Null);
}

/// Money as the contract writes it: the amount an exact decimal string kept as sent, the
/// currency a code in circulation; a float, a code in lower case or more decimals than the
/// currency has are refused naming the part; a PATCH sets and unsets it.
#[actix_web::test]
async fn a_price_is_kept_exactly_and_a_bad_one_named() {
    let app = spawn_app_seeded(|_| {}, 0).await;
    let body = r#"{"label": "Gym", "price": {"amount": "49.90", "currency": "EUR"}}"#;
    let created = send_keyed(&app, "POST", "/v1/things", body, None).await;
    assert_eq!(created.status, 201, "{}", created.text());
    assert_eq!(
        created.json()["price"],
        json!({"amount": "49.90", "currency": "EUR"})
    );
    for (price, param, message) in [
        (
            r#"{"amount": 49.9, "currency": "EUR"}"#,
            "price.amount",
            "Invalid value for parameter price.amount: it must be an exact decimal amount \
             written as a string, such as \"49.90\" (no sign, at most 15 digits before the \
             point).",
        ),
        (
            r#"{"amount": "49.90", "currency": "eur"}"#,
            "price.currency",
            "Invalid value for parameter price.currency: it must be a currency code in \
             circulation, in capitals (ISO 4217: EUR, USD, GBP).",
        ),
        (
            r#"{"amount": "1.005", "currency": "EUR"}"#,
            "price",
            "Invalid value for parameter price: it must have an amount with at most 2 \
             decimals, as its currency has.",
        ),
    ] {
        let body = format!(r#"{{"label": "Gym", "price": {price}}}"#);
        let refused = send_keyed(&app, "POST", "/v1/things", &body, None).await;
        assert_eq!(refused.status, 400, "{price}");
        assert_eq!(
            refused.json()["error"],
            json!({
                "type": "invalid_request_error",
                "code": "parameter_invalid",
                "message": message,
                "param": param,
                "doc_url": format!("{}/docs/errors#parameter_invalid", app.address),
                "request_id": refused.header("service-request-id"),
            }),
            "{price}"
        );
    }
    let path = created.header("location");
    let yen = r#"{"price": {"amount": "5400", "currency": "JPY"}}"#;
    let changed = send_keyed(&app, "PATCH", &path, yen, None).await;
    assert_eq!(
        changed.json()["price"],
        json!({"amount": "5400", "currency": "JPY"})
    );
    let unset = send_keyed(&app, "PATCH", &path, r#"{"price": null}"#, None).await;
    assert_eq!(unset.json()["price"], Value::Null);
}

/// Requests with one key sent at once: one creates, the others wait their turn or are told the
/// first is still being answered; none creates a second thing.
#[actix_web::test]
async fn concurrent_requests_with_one_key_create_one_thing() {
    let app = spawn_app_seeded(|_| {}, 0).await;
    let body = r#"{"label": "Once"}"#;
    let answers = futures_util::future::join_all(
        (0..8).map(|_| send_keyed(&app, "POST", "/v1/things", body, Some("same"))),
    )
    .await;
    let mut ids = Vec::new();
    for answer in &answers {
        match answer.status {
            201 => ids.push(answer.json()["id"].as_str().unwrap().to_owned()),
            409 => assert_eq!(answer.json()["error"]["code"], "idempotency_key_in_use"),
            other => panic!("{other}: {}", answer.text()),
        }
    }
    ids.dedup();
    assert_eq!(ids.len(), 1, "{ids:?}");
    assert_eq!(
        app.get_keyed("/v1/things").await.json()["data"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[actix_web::test]
async fn a_patch_tells_absent_null_and_a_value_apart_and_an_archived_thing_cannot_change() {
    let app = spawn_app().await;
    let path = "/v1/things/th_0003";
    let thing = |label: &str, status: &str, starts_on: Value| json!({"object": "thing", "id": "th_0003", "label": label, "status": status, "starts_on": starts_on, "price": null, "created": "2026-11-25T00:00:00Z"});
    let set = send_keyed(&app, "PATCH", path, r#"{"starts_on": "2027-01-31"}"#, None).await;
    assert_eq!(
        set.json(),
        thing("Thing number 3", "active", json!("2027-01-31"))
    );
    // Absent: kept.
    let renamed = send_keyed(&app, "PATCH", path, r#"{"label": "Renamed"}"#, None).await;
    assert_eq!(
        renamed.json(),
        thing("Renamed", "active", json!("2027-01-31"))
    );
    // Nothing to change: the thing as it is.
    let same = send_keyed(&app, "PATCH", path, "{}", None).await;
    assert_eq!(same.json(), thing("Renamed", "active", json!("2027-01-31")));
    // null: unset.
    let unset = send_keyed(&app, "PATCH", path, r#"{"starts_on": null}"#, None).await;
    assert_eq!(unset.json(), thing("Renamed", "active", Value::Null));
    for (body, code, message, param) in [
        (
            r#"{"label": null}"#,
            "parameter_invalid",
            "Invalid value for parameter label: it must not be null: leave it out to keep it as it is.",
            "label",
        ),
        (
            r#"{"starts_on": "2027-02-30"}"#,
            "parameter_invalid",
            "Invalid value for parameter starts_on: it must be a day that exists, written YYYY-MM-DD.",
            "starts_on",
        ),
        (
            r#"{"status": "archived"}"#,
            "parameter_unknown",
            "Received unknown parameter: status",
            "status",
        ),
    ] {
        let response = send_keyed(&app, "PATCH", path, body, None).await;
        app.assert_error(
            &response,
            ExpectedError::invalid_request(400, code, message, Some(param)),
        );
    }
    // The action, then the state it leaves.
    let archived = app
        .send(app.keyed("POST", "/v1/things/th_0003/archive"))
        .await;
    assert_eq!(archived.json(), thing("Renamed", "archived", Value::Null));
    for response in [
        app.send(app.keyed("POST", "/v1/things/th_0003/archive"))
            .await,
        send_keyed(&app, "PATCH", path, r#"{"label": "Again"}"#, None).await,
    ] {
        app.assert_error(
            &response,
            ExpectedError::invalid_request(
                409,
                "state_conflict",
                "The thing th_0003 is archived: it cannot change.",
                None,
            ),
        );
    }
    assert_eq!(app.get_keyed(path).await.json()["label"], "Renamed");
    let missing = app
        .send(app.keyed("POST", "/v1/things/th_0999/archive"))
        .await;
    assert_eq!(
        missing.json()["error"]["message"],
        "No such thing: 'th_0999' (POST /v1/things/th_0999/archive)."
    );
}

/// One audit record per request to an operation that reads or changes member data, whatever
/// its answer, naming the key's id and partner, the operation, the members touched (or, when
/// the handler touched none, the ids the path asked for) and the outcome; none for other
/// requests; never the key itself.
#[actix_web::test]
async fn every_request_for_member_data_leaves_one_audit_record() {
    let app = crate::helpers::spawn_app_with(|config| {
        config.rate_limit_per_second = 1;
        config.rate_limit_burst = 4;
    })
    .await;
    let key_id = |index: usize| {
        partner_api::auth::store::KeyFile::read(&app.work.join("keys.json"))
            .unwrap()
            .keys[index]
            .id
            .clone()
    };
    let (writer_id, reader_id) = (key_id(0), key_id(1));
    assert_eq!(app.get("/v1/ping").await.status, 200);
    assert_eq!(app.get_keyed("/v1/things?limit=2").await.status, 200);
    assert_eq!(app.get_keyed("/v1/things/th_0009").await.status, 200);
    assert_eq!(app.get("/v1/things/th_0009").await.status, 401);
    let created = send_keyed(&app, "POST", "/v1/things", r#"{"label": "New"}"#, Some("k")).await;
    let new_id = created.json()["id"].as_str().unwrap().to_owned();
    let forbidden = app
        .send(
            app.request("PATCH", "/v1/things/th_0002")
                .bearer_auth(&app.keys.reader),
        )
        .await;
    assert_eq!(forbidden.status, 403);
    assert_eq!(app.get_keyed("/v1/things/th_0999").await.status, 404);
    // The writer's burst of 4 is spent (ping and the keyless request counted against the
    // address, the 403 against the reader's key): refused unrouted, and recorded all the same.
    // (A token earned back meanwhile on a slow machine is one more 200 first.)
    let mut served_before_refusal = 0;
    while app.get_keyed("/v1/things/th_0009").await.status == 200 {
        served_before_refusal += 1;
        assert!(served_before_refusal < 5, "no refusal");
    }
    let records = app.audit_records(7 + served_before_refusal).await;
    let client = json!("127.0.0.1");
    let record = |key: Option<&str>,
                  partner: Option<&str>,
                  operation: &str,
                  method: &str,
                  path: &str,
                  members: Value,
                  status: u16,
                  code: Option<&str>| {
        json!({
            "request_id": null, "key_id": key, "partner": partner,
            "livemode": key.map(|_| true), "operation": operation, "method": method,
            "path": path, "members": members, "status": status, "code": code,
            "client": client,
        })
    };
    let without_ids: Vec<Value> = records
        .iter()
        .map(|record| {
            let mut record = record.clone();
            assert!(record["request_id"].as_str().unwrap().starts_with("req_"));
            record["request_id"] = Value::Null;
            record
        })
        .collect();
    let (writer, reader) = (Some(writer_id.as_str()), Some(reader_id.as_str()));
    let test = Some("pt_test");
    assert_eq!(
        without_ids,
        [
            record(
                writer,
                test,
                "list_things",
                "GET",
                "/v1/things",
                json!(["th_0001", "th_0002"]),
                200,
                None
            ),
            record(
                writer,
                test,
                "retrieve_thing",
                "GET",
                "/v1/things/th_0009",
                json!(["th_0009"]),
                200,
                None
            ),
            record(
                None,
                None,
                "retrieve_thing",
                "GET",
                "/v1/things/th_0009",
                json!(["th_0009"]),
                401,
                Some("key_missing")
            ),
            record(
                writer,
                test,
                "create_thing",
                "POST",
                "/v1/things",
                json!([new_id]),
                201,
                None
            ),
            record(
                reader,
                test,
                "update_thing",
                "PATCH",
                "/v1/things/th_0002",
                json!(["th_0002"]),
                403,
                Some("key_scope_missing")
            ),
            record(
                writer,
                test,
                "retrieve_thing",
                "GET",
                "/v1/things/th_0999",
                json!(["th_0999"]),
                404,
                Some("resource_missing")
            ),
        ]
        .into_iter()
        .chain((0..served_before_refusal).map(|_| {
            record(
                writer,
                test,
                "retrieve_thing",
                "GET",
                "/v1/things/th_0009",
                json!(["th_0009"]),
                200,
                None,
            )
        }))
        .chain([record(
            writer,
            test,
            "retrieve_thing",
            "GET",
            "/v1/things/th_0009",
            json!(["th_0009"]),
            429,
            Some("rate_limited")
        )])
        .collect::<Vec<_>>()
    );
    // The request ids are those the partner saw; the key itself is nowhere.
    assert_eq!(
        records[3]["request_id"],
        created.header("service-request-id")
    );
    let trail = std::fs::read_to_string(app.work.join("audit.jsonl")).unwrap();
    for key in [&app.keys.writer, &app.keys.reader] {
        assert!(!trail.contains(key.as_str()));
    }
}

/// The generic check with every store empty: for every GET of the document, GET and HEAD get
/// the same status and headers, `Content-Length` included, though the answer is a 404 whose
/// message names the method.
#[actix_web::test]
async fn head_answers_like_get_with_empty_stores() {
    let app = spawn_app_seeded(|_| {}, 0).await;
    for operation in crate::document::operations()
        .into_iter()
        .filter(|operation| operation.method == "get")
    {
        let get = app.send(app.keyed("GET", &operation.path)).await;
        let head = app.send(app.keyed("HEAD", &operation.path)).await;
        let headers = |response: &TestResponse| {
            let mut pairs: Vec<(String, String)> = response
                .headers
                .iter()
                .filter(|(name, _)| {
                    !["service-request-id", "date", "ratelimit"].contains(&name.as_str())
                })
                .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_owned()))
                .collect();
            pairs.sort();
            pairs
        };
        assert_eq!(head.status, get.status, "{}", operation.path);
        assert_eq!(headers(&head), headers(&get), "{}", operation.path);
        assert!(head.body.is_empty());
        if operation.template.contains('{') {
            assert_eq!(get.status, 404, "{}", operation.path);
        }
    }
}

/// For every operation on member data in the document (the test build's included), each kind
/// of answer leaves exactly one audit record naming the right members: a request without a
/// key (401) or without the scope (403), refused before its handler, names the ids its path
/// carries; a thing that is not there (404), a body it cannot take (400) too; a success names
/// the members it returned (the `id` of the thing, or every `id` of a page).
#[actix_web::test]
async fn every_answer_of_every_member_data_operation_leaves_one_record_naming_its_members() {
    let operations: Vec<_> = crate::document::operations()
        .into_iter()
        .filter(|operation| {
            operation.method != "head" && operation.operation["x-member-data"] == true
        })
        .collect();
    assert!(operations.len() >= 5, "{}", operations.len());
    for operation in operations {
        let what = format!("{} {}", operation.method, operation.template);
        let app = crate::helpers::spawn_app().await;
        let method = operation.method.to_uppercase();
        let path_ids: Vec<String> = operation
            .path
            .split('/')
            .filter(|segment| segment.len() > 3 && segment.as_bytes()[2] == b'_')
            .map(str::to_owned)
            .collect();
        let takes_body = operation.operation.get("requestBody").is_some();
        let body_of = |value: Value| value.to_string();
        // The operation's own body example, as the document composes it and the samples send.
        let good_body = body_of(
            operation.operation["requestBody"]["content"]["application/json"]["example"].clone(),
        );
        let with_body = |request: reqwest::RequestBuilder, body: &str| {
            if takes_body {
                request
                    .header("content-type", "application/json")
                    .body(body.to_owned())
            } else {
                request
            }
        };
        let unscoped = app.key_for("pt_test", &["other:read"]);
        let mut cases: Vec<(&str, reqwest::RequestBuilder, u16, Option<Vec<String>>)> = vec![
            (
                "no key",
                with_body(app.request(&method, &operation.path), &good_body),
                401,
                Some(path_ids.clone()),
            ),
            (
                "no scope",
                with_body(
                    app.request(&method, &operation.path).bearer_auth(&unscoped),
                    &good_body,
                ),
                403,
                Some(path_ids.clone()),
            ),
        ];
        if let Some(id) = path_ids.last() {
            let missing_id = format!("{}zz404", &id[..3]);
            let missing = operation.path.replace(id.as_str(), &missing_id);
            let mut expected = path_ids.clone();
            *expected.last_mut().unwrap() = missing_id;
            cases.push((
                "missing",
                with_body(app.keyed(&method, &missing), &good_body),
                404,
                Some(expected),
            ));
        }
        if takes_body {
            cases.push((
                "bad body",
                with_body(app.keyed(&method, &operation.path), r#"{"unknown": 1}"#),
                400,
                Some(path_ids.clone()),
            ));
        }
        // A success: the members it returned, read from its body. Where the path names a
        // thing, one made by the collection's create (its body's example), so that a resource
        // the test app seeds nothing of is covered too; that create's record comes first.
        let mut success_path = operation.path.clone();
        let mut made = 0;
        let mut made_thing = Value::Null;
        let collection = operation.template.split("/{").next().unwrap();
        let relative = collection
            .strip_prefix(partner_api::edge::routes::API_PREFIX)
            .unwrap();
        let create = crate::document::DOCUMENT["paths"][relative].get("post");
        if let (Some(id), Some(create)) = (path_ids.first(), create) {
            let example = &create["requestBody"]["content"]["application/json"]["example"];
            let created = app
                .send(
                    app.keyed("POST", collection)
                        .header("content-type", "application/json")
                        .body(example.to_string()),
                )
                .await;
            assert_eq!(
                created.status,
                201,
                "{what}: the create first: {}",
                created.text()
            );
            made_thing = created.json();
            let new_id = made_thing["id"].as_str().unwrap().to_owned();
            success_path = operation.path.replacen(id.as_str(), &new_id, 1);
            made = 1;
        }
        cases.push((
            "success",
            with_body(app.keyed(&method, &success_path), &good_body),
            0,
            None,
        ));
        for (seen, (case, request, status, members)) in cases.into_iter().enumerate() {
            let seen = made + seen;
            let response = app.send(request).await;
            if status == 0 {
                assert!(
                    (200..300).contains(&response.status),
                    "{what} {case}: {} {}",
                    response.status,
                    response.text()
                );
            } else {
                assert_eq!(
                    response.status,
                    status,
                    "{what} {case}: {}",
                    response.text()
                );
            }
            // A success names the members of what it returned (a removal: of what it removed,
            // the thing made for it): for each thing, its own `id` (`Table::new`) or the field
            // that names its member (`Table::of_members`), one of its text fields; each member
            // once.
            let returned: Vec<Value> = if members.is_none() {
                let body = response.json();
                match body["data"].as_array() {
                    Some(page) => page.clone(),
                    None if body["deleted"] == true => vec![made_thing.clone()],
                    None => vec![body],
                }
            } else {
                Vec::new()
            };
            let records = app.audit_records(seen + 1).await;
            // Exactly one: none more a moment later.
            actix_web::rt::time::sleep(std::time::Duration::from_millis(50)).await;
            let again = app.audit_records(seen + 1).await;
            assert_eq!(
                (records.len(), again.len()),
                (seen + 1, seen + 1),
                "{what} {case}"
            );
            let record = &records[seen];
            assert_eq!(
                (&record["operation"], &record["status"]),
                (&operation.operation["operationId"], &json!(response.status)),
                "{what} {case}: {record}"
            );
            match members {
                Some(members) => {
                    assert_eq!(record["members"], json!(members), "{what} {case}: {record}")
                }
                None => {
                    let named: Vec<&str> = record["members"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|member| member.as_str().unwrap())
                        .collect();
                    let names = |thing: &Value, member: &str| {
                        thing
                            .as_object()
                            .unwrap()
                            .values()
                            .any(|value| value == member)
                    };
                    for thing in &returned {
                        assert!(
                            named.iter().any(|member| names(thing, member)),
                            "{what} {case}: no member of {thing} in {record}"
                        );
                    }
                    for member in &named {
                        assert!(
                            returned.iter().any(|thing| names(thing, member)),
                            "{what} {case}: {member} is of nothing returned: {record}"
                        );
                    }
                    let mut unique = named.clone();
                    unique.sort_unstable();
                    unique.dedup();
                    assert_eq!(unique.len(), named.len(), "{what} {case}: {record}");
                }
            }
        }
    }
}
