//! HTTP/2 held to the limits of HTTP/1.1 (docs/operations/configuration.md, "Connection limits"): the settings the
//! server announces, the header limits on both protocols, and idle connections closed. The
//! abuse that needs raw frames (floods, rapid reset, a zero window) is in `scripts/soak`.

use std::sync::Arc;
use std::time::Duration;

use reqwest::Version;
use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};
use tokio::net::TcpStream;

use crate::helpers::{TestApp, accepted_socket_nodelay, spawn_app, spawn_app_with};
use crate::tls::TestPki;

pub(crate) async fn tls_app_with(
    pki: &TestPki,
    configure: impl FnOnce(&mut partner_api::server::config::ServerConfig),
) -> TestApp {
    let (cert, key) = (pki.cert_path.clone(), pki.key_path.clone());
    spawn_app_with(move |config| {
        config.tls_cert = Some(cert);
        config.tls_key = Some(key);
        configure(config);
    })
    .await
}

/// An HTTP/2 connection of the `h2` crate's client, over TLS trusting the test CA.
async fn h2_connect(
    pki: &TestPki,
    app: &TestApp,
) -> (
    h2::client::SendRequest<bytes::Bytes>,
    h2::client::Connection<tokio_rustls::client::TlsStream<TcpStream>, bytes::Bytes>,
) {
    h2::client::handshake(h2_tls(pki, app).await).await.unwrap()
}

/// A TLS connection to `app` that has agreed on HTTP/2 by ALPN, for a client of the `h2` crate
/// or for frames written by hand.
pub(crate) async fn h2_tls(
    pki: &TestPki,
    app: &TestApp,
) -> tokio_rustls::client::TlsStream<TcpStream> {
    tls_with(pki, app, b"h2", None).await
}

/// A TLS connection to `app` that has agreed on `alpn`, its socket's receive buffer set to
/// `receive_buffer` bytes when given (a client that reads slowly, or not at all, holds little).
pub(crate) async fn tls_with(
    pki: &TestPki,
    app: &TestApp,
    alpn: &[u8],
    receive_buffer: Option<usize>,
) -> tokio_rustls::client::TlsStream<TcpStream> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_file(&pki.ca_path).unwrap())
        .unwrap();
    let mut config =
        rustls::ClientConfig::builder_with_provider(Arc::new(partner_api::edge::tls::provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
    config.alpn_protocols = vec![alpn.to_vec()];
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    if let Some(size) = receive_buffer {
        socket.set_recv_buffer_size(size as u32).unwrap();
    }
    let tcp = socket.connect(app.local_addr).await.unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(alpn));
    tls
}

fn ping_request(app: &TestApp) -> http::Request<()> {
    http::Request::get(format!(
        "https://localhost:{}/v1/ping",
        app.local_addr.port()
    ))
    .body(())
    .unwrap()
}

/// `GET /v1/ping` on `connection`, driven until answered 200; returns the client handle, which
/// keeps the connection open while it lives.
async fn ping_on(
    client: h2::client::SendRequest<bytes::Bytes>,
    connection: &mut h2::client::Connection<
        tokio_rustls::client::TlsStream<TcpStream>,
        bytes::Bytes,
    >,
    app: &TestApp,
) -> h2::client::SendRequest<bytes::Bytes> {
    let mut client = client.ready().await.unwrap();
    let (response, _) = client.send_request(ping_request(app), true).unwrap();
    tokio::select! {
        response = response => assert_eq!(response.unwrap().status(), 200),
        _ = &mut *connection => panic!("the connection ended"),
    }
    client
}

#[actix_web::test]
async fn the_server_announces_its_stream_limit_and_answers_within_it() {
    let pki = TestPki::new("h2-settings");
    let app = tls_app_with(&pki, |_| {}).await;
    let (client, mut connection) = h2_connect(&pki, &app).await;
    // The server's SETTINGS arrive once the connection is driven.
    let _client = ping_on(client, &mut connection, &app).await;
    assert_eq!(connection.max_concurrent_send_streams(), 128);
}

#[actix_web::test]
async fn an_operator_sets_the_stream_limit() {
    let pki = TestPki::new("h2-streams");
    let app = tls_app_with(&pki, |config| config.h2_max_concurrent_streams = 7).await;
    let (client, mut connection) = h2_connect(&pki, &app).await;
    let _client = ping_on(client, &mut connection, &app).await;
    assert_eq!(connection.max_concurrent_send_streams(), 7);
}

