//! Every wait has an end (docs/operations/configuration.md, "Deadlines"): a body that stops arriving is answered
//! 408 and its connection closed, a response the client does not read ends its connection
//! (HTTP/1.1) or stream (HTTP/2), an HTTP/2 connection without streams closes even with
//! keep-alive off, and a request asking to upgrade is answered as the HTTP/1.1 request it is.
//! Before these deadlines each of these held its request, and a file descriptor, forever.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::edge::{Raw, assert_contract_error, parse};
use crate::helpers::spawn_app_with;
use crate::http2::{h2_tls, metric_samples, tls_app_with};
use crate::tls::TestPki;

/// Writes `request` without half-closing and reads until the server closes (or 10 s pass):
/// the answer, and how long the server took to close.
fn answer_and_close(address: SocketAddr, request: &[u8]) -> (Option<Raw>, Option<Duration>) {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let started = Instant::now();
    stream.write_all(request).unwrap();
    let mut answer = Vec::new();
    let closed = stream.read_to_end(&mut answer).is_ok();
    (parse(&answer), closed.then(|| started.elapsed()))
}

/// Reads one whole answer (head and `Content-Length` bytes of body) without waiting for a close.
fn one_answer(stream: &mut TcpStream) -> Option<Raw> {
    let mut answer = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(raw) = parse(&answer) {
            let length: usize = raw.header("content-length")?.parse().ok()?;
            if raw.body.len() == length {
                return Some(raw);
            }
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return parse(&answer),
            Ok(read) => answer.extend_from_slice(&chunk[..read]),
        }
    }
}

#[actix_web::test]
async fn a_body_that_stops_arriving_gets_a_408_then_a_close() {
    let app = spawn_app_with(|config| config.body_timeout_secs = 1).await;
    let address = app.local_addr;
    let head = "GET /v1/ping HTTP/1.1\r\nHost: localhost\r\n";
    for (framing, partial_body) in [
        ("Content-Length: 10\r\n", "{}"),
        ("Transfer-Encoding: chunked\r\n", "5\r\n{}"),
    ] {
        let request =
            format!("{head}{framing}Content-Type: application/json\r\n\r\n{partial_body}");
        let (raw, closed_after) = actix_web::rt::task::spawn_blocking(move || {
            answer_and_close(address, request.as_bytes())
        })
        .await
        .unwrap();
        let raw = raw.unwrap_or_else(|| panic!("no answer to a stalled body ({framing:?})"));
        let error = assert_contract_error(&raw, 408, "request_timeout");
        assert_eq!(
            error["message"],
            "The request body stopped arriving: nothing more came within 1 s."
        );
        assert_eq!(raw.header("connection"), Some("close"), "{framing:?}");
        let closed_after =
            closed_after.unwrap_or_else(|| panic!("the server keeps the connection ({framing:?})"));
        assert!(closed_after < Duration::from_secs(8), "{closed_after:?}");
    }
    assert_eq!(
        metric_samples(&app, "partner_api_http_requests_in_flight ").await,
        ["partner_api_http_requests_in_flight 0"]
    );
}

