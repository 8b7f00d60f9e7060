//! The edge as an attacker tries it: raw HTTP/1.1 bytes over TCP, so that nothing between the
//! test and the server tidies the request up. One view of each request (an encoded spelling of
//! a path is that path to the limiter, the 405 table and the metrics), client identity only
//! from the header the trusted proxy writes, and every answer in the contract's shape, the HTTP
//! layer's own rejections included. The generated-input harnesses at the end run a bounded
//! number of cases (`PROPTEST_CASES`, see CONTRIBUTING.md, "Security", to run them longer).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::Value;

use crate::helpers::{spawn_app, spawn_app_with};

/// A response as read off the wire.
#[derive(Debug)]
pub(crate) struct Raw {
    pub(crate) status: u16,
    pub(crate) headers: BTreeMap<String, String>,
    pub(crate) body: Vec<u8>,
}

impl Raw {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|_| panic!("not JSON: {:?}", String::from_utf8_lossy(&self.body)))
    }
}

/// Sends `request` as it is, half-closes, and reads the one answer up to the server's close.
fn exchange(address: SocketAddr, request: &[u8]) -> Option<Raw> {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    // A large request may be cut off by the server's answer and close: that is the point.
    let _ = stream.write_all(request);
    let _ = stream.shutdown(Shutdown::Write);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    parse(&answer)
}

/// The final response in `answer`, past any interim `1xx` (a `100 Continue`).
pub(crate) fn parse(mut answer: &[u8]) -> Option<Raw> {
    let (end, head, status) = loop {
        let end = answer.windows(4).position(|window| window == b"\r\n\r\n")?;
        let head = std::str::from_utf8(&answer[..end]).ok()?;
        let status: u16 = head.split(' ').nth(1)?.parse().ok()?;
        if status >= 200 {
            break (end, head, status);
        }
        answer = &answer[end + 4..];
    };
    let mut lines = head.split("\r\n");
    lines.next();
    let headers: BTreeMap<String, String> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let mut body = answer[end + 4..].to_vec();
    if let Some(length) = headers.get("content-length").and_then(|l| l.parse().ok()) {
        body.truncate(length);
    }
    Some(Raw {
        status,
        headers,
        body,
    })
}

/// `METHOD target HTTP/1.1` with `Host` and `Connection: close`, then `extra` header lines.
fn request(method: &str, target: &str, extra: &str) -> Vec<u8> {
    format!("{method} {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{extra}\r\n")
        .into_bytes()
}

/// Every error answer: the contract's JSON error, its id equal to `Service-Request-Id`, never
/// cached. Returns the error object.
pub(crate) fn assert_contract_error(raw: &Raw, status: u16, code: &str) -> Value {
    assert_eq!(raw.status, status, "{raw:?}");
    assert_eq!(
        raw.header("content-type"),
        Some("application/json"),
        "{raw:?}"
    );
    assert_eq!(raw.header("cache-control"), Some("no-store"), "{raw:?}");
    assert_eq!(
        raw.header("x-content-type-options"),
        Some("nosniff"),
        "{raw:?}"
    );
    let body = raw.json();
    let error = &body["error"];
    assert_eq!(error["code"], code, "{body}");
    let id = raw.header("service-request-id").expect("a request id");
    assert_eq!(error["request_id"], id, "{body}");
    assert!(id.starts_with("req_") && id.len() == 36, "{id}");
    assert_eq!(
        body.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["error"],
        "{body}"
    );
    error.clone()
}