/// One HTTP/2 frame as it goes on the wire: the 9-byte head, then the payload.
pub(crate) fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut frame = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    frame.extend([kind, flags]);
    frame.extend(stream.to_be_bytes());
    frame.extend(payload);
    frame
}

/// The header block of `GET /v1/ping` to `app`: `:method GET` and `:scheme https` from the
/// static table, `:path` and `:authority` as literals that are not indexed (RFC 7541, 6.2.2).
fn ping_block(app: &TestApp) -> Vec<u8> {
    let authority = format!("localhost:{}", app.local_addr.port());
    let mut block = vec![0x82, 0x87, 0x04, 8];
    block.extend(b"/v1/ping");
    block.extend([0x01, authority.len() as u8]);
    block.extend(authority.as_bytes());
    block
}

/// The next frame read from `connection`: its type, flags, stream and payload.
pub(crate) async fn next_frame<S: tokio::io::AsyncRead + Unpin>(
    connection: &mut S,
) -> (u8, u8, u32, Vec<u8>) {
    use tokio::io::AsyncReadExt;
    let mut head = [0u8; 9];
    connection.read_exact(&mut head).await.unwrap();
    let length = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
    let mut payload = vec![0u8; length];
    connection.read_exact(&mut payload).await.unwrap();
    let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
    (head[3], head[4], stream, payload)
}

/// The dynamic table size updates (RFC 7541, 6.3) that open an HPACK header block.
fn table_size_updates(mut block: &[u8]) -> Vec<u64> {
    let mut sizes = Vec::new();
    while let Some(&first) = block.first()
        && first & 0b1110_0000 == 0b0010_0000
    {
        // An integer with a 5-bit prefix (RFC 7541, 5.1).
        let (mut size, mut shift, mut used) = (u64::from(first & 0x1f), 0, 1);
        if size == 0x1f {
            loop {
                let byte = block[used];
                used += 1;
                size += u64::from(byte & 0x7f) << shift;
                shift += 7;
                if byte & 0x80 == 0 {
                    break;
                }
            }
        }
        sizes.push(size);
        block = &block[used..];
    }
    sizes
}

/// The HPACK block of the response to `GET /v1/ping` on a raw HTTP/2 connection that opens with
/// one SETTINGS frame per entry of `header_table_sizes` (SETTINGS_HEADER_TABLE_SIZE, 0x1).
async fn response_block_after_table_sizes(header_table_sizes: &[u32]) -> Vec<u8> {
    use tokio::io::AsyncWriteExt;

    let pki = TestPki::new("h2-table-size");
    let app = tls_app_with(&pki, |_| {}).await;
    let mut tls = h2_tls(&pki, &app).await;
    // The preface, the SETTINGS, then `GET /v1/ping` on stream 1.
    let block = ping_block(&app);
    let mut wire = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    for size in header_table_sizes {
        let mut setting = vec![0, 1];
        setting.extend(size.to_be_bytes());
        wire.extend(frame(0x4, 0, 0, &setting));
    }
    wire.extend(frame(0x1, 0x4 | 0x1, 1, &block));
    tls.write_all(&wire).await.unwrap();

    // Frames until the response's HEADERS on stream 1, acknowledging the server's SETTINGS as
    // a client must. The server applies each of the client's SETTINGS as it sends its ACK,
    // before it reads the next frame, so all of them are applied before the request is read.
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let (kind, flags, stream, payload) = next_frame(&mut tls).await;
            match (kind, flags) {
                (0x4, flags) if flags & 0x1 == 0 => {
                    tls.write_all(&frame(0x4, 0x1, 0, &[])).await.unwrap()
                }
                (0x1, _) if stream == 1 => break payload,
                _ => {}
            }
        }
    })
    .await
    .expect("no response within 10 s")
}

#[actix_web::test]
async fn a_clients_header_table_size_does_not_size_the_servers() {
    // A client announcing a 1 GiB table: before, the server's table took the gigabyte,
    // announced it, and kept every distinct field it sent for as long as the connection
    // lived. Now it stays at HPACK's 4,096, which needs no announcement; the block starts with
    // `:status 200` (index 8).
    let block = response_block_after_table_sizes(&[1 << 30]).await;
    assert_eq!(table_size_updates(&block), Vec::<u64>::new());
    assert_eq!(block[0], 0x88);

    // Lowered to nothing, then raised to 1 GiB before the response: the server empties its
    // table, then grows it to 4,096 only (before: to the gigabyte), and says both.
    let block = response_block_after_table_sizes(&[0, 1 << 30]).await;
    assert_eq!(table_size_updates(&block), vec![0, 4096]);
}