/// `Connection: Upgrade` with nothing after the head: the HTTP layer hands over everything that
/// follows as the body, to the end of the connection, so ping waited for a body that is not
/// one. This service switches to no other protocol and answers the request as it is.
#[actix_web::test]
async fn an_upgrade_request_is_answered_as_the_http_1_1_request_it_is() {
    let app = spawn_app_with(|_| {}).await;
    let address = app.local_addr;
    let raw = actix_web::rt::task::spawn_blocking(move || {
        // No body, an empty one, and one of two bytes (the HTTP layer hands over everything
        // after the head of an upgrade request, whatever its Content-Length).
        [
            "",
            "Content-Length: 0\r\n",
            "Content-Length: 2\r\nContent-Type: application/json\r\n",
        ]
        .map(|framing| {
            let body = if framing.contains(": 2") { "{}" } else { "" };
            let mut stream = TcpStream::connect(address).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            let request = format!(
                "GET /v1/ping HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\n\
                     Upgrade: websocket\r\n{framing}\r\n{body}"
            );
            stream.write_all(request.as_bytes()).unwrap();
            (framing, one_answer(&mut stream))
        })
    })
    .await
    .unwrap();
    for (framing, raw) in raw {
        let raw = raw.unwrap_or_else(|| panic!("no answer within 5 s ({framing:?})"));
        assert_eq!(raw.status, 200, "{framing:?}: {raw:?}");
        assert_eq!(raw.body, br#"{"object":"ping","pong":true}"#);
    }
}

/// Over TLS the encryption layer takes the whole response into its own buffer and only then
/// finds the socket full: the deadline ran on the HTTP layer's writes only, so an HTTPS client
/// that read nothing held its response forever. It runs while the TLS layer's flush waits too.
#[actix_web::test]
async fn an_unread_response_over_tls_ends_its_connection() {
    let pki = TestPki::new("tls-unread");
    let app = tls_app_with(&pki, |config| config.send_timeout_secs = 1).await;
    let mut tls = crate::http2::tls_with(&pki, &app, b"http/1.1", Some(2048)).await;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // More than the kernel's buffers hold, so that some response waits.
    let request = "GET /docs/swagger-ui-bundle.js HTTP/1.1\r\nHost: localhost\r\n\r\n";
    tls.write_all(request.repeat(8).as_bytes()).await.unwrap();
    until_aborted_and_out_of_flight(&app).await;
    // Reading now gets what the buffers held, then the end.
    let mut rest = Vec::new();
    let ended = tokio::time::timeout(Duration::from_secs(5), tls.read_to_end(&mut rest)).await;
    assert!(ended.is_ok(), "the connection did not end");
}

/// A client that pipelines requests for a large document and reads nothing: once the kernel's
/// buffers are full, the response makes no progress, and after the send deadline the
/// connection is dropped and the request leaves flight.
#[actix_web::test]
async fn a_response_the_client_never_reads_ends_its_connection() {
    let app = spawn_app_with(|config| config.send_timeout_secs = 1).await;
    let address = app.local_addr;
    let stream = actix_web::rt::task::spawn_blocking(move || {
        let socket =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        socket.set_recv_buffer_size(4096).unwrap();
        socket.connect(&address.into()).unwrap();
        let mut stream: TcpStream = socket.into();
        let request = "GET /docs/swagger-ui-bundle.js HTTP/1.1\r\nHost: localhost\r\n\r\n";
        stream.write_all(request.repeat(8).as_bytes()).unwrap();
        stream
    })
    .await
    .unwrap();
    // Nothing read: the first response fills the buffers and stops.
    actix_web::rt::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        metric_samples(&app, "partner_api_http_requests_in_flight ").await,
        ["partner_api_http_requests_in_flight 1"]
    );
    until_aborted_and_out_of_flight(&app).await;
    // The connection is gone: reading now gets what the buffers held, then its end.
    let read = actix_web::rt::task::spawn_blocking(move || {
        let mut stream = stream;
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut all = Vec::new();
        let ended = match stream.read_to_end(&mut all) {
            Ok(_) => true,
            Err(error) => error.kind() == std::io::ErrorKind::ConnectionReset,
        };
        (ended, all.len())
    })
    .await
    .unwrap();
    assert!(read.0, "the connection did not end: {} bytes read", read.1);
    assert_eq!(
        metric_samples(&app, "partner_api_http_responses_aborted_total").await,
        ["partner_api_http_responses_aborted_total 1"]
    );
    let aborted: Vec<String> = crate::helpers::log_lines_containing("/docs/swagger-ui-bundle.js")
        .into_iter()
        .filter(|line| {
            line.contains("\"GET /docs/swagger-ui-bundle.js\" 200 ") && line.contains(" aborted")
        })
        .collect();
    assert_eq!(aborted.len(), 1, "{aborted:#?}");
}

/// Waits (at most 10 s) until one response was aborted and nothing is in flight. Between two
/// pipelined responses nothing is in flight either, so the two are read together.
async fn until_aborted_and_out_of_flight(app: &crate::helpers::TestApp) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let aborted = metric_samples(app, "partner_api_http_responses_aborted_total").await;
        let in_flight = metric_samples(app, "partner_api_http_requests_in_flight ").await;
        if aborted == ["partner_api_http_responses_aborted_total 1"]
            && in_flight == ["partner_api_http_requests_in_flight 0"]
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "after 10 s: {aborted:?} {in_flight:?}"
        );
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `GET /v1/ping` from `source`, announcing a body it never sends: held until the body
/// deadline. The stream is returned so that the connection stays open.
fn held_request(address: SocketAddr, source: &str) -> TcpStream {
    let mut stream = connect_from(address, source);
    stream
        .write_all(b"GET /v1/ping HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10\r\n\r\n{}")
        .unwrap();
    stream
}