/// Reads exactly `count` final answers off a keep-alive connection, each cut at its
/// `Content-Length`; an interim `1xx` head is passed over.
fn read_answers(stream: &mut TcpStream, count: usize, step: &str) -> Vec<Raw> {
    let mut bytes = Vec::new();
    let mut answers = Vec::new();
    let mut chunk = [0u8; 4096];
    while answers.len() < count {
        let read = stream
            .read(&mut chunk)
            .expect("an answer before the timeout");
        assert!(read > 0, "{step}: closed after {} answers", answers.len());
        bytes.extend_from_slice(&chunk[..read]);
        while let Some(end) = bytes.windows(4).position(|window| window == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&bytes[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .map_or(0, |value| value.trim().parse().unwrap());
            if bytes.len() < end + 4 + length {
                break;
            }
            let rest = bytes.split_off(end + 4 + length);
            if !head.starts_with("http/1.1 1") {
                answers.push(parse(&bytes).unwrap());
            }
            bytes = rest;
        }
    }
    assert!(bytes.is_empty(), "{step}: more than {count} answers");
    answers
}

/// An idle keep-alive connection gives its buffers back and takes them again when bytes
/// arrive (vendor/README.md): a request split into pieces, two pipelined in one write, a head
/// larger than a buffer (whose grown buffers are freed, not kept), a request expecting
/// `100 Continue` (written into a buffer taken for it) and a request with a body are each
/// answered whole, in order, on the same connection. The last is refused before its body is
/// read, so the connection closes after it, as before.
#[actix_web::test]
async fn a_keep_alive_connection_serves_after_idling_split_and_pipelined_requests() {
    let app = spawn_app().await;
    let address = app.local_addr;
    let answers = actix_web::rt::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let ping = b"GET /v1/ping HTTP/1.1\r\nHost: localhost\r\n\r\n";
        let mut answers = Vec::new();
        stream.write_all(ping).unwrap();
        answers.extend(read_answers(&mut stream, 1, "first"));
        for piece in ping.chunks(7) {
            stream.write_all(piece).unwrap();
            std::thread::sleep(Duration::from_millis(5));
        }
        answers.extend(read_answers(&mut stream, 1, "split"));
        stream.write_all(&[&ping[..], &ping[..]].concat()).unwrap();
        answers.extend(read_answers(&mut stream, 2, "pipelined"));
        let padding = "p".repeat(12 * 1024);
        let large =
            format!("GET /v1/ping HTTP/1.1\r\nHost: localhost\r\nX-Padding: {padding}\r\n\r\n");
        stream.write_all(large.as_bytes()).unwrap();
        answers.extend(read_answers(&mut stream, 1, "large head"));
        stream
            .write_all(b"GET /v1/ping HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\n\r\n")
            .unwrap();
        answers.extend(read_answers(&mut stream, 1, "expect"));
        stream
            .write_all(b"POST /v1/ping HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}")
            .unwrap();
        answers.extend(read_answers(&mut stream, 1, "body"));
        answers
    })
    .await
    .unwrap();
    let statuses: Vec<u16> = answers.iter().map(|raw| raw.status).collect();
    assert_eq!(statuses, [200, 200, 200, 200, 200, 200, 405]);
    for raw in answers.iter().filter(|raw| raw.status == 200) {
        assert_eq!(raw.body, br#"{"object":"ping","pong":true}"#, "{raw:?}");
        assert_eq!(raw.header("content-type"), Some("application/json"));
        assert_eq!(raw.header("cache-control"), Some("no-store"));
        assert_eq!(raw.header("connection"), None, "{raw:?}");
    }
    assert_contract_error(&answers[6], 405, "method_not_allowed");
    assert_eq!(answers[6].header("connection"), Some("close"));
    let ids: std::collections::BTreeSet<_> = answers
        .iter()
        .map(|raw| raw.header("service-request-id").unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 7, "one id per request");
}