#[actix_web::test]
async fn too_many_header_fields_get_431_on_both_protocols() {
    let pki = TestPki::new("h2-fields");
    let app = tls_app_with(&pki, |config| config.max_header_fields = 20).await;
    for (http1_only, version) in [(true, Version::HTTP_11), (false, Version::HTTP_2)] {
        let client = pki.client(&app, http1_only);
        let url = format!("https://localhost:{}/v1/ping", app.local_addr.port());
        let mut request = client.get(&url);
        for index in 0..25 {
            request = request.header(format!("x-field-{index}"), "v");
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.version(), version);
        assert_eq!(response.status().as_u16(), 431);
        assert_eq!(response.headers()["content-type"], "application/json");
        assert_eq!(response.headers()["cache-control"], "no-store");
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], "request_header_too_large");
        assert_eq!(body["error"]["type"], "invalid_request_error");
        // The listener's origin, whatever `Host` or `:authority` named.
        assert_eq!(
            body["error"]["doc_url"],
            format!(
                "https://{}/docs/errors#request_header_too_large",
                app.local_addr
            )
        );
        // reqwest adds accept and, on HTTP/1.1, host.
        let sent = if http1_only { 27 } else { 26 };
        assert_eq!(
            body["error"]["message"],
            format!("The request has {sent} header fields; at most 20 are accepted.")
        );
        let fine = client.get(&url).header("x-one", "v").send().await.unwrap();
        assert_eq!(fine.status().as_u16(), 200, "{version:?}");
    }
}

#[actix_web::test]
async fn header_bytes_over_the_limit_are_refused_on_both_protocols() {
    let pki = TestPki::new("h2-bytes");
    let app = tls_app_with(&pki, |config| config.max_header_bytes = 4096).await;
    for (http1_only, version) in [(true, Version::HTTP_11), (false, Version::HTTP_2)] {
        let client = pki.client(&app, http1_only);
        let url = format!("https://localhost:{}/v1/ping", app.local_addr.port());
        let response = client
            .get(&url)
            .header("x-big", "v".repeat(5000))
            .send()
            .await
            .unwrap();
        assert_eq!(response.version(), version);
        assert_eq!(response.status().as_u16(), 431, "{version:?}");
        // In the contract's shape on both: over HTTP/1.1 the middleware's answer; over HTTP/2
        // the `h2` layer stops keeping the fields and hands the request over marked, and the
        // HTTP layer answers it (it used to be a bare 431 with no body and no request id).
        let id = response.headers()["service-request-id"]
            .to_str()
            .unwrap()
            .to_owned();
        assert_eq!(
            response.headers()["cache-control"],
            "no-store",
            "{version:?}"
        );
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(
            body["error"]["code"], "request_header_too_large",
            "{version:?}"
        );
        assert_eq!(body["error"]["request_id"], id.as_str(), "{version:?}");
        let fine = client
            .get(&url)
            .header("x-small", "v".repeat(2000))
            .send()
            .await
            .unwrap();
        assert_eq!(fine.status().as_u16(), 200, "{version:?}");
    }
}

#[actix_web::test]
async fn an_idle_http2_connection_is_closed_after_the_keep_alive_time() {
    let pki = TestPki::new("h2-idle");
    let app = tls_app_with(&pki, |config| config.keep_alive_secs = 1).await;
    let (client, mut connection) = h2_connect(&pki, &app).await;
    // Kept to the end: dropping the last handle would close the connection from this side.
    let client = ping_on(client, &mut connection, &app).await;
    // Idle from here: the server sends GOAWAY and the connection ends. Without the close it
    // would stay open for as long as the client answers PINGs; the bound only keeps the test
    // from hanging.
    // The server ends it after GOAWAY; the client may see that as a clean end or, when it was
    // still writing its last PING acknowledgement, as a broken pipe.
    let ended = tokio::time::timeout(Duration::from_secs(10), connection).await;
    assert!(
        ended.is_ok(),
        "the idle connection is still open after 10 s"
    );
    assert!(
        client.ready().await.is_err(),
        "the server sent GOAWAY: no new stream"
    );
}