/// A ping from `source`, answered whole.
fn ping_from(address: SocketAddr, source: &str) -> Raw {
    let mut stream = connect_from(address, source);
    stream
        .write_all(b"GET /v1/ping HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    one_answer(&mut stream).expect("an answer within 5 s")
}

/// A connection to `address` from the loopback address `source`, reads timing out after 5 s.
fn connect_from(address: SocketAddr, source: &str) -> TcpStream {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let source: SocketAddr = format!("{source}:0").parse().unwrap();
    socket.bind(&source.into()).unwrap();
    socket.connect(&address.into()).unwrap();
    let stream: TcpStream = socket.into();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream
}

/// One client holding as many requests as it may is refused more, with the rate limit's 429,
/// while another client is served; once its requests end, it is served again. Before the
/// ceiling, a client inside its quota held as many as its rate allowed, until the service ran
/// out of descriptors for everyone.
#[actix_web::test]
async fn a_client_at_its_in_flight_ceiling_is_refused_and_others_are_served() {
    let app = spawn_app_with(|config| {
        config.max_in_flight_per_client = Some(3);
        config.body_timeout_secs = 30;
    })
    .await;
    let address = app.local_addr;
    let held = actix_web::rt::task::spawn_blocking(move || {
        (0..3)
            .map(|_| held_request(address, "127.0.0.1"))
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while metric_samples(&app, "partner_api_http_requests_in_flight ").await
        != ["partner_api_http_requests_in_flight 3"]
    {
        assert!(
            Instant::now() < deadline,
            "the three requests never got in flight"
        );
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
    let (refused, other) = actix_web::rt::task::spawn_blocking(move || {
        (
            ping_from(address, "127.0.0.1"),
            ping_from(address, "127.0.0.2"),
        )
    })
    .await
    .unwrap();
    let error = assert_contract_error(&refused, 429, "rate_limited");
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert!(error["message"].is_string());
    assert_eq!(other.status, 200, "{other:?}");
    assert_eq!(
        metric_samples(&app, "partner_api_in_flight_refusals_total").await,
        ["partner_api_in_flight_refusals_total 1"]
    );
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(10);
    while metric_samples(&app, "partner_api_http_requests_in_flight ").await
        != ["partner_api_http_requests_in_flight 0"]
    {
        assert!(
            Instant::now() < deadline,
            "the held requests never left flight"
        );
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    }
    let again = actix_web::rt::task::spawn_blocking(move || ping_from(address, "127.0.0.1"))
        .await
        .unwrap();
    assert_eq!(again.status, 200, "{again:?}");
}

/// The `h2` crate's client over TLS, with `configure` applied to its builder.
async fn h2_client(
    pki: &TestPki,
    app: &crate::helpers::TestApp,
    configure: impl FnOnce(&mut h2::client::Builder),
) -> (
    h2::client::SendRequest<bytes::Bytes>,
    actix_web::rt::task::JoinHandle<Result<(), h2::Error>>,
) {
    let mut builder = h2::client::Builder::new();
    configure(&mut builder);
    let (client, connection) = builder.handshake(h2_tls(pki, app).await).await.unwrap();
    (client, actix_web::rt::spawn(connection))
}

/// HTTP/2: a stream whose HEADERS announce a body that never comes is answered 408 on that
/// stream, like HTTP/1.1, and leaves flight.
#[actix_web::test]
async fn an_http2_body_that_never_comes_gets_a_408() {
    let pki = TestPki::new("h2-stalled-body");
    let app = tls_app_with(&pki, |config| config.body_timeout_secs = 1).await;
    let (client, _connection) = h2_client(&pki, &app, |_| {}).await;
    let mut client = client.ready().await.unwrap();
    let request = http::Request::get(format!(
        "https://localhost:{}/v1/ping",
        app.local_addr.port()
    ))
    .header("content-type", "application/json")
    .header("content-length", "10")
    .body(())
    .unwrap();
    let (response, _body_sender) = client.send_request(request, false).unwrap();
    let response = tokio::time::timeout(Duration::from_secs(8), response)
        .await
        .expect("an answer within 8 s")
        .unwrap();
    assert_eq!(response.status(), 408);
    assert_eq!(response.headers()["cache-control"], "no-store");
    let json = crate::http2::json_body(response).await;
    assert_eq!(json["error"]["code"], "request_timeout");
    assert_eq!(
        json["error"]["message"],
        "The request body stopped arriving: nothing more came within 1 s."
    );
    assert_eq!(
        metric_samples(&app, "partner_api_http_requests_in_flight ").await,
        ["partner_api_http_requests_in_flight 0"]
    );
}

/// HTTP/2: a client that opens no window (SETTINGS_INITIAL_WINDOW_SIZE 0) and answers PINGs
/// held its responses forever; after the send deadline the stream is reset.
#[actix_web::test]
async fn an_http2_client_that_opens_no_window_loses_the_stream() {
    let pki = TestPki::new("h2-no-window");
    let app = tls_app_with(&pki, |config| config.send_timeout_secs = 1).await;
    let (client, _connection) = h2_client(&pki, &app, |builder| {
        builder.initial_window_size(0);
    })
    .await;
    let mut client = client.ready().await.unwrap();
    let request = http::Request::get(format!(
        "https://localhost:{}/docs/swagger-ui-bundle.js",
        app.local_addr.port()
    ))
    .body(())
    .unwrap();
    let (response, _) = client.send_request(request, true).unwrap();
    let response = response.await.unwrap();
    assert_eq!(response.status(), 200);
    let mut body = response.into_body();
    let ended = tokio::time::timeout(Duration::from_secs(8), body.data())
        .await
        .expect("the stream ends within 8 s");
    let error = ended
        .expect("a reset, not the end of the body")
        .unwrap_err();
    assert_eq!(error.reason(), Some(h2::Reason::CANCEL), "{error:?}");
    assert_eq!(
        metric_samples(&app, "partner_api_http_requests_in_flight ").await,
        ["partner_api_http_requests_in_flight 0"]
    );
}

/// HTTP/2 with keep-alive off: a connection that sends only its preface and SETTINGS was never
/// closed; it now closes after `--h2-idle-secs`.
#[actix_web::test]
async fn an_idle_http2_connection_closes_with_keep_alive_off() {
    let pki = TestPki::new("h2-idle-no-keep-alive");
    let app = tls_app_with(&pki, |config| {
        config.keep_alive_secs = 0;
        config.h2_idle_secs = 1;
    })
    .await;
    let (_client, connection) = h2_client(&pki, &app, |_| {}).await;
    let ended = tokio::time::timeout(Duration::from_secs(10), connection).await;
    assert!(
        ended.is_ok(),
        "the idle connection is still open after 10 s"
    );
}

/// An early answer reaches a client still sending: a 200 KB request target is answered 414
/// once the server has read 32 KiB of it, and the server used to close with the rest unread,
/// so the kernel reset the connection and the client often never read the JSON error. Now the
/// connection lingers, reading and dropping, before it closes: 20 answers in 20.
#[actix_web::test]
async fn an_early_answer_is_read_before_the_close() {
    let app = spawn_app_with(|_| {}).await;
    let address = app.local_addr;
    let answers = actix_web::rt::task::spawn_blocking(move || {
        let request = format!(
            "GET /{} HTTP/1.1\r\nHost: localhost\r\n\r\n",
            "a".repeat(200_000)
        );
        (0..20)
            .map(|_| {
                let mut stream = TcpStream::connect(address).unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_secs(10)))
                    .unwrap();
                stream
                    .set_write_timeout(Some(Duration::from_secs(10)))
                    .unwrap();
                // The server may answer before all of it is written.
                let _ = stream.write_all(request.as_bytes());
                let mut answer = Vec::new();
                let read = stream.read_to_end(&mut answer);
                (read.map_err(|error| error.kind()), parse(&answer))
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for (read, raw) in answers {
        assert_eq!(read.map(|_| ()), Ok(()), "the connection was reset");
        let raw = raw.expect("an answer");
        assert_contract_error(&raw, 414, "uri_too_long");
        assert_eq!(raw.header("connection"), Some("close"));
    }
}

/// Connections that send nothing are held only until the head deadline, but one address could
/// open as many as it liked and take every descriptor; each peer address may hold at most
/// `--max-connections-per-client`, and a further one is closed as soon as it is accepted,
/// while other addresses are served.
#[actix_web::test]
async fn a_peer_at_its_connection_ceiling_is_closed_at_once_and_others_are_served() {
    let app = spawn_app_with(|config| {
        config.max_connections_per_client = Some(5);
        config.request_head_timeout_ms = 30_000;
    })
    .await;
    let address = app.local_addr;
    let (idle, refused, other) = actix_web::rt::task::spawn_blocking(move || {
        let idle: Vec<TcpStream> = (0..5).map(|_| connect_from(address, "127.0.0.1")).collect();
        // Let the server accept them before the sixth.
        std::thread::sleep(Duration::from_millis(300));
        let mut sixth = connect_from(address, "127.0.0.1");
        let mut read = [0u8; 16];
        let refused = match sixth.read(&mut read) {
            Ok(0) => true,
            Err(error) => error.kind() == std::io::ErrorKind::ConnectionReset,
            Ok(_) => false,
        };
        (idle, refused, ping_from(address, "127.0.0.2"))
    })
    .await
    .unwrap();
    assert!(refused, "the sixth connection was not closed");
    assert_eq!(other.status, 200, "{other:?}");
    assert_eq!(
        metric_samples(&app, "partner_api_connections_refused_total").await,
        ["partner_api_connections_refused_total 1"]
    );
    drop(idle);
    actix_web::rt::time::sleep(Duration::from_millis(300)).await;
    let again = actix_web::rt::task::spawn_blocking(move || ping_from(address, "127.0.0.1"))
        .await
        .unwrap();
    assert_eq!(again.status, 200, "{again:?}");
}