/// Finding 1: `/v%31/ping` is `/v1/ping` to everyone, so it counts against the API's quota.
#[actix_web::test]
async fn an_encoded_path_counts_against_the_api_quota() {
    let app = spawn_app_with(|config| {
        config.rate_limit_per_second = 1;
        config.rate_limit_burst = 50;
    })
    .await;
    let address = app.local_addr;
    let answers = actix_web::rt::task::spawn_blocking(move || {
        (0..60)
            .map(|_| exchange(address, &request("GET", "/v%31/ping", "")).unwrap())
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    assert_eq!(answers[0].status, 200);
    assert_eq!(
        answers[0].header("ratelimit-policy"),
        Some("\"api\";q=50;w=50")
    );
    let accepted = answers.iter().filter(|raw| raw.status == 200).count();
    assert!((50..=51).contains(&accepted), "{accepted} of 60 accepted");
    assert_contract_error(answers.last().unwrap(), 429, "rate_limited");
}

/// Finding 1 again: a wrong method on an encoded spelling of a known path is a 405 with
/// `Allow`, as on the plain spelling, not a 404.
#[actix_web::test]
async fn an_encoded_path_with_a_wrong_method_is_a_405() {
    let app = spawn_app().await;
    let address = app.local_addr;
    let raw = actix_web::rt::task::spawn_blocking(move || {
        exchange(
            address,
            &request("POST", "/v%31/p%69ng", "Content-Length: 0\r\n"),
        )
        .unwrap()
    })
    .await
    .unwrap();
    let error = assert_contract_error(&raw, 405, "method_not_allowed");
    assert_eq!(raw.header("allow"), Some("GET, HEAD"));
    assert_eq!(
        error["message"],
        "The method POST is not allowed on this endpoint. Allowed: GET, HEAD."
    );
}

/// Finding 2: behind a proxy that writes `X-Forwarded-For` (the default setting), a client's
/// own `Forwarded` header chooses nothing: every request counts in the proxy-named bucket.
#[actix_web::test]
async fn a_forged_forwarded_header_buys_no_quota() {
    let app = spawn_app_with(|config| {
        config.rate_limit_per_second = 1;
        config.rate_limit_burst = 50;
        config.trusted_proxies = vec!["127.0.0.1".parse().unwrap()];
    })
    .await;
    let address = app.local_addr;
    let answers = actix_web::rt::task::spawn_blocking(move || {
        (0..60)
            .map(|n| {
                // What the proxy appended last is 198.51.100.7; the rest is the client's.
                let forged = format!(
                    "Forwarded: for=203.0.113.{n}\r\nX-Forwarded-For: 192.0.2.{n}, 198.51.100.7\r\n"
                );
                exchange(address, &request("GET", "/v1/ping", &forged)).unwrap()
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    let accepted = answers.iter().filter(|raw| raw.status == 200).count();
    assert!((50..=51).contains(&accepted), "{accepted} of 60 accepted");
    assert_contract_error(answers.last().unwrap(), 429, "rate_limited");
    let id = answers[0].header("service-request-id").unwrap();
    let logged = crate::helpers::log_lines_containing(id);
    let line = logged.first().expect("an access line");
    assert!(
        line.contains(" 198.51.100.7 \"GET /v1/ping\" 200 "),
        "{line}"
    );
}

/// Finding 4: a body cut short is told in this service's words, not the framework's.
#[actix_web::test]
async fn a_body_cut_short_is_told_in_the_catalogues_words() {
    let app = spawn_app().await;
    let address = app.local_addr;
    let raw = actix_web::rt::task::spawn_blocking(move || {
        let mut bytes = request(
            "POST",
            "/test/echo",
            "Content-Type: application/json\r\nContent-Length: 40\r\n",
        );
        bytes.extend_from_slice(b"{\"name_id\":");
        exchange(address, &bytes).unwrap()
    })
    .await
    .unwrap();
    let error = assert_contract_error(&raw, 400, "request_invalid");
    assert_eq!(
        error["message"],
        "The request body ended before the length it announced."
    );
}

/// Sends `request` without half-closing and reads to the server's close: the answer, and
/// whether the server closed the connection itself (the read ends before its timeout).
fn exchange_until_close(address: SocketAddr, request: &[u8]) -> (Option<Raw>, bool) {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(request).unwrap();
    let mut answer = Vec::new();
    let closed = stream.read_to_end(&mut answer).is_ok();
    (parse(&answer), closed)
}

/// A chunked body whose framing breaks while its request's handler is still running: the HTTP
/// layer took the broken framing for a client gone away and dropped the request unanswered
/// (the first request for the reference, rendered on the blocking pool, met it). Now the
/// request is answered as its handler decides, a handler reading the body is told in the
/// catalogue's words, and the connection closes after the answer, which says so.
#[actix_web::test]
async fn a_malformed_chunked_body_still_gets_its_requests_answer_then_a_close() {
    let app = spawn_app().await;
    let address = app.local_addr;
    let answers = actix_web::rt::task::spawn_blocking(move || {
        // Keep-alive requests: the close is the server's own decision.
        let head = "HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n";
        // `/test/slow` answers after a pause without reading the body.
        let slow = format!("GET /test/slow {head}\r\nzz\r\n").into_bytes();
        // `/test/echo` reads the body: a first chunk, then a size line that is not hex.
        let echo = format!(
            "POST /test/echo {head}Content-Type: application/json\r\n\r\n5\r\n{{\"nam\r\nzz\r\n"
        )
        .into_bytes();
        [slow, echo].map(|bytes| exchange_until_close(address, &bytes))
    })
    .await
    .unwrap();
    let [(slow, slow_closed), (echo, echo_closed)] = answers;
    let slow = slow.expect("an answer to the slow request");
    assert_eq!(slow.status, 200, "{slow:?}");
    assert_eq!(slow.body, br#"{"slow":true}"#);
    assert_eq!(slow.header("connection"), Some("close"));
    assert!(slow.header("service-request-id").is_some(), "{slow:?}");
    assert!(slow_closed, "the server closes the connection");
    let echo = echo.expect("an answer to the echo request");
    let error = assert_contract_error(&echo, 400, "request_invalid");
    assert_eq!(
        error["message"],
        "The request body's transfer encoding is malformed."
    );
    assert_eq!(echo.header("connection"), Some("close"));
    assert!(echo_closed, "the server closes the connection");

    // Pipelined behind a slow request: the slow one is answered as usual (its answer does
    // not say close, since another follows), then the broken one, which says close.
    let answers = actix_web::rt::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let pipelined = "GET /test/slow HTTP/1.1\r\nHost: localhost\r\n\r\n\
             POST /test/echo HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\
             Content-Type: application/json\r\n\r\nzz\r\n";
        stream.write_all(pipelined.as_bytes()).unwrap();
        let answers = read_answers(&mut stream, 2, "pipelined");
        let mut rest = Vec::new();
        let closed = stream.read_to_end(&mut rest).is_ok() && rest.is_empty();
        (answers, closed)
    })
    .await
    .unwrap();
    let (answers, closed) = answers;
    assert_eq!(answers[0].status, 200, "{:?}", answers[0]);
    assert_eq!(answers[0].header("connection"), None, "{:?}", answers[0]);
    assert_contract_error(&answers[1], 400, "request_invalid");
    assert_eq!(answers[1].header("connection"), Some("close"));
    assert!(
        closed,
        "the server closes the connection, with nothing more"
    );
}

/// Finding 5: what the HTTP layer refuses before routing is answered in the contract's shape,
/// with a request id and `no-store`, and the connection is closed.
#[actix_web::test]
async fn the_http_layers_rejections_are_contract_errors() {
    let app = spawn_app().await;
    let address = app.local_addr;
    let many_fields: String = (0..100).map(|n| format!("X-Field-{n}: {n}\r\n")).collect();
    let long_target = format!("/v1/{}", "a".repeat(200 * 1024));
    // Past what `http::Uri` takes (64 KiB) but within the head's buffer.
    let longish_target = format!("/v1/{}", "a".repeat(100 * 1024));
    let cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
        (
            "a malformed request line",
            b"GET\x01/v1/ping HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            400,
            "request_invalid",
        ),
        (
            "HTTP/2.0 sent as text",
            b"GET /v1/ping HTTP/2.0\r\nHost: x\r\n\r\n".to_vec(),
            505,
            "http_version_not_supported",
        ),
        (
            "a malformed version",
            b"GET /v1/ping HTTP/2\r\nHost: x\r\n\r\n".to_vec(),
            400,
            "request_invalid",
        ),
        (
            "HTTP/1.1 without Host",
            b"GET /v1/ping HTTP/1.1\r\n\r\n".to_vec(),
            400,
            "request_invalid",
        ),
        (
            "Content-Length with Transfer-Encoding",
            request(
                "POST",
                "/v1/ping",
                "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n",
            ),
            400,
            "request_invalid",
        ),
        (
            "100 header fields",
            request("GET", "/v1/ping", &many_fields),
            431,
            "request_header_too_large",
        ),
        (
            "a 200 KB request target",
            request("GET", &long_target, ""),
            414,
            "uri_too_long",
        ),
        (
            "a 100 KB request target",
            request("GET", &longish_target, ""),
            414,
            "uri_too_long",
        ),
        (
            "a raw non-ASCII path",
            b"GET /v1/p\xc3\xafng HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            400,
            "request_invalid",
        ),
    ];
    let answers = actix_web::rt::task::spawn_blocking(move || {
        cases
            .into_iter()
            .map(|(name, bytes, status, code)| (name, exchange(address, &bytes), status, code))
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for (name, raw, status, code) in answers {
        let raw = raw.unwrap_or_else(|| panic!("{name}: no answer"));
        let error = assert_contract_error(&raw, status, code);
        assert_eq!(raw.header("connection"), Some("close"), "{name}");
        assert!(raw.header("ratelimit").is_none(), "{name}: never counted");
        let expected = partner_api::errors::ErrorCode::ALL
            .into_iter()
            .find(|candidate| candidate.as_str() == code)
            .unwrap()
            .spec();
        // The 431 gives the limits, as the catalogue promises, though the parser refused the
        // head before the fields were counted.
        let message = match status {
            431 => {
                "The request head is over a limit: at most 96 header fields are accepted, \
                 taking at most 131072 bytes (each field's name and value plus 32); over \
                 HTTP/1.1 the whole head, request line included, may take at most 131072 \
                 bytes."
            }
            _ => expected.default_message,
        };
        assert_eq!(error["message"], message, "{name}");
        assert_eq!(error["type"], expected.error_type.as_str(), "{name}");
        assert_eq!(error["param"], Value::Null, "{name}");
        // Recorded like every answer: an access line naming the connection's peer.
        let id = raw.header("service-request-id").unwrap();
        let lines = crate::helpers::log_lines_containing(id);
        assert_eq!(lines.len(), 1, "{name}: {lines:#?}");
        assert!(
            lines[0].contains(&format!("{id} 127.0.0.1 \"- -\" {status} ")),
            "{name}: {}",
            lines[0]
        );
    }
    // Written at debug by the HTTP layer, not as one error line each: a client could fill the
    // log with errors at will.
    let errors = crate::helpers::log_lines_containing("stream error");
    assert!(
        errors.iter().all(|line| !line.starts_with("ERROR")),
        "{errors:#?}"
    );
    // And counted, as no route and no method: the HTTP layer read neither.
    let admin: SocketAddr = app.admin_address["http://".len()..].parse().unwrap();
    let counters = actix_web::rt::task::spawn_blocking(move || request_counters(admin))
        .await
        .unwrap();
    for (status, count) in [(400, 5), (414, 2), (431, 1), (505, 1)] {
        let series = format!(
            r#"partner_api_http_requests_total{{route="unmatched",method="other",status="{status}"}}"#
        );
        assert_eq!(
            counters.get(&series),
            Some(&f64::from(count)),
            "{series}: {counters:#?}"
        );
    }
}

/// What a request says it addresses is checked before it is routed: one `Host` holding a host
/// and an optional port, and (HTTP/2, or an absolute target) a scheme of http or https. (Two
/// `Host` fields are refused by the HTTP layer itself, in its words.)
#[actix_web::test]
async fn a_request_must_address_this_service_by_a_valid_host_and_scheme() {
    let app = spawn_app().await;
    let address = app.local_addr;
    let host_message = "The request must have one Host header holding a host name or address, \
                        with an optional port.";
    let cases: Vec<(&str, &[u8], &str)> = vec![
        (
            "a space in Host",
            b"GET /v1/ping HTTP/1.1\r\nHost: a b\r\n\r\n",
            host_message,
        ),
        (
            "two Host fields",
            b"GET /v1/ping HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
            "The request could not be understood.",
        ),
        (
            "userinfo in Host",
            b"GET /v1/ping HTTP/1.1\r\nHost: u@a\r\n\r\n",
            host_message,
        ),
        (
            "a scheme that is not http",
            b"GET foo://localhost/v1/ping HTTP/1.1\r\nHost: localhost\r\n\r\n",
            "The request's scheme must be http or https.",
        ),
    ];
    let answers = actix_web::rt::task::spawn_blocking(move || {
        cases
            .into_iter()
            .map(|(name, bytes, message)| (name, exchange(address, bytes), message))
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for (name, raw, message) in answers {
        let raw = raw.unwrap_or_else(|| panic!("{name}: no answer"));
        let error = assert_contract_error(&raw, 400, "request_invalid");
        assert_eq!(error["message"], message, "{name}");
    }
    // The ordinary forms are served.
    let fine = actix_web::rt::task::spawn_blocking(move || {
        [
            &b"GET /v1/ping HTTP/1.1\r\nHost: localhost:8080\r\n\r\n"[..],
            b"GET /v1/ping HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n",
            b"GET http://localhost/v1/ping HTTP/1.1\r\nHost: localhost\r\n\r\n",
            b"GET /v1/ping HTTP/1.0\r\n\r\n",
        ]
        .map(|bytes| exchange(address, bytes).map(|raw| raw.status))
    })
    .await
    .unwrap();
    assert_eq!(fine, [Some(200); 4]);
}

/// The admin listener's own rejections were an empty 400 with no request id; they are the
/// contract's errors too.
#[actix_web::test]
async fn the_admin_listeners_rejections_are_contract_errors() {
    let app = spawn_app().await;
    let admin: SocketAddr = app.admin_address["http://".len()..].parse().unwrap();
    let raw = actix_web::rt::task::spawn_blocking(move || {
        exchange(
            admin,
            b"GET /livez HTTP/1.1\r\nHost: x\r\nX-Bad: a\x00b\r\n\r\n",
        )
    })
    .await
    .unwrap()
    .expect("an answer");
    assert_contract_error(&raw, 400, "request_invalid");
    assert_eq!(raw.header("connection"), Some("close"));
}

/// A request head that does not arrive in time gets the contract's 408, body and all, once.
#[actix_web::test]
async fn a_slow_request_head_gets_a_whole_408() {
    let app = spawn_app_with(|config| config.request_head_timeout_ms = 300).await;
    let address = app.local_addr;
    let answer = actix_web::rt::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream
            .write_all(b"GET /v1/ping HTTP/1.1\r\nHost: x\r\n")
            .unwrap();
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        answer
    })
    .await
    .unwrap();
    let raw = parse(&answer).expect("an answer");
    let error = assert_contract_error(&raw, 408, "request_timeout");
    assert_eq!(error["message"], "The request head did not arrive in time.");
    assert_eq!(raw.header("connection"), Some("close"));
    let whole: usize = raw.header("content-length").unwrap().parse().unwrap();
    assert_eq!(raw.body.len(), whole, "the body is written whole");
    let text = String::from_utf8_lossy(&answer);
    assert_eq!(text.matches("HTTP/1.1 408").count(), 1, "{text}");
}

/// The paths the service serves (every operation's, filled from its parameters' examples; the
/// documentation; and some it does not serve), to be spelled every way RFC 3986 says means the
/// same path.
fn paths() -> Vec<String> {
    let mut paths: Vec<String> = crate::document::operations()
        .into_iter()
        .map(|operation| operation.path)
        .collect();
    paths.dedup();
    paths.extend(
        [
            "/docs/",
            "/docs/errors",
            "/openapi/v1.json",
            "/v1/pings",
            "/v1/ping/x",
            "/nothing/here",
        ]
        .map(String::from),
    );
    paths
}

/// `path` with the unreserved characters chosen by `encode` percent-encoded, in upper or lower
/// case hex.
fn spell(path: &str, encode: &[(bool, bool)]) -> String {
    path.chars()
        .zip(encode.iter().chain(std::iter::repeat(&(false, false))))
        .map(|(char, (encode, upper))| {
            let unreserved = char.is_ascii_alphanumeric() || "-._~".contains(char);
            match (unreserved && *encode, upper) {
                (false, _) => char.to_string(),
                (true, true) => format!("%{:02X}", char as u32),
                (true, false) => format!("%{:02x}", char as u32),
            }
        })
        .collect()
}

/// The counters of the request metric, by series.
fn request_counters(admin: SocketAddr) -> BTreeMap<String, f64> {
    let raw = exchange(admin, &request("GET", "/metrics", "")).unwrap();
    String::from_utf8(raw.body)
        .unwrap()
        .lines()
        .filter(|line| line.starts_with("partner_api_http_requests_total{"))
        .filter_map(|line| line.rsplit_once(' '))
        .map(|(series, value)| (series.to_owned(), value.parse().unwrap()))
        .collect()
}

/// What a client and an operator see of one request: status, policy, `Allow`, the error code
/// and message, and the one metric series it was counted in.
fn observe(address: SocketAddr, admin: SocketAddr, method: &str, target: &str) -> String {
    let before = request_counters(admin);
    let raw = exchange(address, &request(method, target, "Content-Length: 0\r\n")).unwrap();
    let after = request_counters(admin);
    let counted: Vec<&String> = after
        .iter()
        .filter(|(series, value)| before.get(*series) != Some(value))
        .map(|(series, _)| series)
        .collect();
    let error = (raw.status >= 400).then(|| {
        let error = raw.json()["error"].clone();
        format!("{} {}", error["code"], error["message"])
    });
    format!(
        "{} policy={:?} allow={:?} error={error:?} counted={counted:?}",
        raw.status,
        raw.header("ratelimit-policy"),
        raw.header("allow"),
    )
}

/// Every spelling of a path is that path: same status, `RateLimit-Policy`, `Allow`, error and
/// metrics label, for GET and for a method the path does not answer.
#[actix_web::test]
async fn every_spelling_of_a_path_is_that_path() {
    let app = spawn_app().await;
    let address = app.local_addr;
    let admin: SocketAddr = app
        .admin_address
        .trim_start_matches("http://")
        .parse()
        .unwrap();
    actix_web::rt::task::spawn_blocking(move || {
        let mut runner = TestRunner::new(Config {
            cases: cases(64),
            failure_persistence: None,
            ..Config::default()
        });
        let strategy = (
            prop::sample::select(paths()),
            prop::collection::vec((any::<bool>(), any::<bool>()), 20),
            prop::sample::select(vec!["GET", "DELETE"]),
        );
        runner
            .run(&strategy, |(path, encode, method)| {
                let spelled = spell(&path, &encode);
                let plain = observe(address, admin, method, &path);
                let other = observe(address, admin, method, &spelled);
                prop_assert_eq!(plain, other, "{} {} and {}", method, path, spelled);
                Ok(())
            })
            .unwrap();
    })
    .await
    .unwrap();
}

/// Cases per harness: `PROPTEST_CASES` when set, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(default)
}

/// A generated raw request: a method, a target of arbitrary bytes, a query, a set of header
/// lines drawn from those that change how a request is read, and a body.
fn raw_request() -> impl Strategy<Value = Vec<u8>> {
    let method = prop::sample::select(vec![
        "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "BREW", "G\x01T",
    ]);
    let path_byte =
        prop::sample::select(b"/v1pingdocsrerapj.%2F%0A%00%C3% +?#\\\"\x7f\xff\t".to_vec());
    let path = prop::collection::vec(path_byte, 0..40);
    let prefix = prop::sample::select(vec!["/v1/ping", "/v1/", "/docs/", "/", "", "/v%31/"]);
    let headers = prop::collection::vec(
        prop::sample::select(vec![
            "Host: localhost\r\n",
            "Host: evil.test/\"x\r\n",
            "Content-Type: application/json\r\n",
            "Content-Type: text/plain\r\n",
            "Content-Length: 2\r\n",
            "Content-Length: -1\r\n",
            "Content-Length: 99999999999999999999\r\n",
            "Transfer-Encoding: chunked\r\n",
            "Transfer-Encoding: gzip\r\n",
            "Expect: 100-continue\r\n",
            "Forwarded: for=\"[::1]\"\r\n",
            "X-Forwarded-For: 1.2.3.4, garbage\r\n",
            "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n",
            "Accept-Encoding: gzip\r\n",
            "Connection: keep-alive\r\n",
            "\u{e9}: \u{e9}\r\n",
            "Bad Header\r\n",
        ]),
        0..6,
    );
    let body = prop::collection::vec(any::<u8>(), 0..64);
    let version = prop::sample::select(vec!["HTTP/1.1", "HTTP/1.0", "HTTP/1.1", "HTTP/9"]);
    (method, prefix, path, version, headers, body).prop_map(
        |(method, prefix, path, version, headers, body)| {
            let mut bytes = format!("{method} {prefix}").into_bytes();
            bytes.extend_from_slice(&path);
            bytes.extend_from_slice(format!(" {version}\r\n").as_bytes());
            for header in headers {
                bytes.extend_from_slice(header.as_bytes());
            }
            bytes.extend_from_slice(b"Connection: close\r\n\r\n");
            bytes.extend_from_slice(&body);
            bytes
        },
    )
}

/// Generated raw requests against the real app factory: whatever arrives, the answer is never
/// a 5xx, always carries a request id, and every error is the contract's JSON error. The
/// process's memory stays bounded over the run.
#[actix_web::test]
async fn generated_requests_get_answers_in_the_contracts_shape() {
    let app = spawn_app().await;
    let address = app.local_addr;
    let rss_before = resident_bytes();
    actix_web::rt::task::spawn_blocking(move || {
        let mut runner = TestRunner::new(Config {
            cases: cases(512),
            failure_persistence: None,
            ..Config::default()
        });
        runner
            .run(&raw_request(), |bytes| {
                let Some(raw) = exchange(address, &bytes) else {
                    // Only a request the server could not even begin to answer (the client
                    // closed before a request line) may end without one.
                    prop_assert!(!bytes.contains(&b'\n'), "no answer to {:?}", bytes);
                    return Ok(());
                };
                prop_assert!(
                    raw.status < 500,
                    "{:?} for {:?}",
                    raw,
                    String::from_utf8_lossy(&bytes)
                );
                let id = raw.header("service-request-id");
                prop_assert!(id.is_some_and(|id| id.starts_with("req_")), "{:?}", raw);
                prop_assert!(raw.header("cache-control").is_some(), "{:?}", raw);
                if raw.status >= 400 && !bytes.starts_with(b"HEAD ") {
                    let body: Value = serde_json::from_slice(&raw.body)
                        .map_err(|_| TestCaseError::fail(format!("not JSON: {raw:?}")))?;
                    prop_assert_eq!(&body["error"]["request_id"], id.unwrap());
                    prop_assert!(body["error"]["code"].is_string());
                    prop_assert_eq!(raw.header("cache-control"), Some("no-store"));
                }
                Ok(())
            })
            .unwrap();
    })
    .await
    .unwrap();
    let grown = resident_bytes().saturating_sub(rss_before);
    assert!(grown < 64 << 20, "the process grew by {grown} bytes");
}

/// This process's resident memory, from `/proc/self/statm`.
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}