/// The whole body of an HTTP/2 response, read as JSON.
pub(crate) async fn json_body(response: http::Response<h2::RecvStream>) -> serde_json::Value {
    let mut body = response.into_body();
    let mut bytes = Vec::new();
    while let Some(chunk) = body.data().await {
        bytes.extend_from_slice(&chunk.unwrap());
    }
    serde_json::from_slice(&bytes).unwrap()
}

/// The sample lines of the admin listener's `/metrics` that start with `prefix`.
pub(crate) async fn metric_samples(app: &TestApp, prefix: &str) -> Vec<String> {
    let text = app
        .client
        .get(format!("{}/metrics", app.admin_address))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .filter(|line| line.starts_with(prefix))
        .map(str::to_owned)
        .collect()
}

/// A slow reader keeps its request in flight until the last byte of the answer is handed to
/// the connection, and the request's duration covers it. Over HTTP/2 the client's flow-control
/// window decides when the server may send more, so a client that reads nothing holds the
/// rest of a large document back for as long as it likes, whatever the kernel's buffers.
#[actix_web::test]
async fn a_slow_reader_is_in_flight_until_the_last_byte_and_its_duration_shows_it() {
    let pki = TestPki::new("h2-slow-reader");
    let app = tls_app_with(&pki, |_| {}).await;
    let (client, connection) = h2_connect(&pki, &app).await;
    let driving = actix_web::rt::spawn(async move {
        let _ = connection.await;
    });
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
    let length: usize = response.headers()["content-length"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let mut body = response.into_body();

    // Nothing read, so no window released: the server has sent a window's worth and waits.
    let hold = Duration::from_millis(1500);
    actix_web::rt::time::sleep(hold).await;
    assert_eq!(
        metric_samples(&app, "partner_api_http_requests_in_flight ").await,
        ["partner_api_http_requests_in_flight 1"]
    );
    let labels = r#"route="/docs/swagger-ui-bundle.js",method="GET",status_class="2xx""#;
    assert_eq!(
        metric_samples(&app, "partner_api_http_request_duration_seconds_count").await,
        Vec::<String>::new(),
        "recorded before its body was sent"
    );

    let mut received = 0;
    while let Some(chunk) = body.data().await {
        let chunk = chunk.unwrap();
        received += chunk.len();
        body.flow_control().release_capacity(chunk.len()).unwrap();
    }
    assert_eq!(received, length);
    assert!(length > 1_000_000, "{length}");
    assert_eq!(
        metric_samples(&app, "partner_api_http_requests_in_flight ").await,
        ["partner_api_http_requests_in_flight 0"]
    );
    // Recorded once, in the bucket of the time the client took (at least the hold), not the
    // time to the head.
    let buckets = metric_samples(&app, "partner_api_http_request_duration_seconds_bucket").await;
    for (bound, count) in [("1.0", 0), ("+Inf", 1)] {
        let line = format!(
            "partner_api_http_request_duration_seconds_bucket{{le=\"{bound}\",{labels}}} {count}"
        );
        assert!(buckets.contains(&line), "{line}\n{buckets:#?}");
    }
    // The service's own time, to the response head, is what the latency objective reads: the
    // reader's pace does not move it. The head was handed over before the client held back,
    // and the last byte after, so the two durations differ by at least the hold, however
    // long the head took on a busy machine.
    let heads = metric_samples(
        &app,
        "partner_api_http_response_head_duration_seconds_count",
    )
    .await;
    let line = format!(
        "partner_api_http_response_head_duration_seconds_count{{{}}} 1",
        r#"route="/docs/swagger-ui-bundle.js",method="GET""#
    );
    assert!(heads.contains(&line), "{line}\n{heads:#?}");
    let sum_of =
        |samples: Vec<String>| -> f64 { samples[0].rsplit(' ').next().unwrap().parse().unwrap() };
    let request =
        sum_of(metric_samples(&app, "partner_api_http_request_duration_seconds_sum").await);
    let head =
        sum_of(metric_samples(&app, "partner_api_http_response_head_duration_seconds_sum").await);
    assert!(
        request - head >= hold.as_secs_f64(),
        "{request} s, head {head} s"
    );
    driving.abort();
}

/// A PING acknowledgement nobody asked for is a client's doing: h2 notes it at debug, not in a
/// WARN line a client could write at will (one a frame, before).
#[actix_web::test]
async fn unsolicited_ping_acknowledgements_write_no_warn_line() {
    use tokio::io::AsyncWriteExt;

    let pki = TestPki::new("h2-ping-ack");
    let app = tls_app_with(&pki, |_| {}).await;
    let mut tls = h2_tls(&pki, &app).await;
    let mut wire = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    wire.extend(frame(0x4, 0, 0, &[]));
    // PING (type 6) with ACK (0x1) on stream 0, three payloads the server never sent.
    for n in 0..3u8 {
        wire.extend(frame(
            0x6,
            0x1,
            0,
            &[b'u', b'n', b'a', b's', b'k', b'e', b'd', n],
        ));
    }
    wire.extend(frame(0x1, 0x4 | 0x1, 1, &ping_block(&app)));
    tls.write_all(&wire).await.unwrap();
    // Frames are read in order: once stream 1 has its answer, the acknowledgements were read.
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let (kind, flags, stream, payload) = next_frame(&mut tls).await;
            match (kind, stream) {
                (0x4, 0) if flags & 0x1 == 0 => {
                    tls.write_all(&frame(0x4, 0x1, 0, &[])).await.unwrap()
                }
                (0x1, 1) => {
                    assert_eq!(payload[0], 0x80 | 8, "`:status 200`");
                    break;
                }
                (0x7, _) => panic!("GOAWAY: {payload:?}"),
                _ => {}
            }
        }
    })
    .await
    .expect("the ping answered within 10 s");
    let lines = crate::helpers::log_lines_containing("PING ack that we never sent");
    assert!(
        lines.iter().all(|line| !line.starts_with("WARN")),
        "{lines:#?}"
    );
}

/// HTTP/2 carries the scheme in `:scheme`, which nothing checked: `foo` was served. Only
/// `http` and `https` are.
#[actix_web::test]
async fn an_http2_request_with_a_foreign_scheme_is_refused() {
    let pki = TestPki::new("h2-scheme");
    let app = tls_app_with(&pki, |_| {}).await;
    let (client, connection) = h2_connect(&pki, &app).await;
    let driving = actix_web::rt::spawn(async move {
        let _ = connection.await;
    });
    let mut client = client.ready().await.unwrap();
    let request = http::Request::get(format!("foo://localhost:{}/v1/ping", app.local_addr.port()))
        .body(())
        .unwrap();
    let (response, _) = client.send_request(request, true).unwrap();
    let response = response.await.unwrap();
    assert_eq!(response.status(), 400);
    let json = json_body(response).await;
    assert_eq!(json["error"]["code"], "request_invalid");
    assert_eq!(
        json["error"]["message"],
        "The request's scheme must be http or https."
    );
    driving.abort();
}

/// A header value whose Huffman coding breaks part way (here: the end-of-string symbol inside
/// the string) ends its connection with a GOAWAY. What it had decoded so far must go
/// with it: the decoder's scratch is shared by the worker's connections, and a leftover
/// `/v1/x/attacker#` once led the next client's `:path` on the same worker, sending its request
/// where the attacker chose.
#[actix_web::test]
async fn a_broken_huffman_string_leaves_nothing_in_the_next_clients_request() {
    use tokio::io::AsyncWriteExt;

    let pki = TestPki::new("h2-huffman-leftover");
    let app = tls_app_with(&pki, |_| {}).await;

    let mut attacker = h2_tls(&pki, &app).await;
    let mut poisoned = Vec::new();
    // "/v1/x/attacker#" Huffman-coded (RFC 7541, Appendix B), its last byte padded with ones,
    // then thirty-two ones: the end-of-string symbol, which a string must not hold.
    let mut bits = 0u64;
    let mut count = 0u32;
    for &(code, length) in HUFFMAN_ATTACKER_PATH {
        bits = (bits << length) | u64::from(code);
        count += length;
        while count >= 8 {
            poisoned.push((bits >> (count - 8)) as u8);
            count -= 8;
        }
    }
    if count > 0 {
        poisoned.push(((bits << (8 - count)) as u8) | (0xff >> count));
    }
    poisoned.extend([0xff; 4]);
    // `:method GET`, `:scheme https`, then `:path` (static name 4) as a literal that is not
    // indexed, its value Huffman-coded (the high bit of its length).
    let mut block = vec![0x82, 0x87, 0x04, 0x80 | poisoned.len() as u8];
    block.extend(&poisoned);
    let mut wire = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    wire.extend(frame(0x4, 0, 0, &[]));
    wire.extend(frame(0x1, 0x4 | 0x1, 1, &block));
    attacker.write_all(&wire).await.unwrap();
    // The server answers with GOAWAY (type 7), then closes. `h2` gives every HPACK failure as
    // PROTOCOL_ERROR (1), where RFC 9113 (4.3) names COMPRESSION_ERROR: upstream's choice,
    // kept, since either ends the connection.
    let goaway_error = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let (kind, _, _, payload) = next_frame(&mut attacker).await;
            if kind == 0x7 {
                break u32::from_be_bytes(payload[4..8].try_into().unwrap());
            }
        }
    })
    .await
    .expect("a GOAWAY within 10 s");
    assert_eq!(goaway_error, 0x1, "PROTOCOL_ERROR");

    // The next client on the same (only) worker: the `h2` crate's client Huffman-codes its
    // `:path`, and its ping is answered 200, not 404 for `/v1/x/attacker`.
    let (client, mut connection) = h2_connect(&pki, &app).await;
    ping_on(client, &mut connection, &app).await;
}

/// The Huffman codes (RFC 7541, Appendix B) of "/v1/x/attacker#", as (code, bits).
const HUFFMAN_ATTACKER_PATH: &[(u32, u32)] = &[
    (0x18, 6),   // '/'
    (0x77, 7),   // 'v'
    (0x1, 5),    // '1'
    (0x18, 6),   // '/'
    (0x79, 7),   // 'x'
    (0x18, 6),   // '/'
    (0x3, 5),    // 'a'
    (0x9, 5),    // 't'
    (0x9, 5),    // 't'
    (0x3, 5),    // 'a'
    (0x4, 5),    // 'c'
    (0x75, 7),   // 'k'
    (0x5, 5),    // 'e'
    (0x2c, 6),   // 'r'
    (0xffa, 12), // '#'
];

/// An answer's bytes leave at once: every socket the service accepts has TCP_NODELAY set, over
/// TLS with either protocol, over plain HTTP, and on the admin listener. With Nagle's algorithm
/// on, a write made while an earlier one was unacknowledged waited for the client's delayed ACK
/// (up to 40 ms): the first answer on a new HTTP/2 connection took 42-46 ms where it takes 2.
#[actix_web::test]
async fn answers_are_not_held_back_for_the_clients_ack() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    async fn ping_http1<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin>(stream: &mut S) {
        stream
            .write_all(b"GET /v1/ping HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .await
            .unwrap();
        let mut answer = Vec::new();
        while !answer.ends_with(br#"{"object":"ping","pong":true}"#) {
            let mut chunk = [0; 4096];
            let read = stream.read(&mut chunk).await.unwrap();
            assert_ne!(read, 0, "closed before the answer: {answer:?}");
            answer.extend_from_slice(&chunk[..read]);
        }
        assert!(answer.starts_with(b"HTTP/1.1 200 OK\r\n"), "{answer:?}");
    }

    let pki = TestPki::new("nodelay");
    let app = tls_app_with(&pki, |_| {}).await;
    let mut http1 = tls_with(&pki, &app, b"http/1.1", None).await;
    ping_http1(&mut http1).await;
    let client = http1.get_ref().0.local_addr().unwrap();
    assert!(
        accepted_socket_nodelay(app.local_addr, client),
        "HTTP/1.1 over TLS"
    );

    let tls = h2_tls(&pki, &app).await;
    let client = tls.get_ref().0.local_addr().unwrap();
    let (h2_client, mut connection) = h2::client::handshake(tls).await.unwrap();
    let _h2_client = ping_on(h2_client, &mut connection, &app).await;
    assert!(
        accepted_socket_nodelay(app.local_addr, client),
        "HTTP/2 over TLS"
    );

    let plain = spawn_app().await;
    let admin: std::net::SocketAddr = plain.admin_address["http://".len()..].parse().unwrap();
    for (server, what) in [
        (plain.local_addr, "plain HTTP"),
        (admin, "the admin listener"),
    ] {
        let mut stream = TcpStream::connect(server).await.unwrap();
        if server == admin {
            stream
                .write_all(b"GET /livez HTTP/1.1\r\nHost: localhost\r\n\r\n")
                .await
                .unwrap();
            let mut head = [0; 17];
            stream.read_exact(&mut head).await.unwrap();
            assert_eq!(&head, b"HTTP/1.1 200 OK\r\n");
        } else {
            ping_http1(&mut stream).await;
        }
        let client = stream.local_addr().unwrap();
        assert!(accepted_socket_nodelay(server, client), "{what}");
    }
}
