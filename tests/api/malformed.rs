//! HTTP/2 by the book: a malformed request (RFC 9113, 8.1.1) is a stream error of type
//! PROTOCOL_ERROR, and the server may send a response first. Each kind of malformed request is
//! answered with the contract's 400 `request_invalid`, whose last frame does not end the stream,
//! and then the stream is reset with `RST_STREAM(PROTOCOL_ERROR)`: a client reads the error in
//! the contract's shape and the protocol's rule holds. Raw frames over TLS, one test per kind.

use std::time::Duration;

use tokio::io::AsyncWriteExt;

use crate::helpers::TestApp;
use crate::http2::{frame, h2_tls, metric_samples, next_frame, tls_app_with};
use crate::tls::TestPki;

/// HEADERS (type 1), DATA (type 0) and RST_STREAM (type 3), and the flags that matter here.
const HEADERS: u8 = 0x1;
const DATA: u8 = 0x0;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
/// CONTINUATION (type 9): the rest of a header block.
const CONTINUATION: u8 = 0x9;
/// RFC 9113, 7: PROTOCOL_ERROR and FLOW_CONTROL_ERROR.
const PROTOCOL_ERROR: u32 = 0x1;
const FLOW_CONTROL_ERROR: u32 = 0x3;

/// What came back on stream 1: the response head's HPACK block, the body, whether any frame
/// ended the stream, and the error code of the RST_STREAM that closed it.
#[derive(Debug)]
struct Answer {
    head_block: Vec<u8>,
    body: Vec<u8>,
    ended_by_a_frame: bool,
    reset: Option<u32>,
}

/// The header block's fields, as HPACK writes them without touching the dynamic table.
mod field {
    /// `:method GET`, `:method POST`, `:scheme https`: entries 2, 3 and 7 of the static table.
    pub const GET: &[u8] = &[0x82];
    pub const POST: &[u8] = &[0x83];
    pub const HTTPS: &[u8] = &[0x87];

    /// A literal whose name is entry `index` (under 15) of the static table, not indexed (RFC
    /// 7541, 6.2.2): `:authority` is 1, `:path` 4.
    pub fn indexed_name(index: u8, value: &str) -> Vec<u8> {
        assert!(index < 15, "one byte holds the index");
        let mut field = vec![index, value.len() as u8];
        field.extend(value.as_bytes());
        field
    }

    /// A literal with a new name, not indexed.
    pub fn literal(name: &str, value: &str) -> Vec<u8> {
        let mut field = vec![0x00, name.len() as u8];
        field.extend(name.as_bytes());
        field.push(value.len() as u8);
        field.extend(value.as_bytes());
        field
    }

    pub fn path(value: &str) -> Vec<u8> {
        indexed_name(4, value)
    }

    pub fn content_length(value: &str) -> Vec<u8> {
        literal("content-length", value)
    }
}

fn authority(app: &TestApp) -> Vec<u8> {
    field::indexed_name(1, &format!("localhost:{}", app.local_addr.port()))
}

/// Sends the connection preface, an empty SETTINGS and `frames` (built for `app`) in one write,
/// and reads the answer on stream 1.
async fn answer_to(frames: impl FnOnce(&TestApp) -> Vec<u8>) -> Answer {
    let pki = TestPki::new("h2-malformed");
    let app = tls_app_with(&pki, |_| {}).await;
    let mut tls = h2_tls(&pki, &app).await;
    tls.write_all(&preface_and(frames(&app))).await.unwrap();
    read_answer(&mut tls).await
}

fn preface_and(frames: Vec<u8>) -> Vec<u8> {
    preface_with_settings_and(&[], frames)
}

/// The preface, a SETTINGS frame carrying `settings` (6 bytes each), then `frames`.
fn preface_with_settings_and(settings: &[u8], frames: Vec<u8>) -> Vec<u8> {
    let mut wire = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    wire.extend(frame(0x4, 0, 0, settings));
    wire.extend(frames);
    wire
}

/// SETTINGS_INITIAL_WINDOW_SIZE (4) 0: the client reads no response body until it says so.
const NO_WINDOW: [u8; 6] = [0, 4, 0, 0, 0, 0];

/// Reads stream 1 until it is reset, or until a second after a frame ended it (within 10 s in
/// all), acknowledging the server's SETTINGS.
async fn read_answer(tls: &mut tokio_rustls::client::TlsStream<tokio::net::TcpStream>) -> Answer {
    let mut answer = Answer {
        head_block: Vec::new(),
        body: Vec::new(),
        ended_by_a_frame: false,
        reset: None,
    };
    let read = async {
        loop {
            let next = if answer.ended_by_a_frame {
                match tokio::time::timeout(Duration::from_secs(1), next_frame(tls)).await {
                    Ok(next) => next,
                    Err(_) => break,
                }
            } else {
                next_frame(tls).await
            };
            let (kind, flags, stream, payload) = next;
            match (kind, stream) {
                (0x4, 0) if flags & 0x1 == 0 => {
                    tls.write_all(&frame(0x4, 0x1, 0, &[])).await.unwrap()
                }
                (HEADERS, 1) => {
                    answer.head_block = payload;
                    answer.ended_by_a_frame |= flags & END_STREAM != 0;
                }
                (DATA, 1) => {
                    answer.body.extend(payload);
                    answer.ended_by_a_frame |= flags & END_STREAM != 0;
                }
                (0x3, 1) => {
                    answer.reset = Some(u32::from_be_bytes(payload[..4].try_into().unwrap()));
                    break;
                }
                (0x7, _) => panic!("GOAWAY instead of a stream error: {payload:?}"),
                _ => {}
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("stream 1 reset or ended within 10 s");
    answer
}

/// HEADERS on stream 1 carrying `block`, with `flags`.
fn headers(block: &[u8], flags: u8) -> Vec<u8> {
    frame(HEADERS, flags, 1, block)
}

/// The whole request as one HEADERS frame that ends the stream.
fn request(parts: &[&[u8]]) -> Vec<u8> {
    headers(&parts.concat(), END_HEADERS | END_STREAM)
}

/// The contract's 400 `request_invalid` with a request id, no frame ending the stream, then
/// `RST_STREAM(PROTOCOL_ERROR)`.
fn assert_answered_then_reset(answer: &Answer) {
    assert_eq!(
        answer.reset,
        Some(PROTOCOL_ERROR),
        "RST_STREAM(PROTOCOL_ERROR): {answer:?}"
    );
    assert!(
        !answer.ended_by_a_frame,
        "no frame ends the stream: {answer:?}"
    );
    assert_eq!(
        answer.head_block.first(),
        Some(&(0x80 | 12)),
        "`:status 400`"
    );
    let json: serde_json::Value = serde_json::from_slice(&answer.body).unwrap();
    assert_eq!(json["error"]["type"], "invalid_request_error");
    assert_eq!(json["error"]["code"], "request_invalid");
    assert!(
        json["error"]["request_id"]
            .as_str()
            .unwrap()
            .starts_with("req_")
    );
}

#[actix_web::test]
async fn a_pseudo_header_after_a_regular_field() {
    let answer = answer_to(|app| {
        let user_agent = field::literal("user-agent", "raw");
        request(&[
            field::GET,
            field::HTTPS,
            &field::path("/v1/ping"),
            &user_agent,
            &authority(app),
        ])
    })
    .await;
    assert_answered_then_reset(&answer);
}

#[actix_web::test]
async fn a_connection_specific_field() {
    let answer = answer_to(|app| {
        let connection = field::literal("connection", "keep-alive");
        request(&[
            field::GET,
            field::HTTPS,
            &field::path("/v1/ping"),
            &authority(app),
            &connection,
        ])
    })
    .await;
    assert_answered_then_reset(&answer);
}

#[actix_web::test]
async fn te_other_than_trailers() {
    let answer = answer_to(|app| {
        let te = field::literal("te", "gzip");
        request(&[
            field::GET,
            field::HTTPS,
            &field::path("/v1/ping"),
            &authority(app),
            &te,
        ])
    })
    .await;
    assert_answered_then_reset(&answer);
}

#[actix_web::test]
async fn an_empty_path() {
    let answer =
        answer_to(|app| request(&[field::GET, field::HTTPS, &field::path(""), &authority(app)]))
            .await;
    assert_answered_then_reset(&answer);
}

#[actix_web::test]
async fn a_missing_path() {
    let answer = answer_to(|app| request(&[field::GET, field::HTTPS, &authority(app)])).await;
    assert_answered_then_reset(&answer);
}

#[actix_web::test]
async fn a_missing_method() {
    let answer =
        answer_to(|app| request(&[field::HTTPS, &field::path("/v1/ping"), &authority(app)])).await;
    assert_answered_then_reset(&answer);
}

#[actix_web::test]
async fn a_missing_scheme() {
    let answer =
        answer_to(|app| request(&[field::GET, &field::path("/v1/ping"), &authority(app)])).await;
    assert_answered_then_reset(&answer);
}

#[actix_web::test]
async fn a_pseudo_header_given_twice() {
    let answer = answer_to(|app| {
        request(&[
            field::GET,
            field::GET,
            field::HTTPS,
            &field::path("/v1/ping"),
            &authority(app),
        ])
    })
    .await;
    assert_answered_then_reset(&answer);
}

/// A HEAD found malformed in its first HEADERS: the answer keeps to HEAD (no body), then the
/// reset. The stand-in that replaced the request used to be a GET, and the 400 carried a body.
#[actix_web::test]
async fn a_malformed_head_request_is_answered_without_a_body() {
    let answer = answer_to(|app| {
        request(&[
            &field::indexed_name(2, "HEAD"),
            field::HTTPS,
            &field::path("/v1/ping"),
            &authority(app),
            &field::literal("te", "gzip"),
        ])
    })
    .await;
    assert_eq!(answer.reset, Some(PROTOCOL_ERROR), "{answer:?}");
    assert_eq!(
        answer.head_block.first(),
        Some(&(0x80 | 12)),
        "`:status 400`"
    );
    assert_eq!(answer.body, b"", "{answer:?}");
    assert!(!answer.ended_by_a_frame, "{answer:?}");
}

/// RFC 9113, 8.3.1: every request but CONNECT has `:path`, with `:authority` or without. Without
/// `:authority` the request used to be served with an empty path (a 404).
#[actix_web::test]
async fn a_request_without_a_path_is_answered_then_reset_even_without_an_authority() {
    let answer = answer_to(|_| request(&[field::GET, field::HTTPS])).await;
    assert_answered_then_reset(&answer);
}

/// A header block split across HEADERS and CONTINUATION where the first frame ends inside a
/// field: a field before the split that makes the request malformed still does. The finding
/// used to be lost with the split, the offending field dropped and the rest served as valid
/// (the first of two `:path` fields won: 200 for `/v1/ping`).
async fn split_block_answer(malformed: Vec<u8>) -> Answer {
    answer_to(|app| {
        let padding = field::literal("x-padding", "abcdef");
        let mut first = [
            field::GET,
            field::HTTPS,
            &field::path("/v1/ping"),
            &authority(app),
            &malformed,
        ]
        .concat();
        // The first frame ends three bytes into the padding's value.
        let split = padding.len() - 3;
        first.extend(&padding[..split]);
        let mut frames = headers(&first, END_STREAM);
        frames.extend(frame(CONTINUATION, END_HEADERS, 1, &padding[split..]));
        frames
    })
    .await
}

#[actix_web::test]
async fn a_pseudo_header_given_twice_before_a_continuation() {
    let answer = split_block_answer(field::path("/v1/other")).await;
    assert_answered_then_reset(&answer);
}

#[actix_web::test]
async fn a_connection_specific_field_before_a_continuation() {
    let answer = split_block_answer(field::literal("connection", "close")).await;
    assert_answered_then_reset(&answer);
}

/// A server with a send deadline of `send_timeout_secs`, and a connection to it from a client
/// that opens no window, which has sent `method /v1/ping` with `te: gzip` (malformed) and
/// `end_stream` as its HEADERS' last flag; the server and its certificates live as long as
/// the caller holds them.
async fn malformed_to_a_client_without_window(
    name: &str,
    send_timeout_secs: u64,
    method: &[u8],
    end_stream: u8,
) -> (
    TestPki,
    TestApp,
    tokio_rustls::client::TlsStream<tokio::net::TcpStream>,
) {
    let pki = TestPki::new(name);
    let app = tls_app_with(&pki, |config| config.send_timeout_secs = send_timeout_secs).await;
    let mut tls = h2_tls(&pki, &app).await;
    let block = [
        method,
        field::HTTPS,
        &field::path("/v1/ping"),
        &authority(&app),
        &field::literal("te", "gzip"),
    ]
    .concat();
    tls.write_all(&preface_with_settings_and(
        &NO_WINDOW,
        headers(&block, END_HEADERS | end_stream),
    ))
    .await
    .unwrap();
    (pki, app, tls)
}

/// A malformed request's answer held by a client that opens no window: when the send deadline
/// gives up on it, the stream still ends in PROTOCOL_ERROR (it used to be CANCEL).
#[actix_web::test]
async fn an_answer_the_client_does_not_read_still_ends_in_protocol_error() {
    let (_pki, _app, mut tls) =
        malformed_to_a_client_without_window("h2-malformed-held", 1, field::GET, END_STREAM).await;
    let answer = read_answer(&mut tls).await;
    assert_eq!(answer.reset, Some(PROTOCOL_ERROR), "{answer:?}");
    assert_eq!(
        answer.head_block.first(),
        Some(&(0x80 | 12)),
        "`:status 400`"
    );
    assert_eq!(answer.body, b"", "no window, no body");
    assert!(!answer.ended_by_a_frame, "{answer:?}");
}

/// Until its reset, a malformed request's body is not read but still spends the stream's
/// window (1 MiB): a client whose answer waits could otherwise make the server read and
/// discard data at line rate until the send deadline. Past the window the stream is reset
/// with FLOW_CONTROL_ERROR, long before that deadline (60 s here).
#[actix_web::test]
async fn a_malformed_request_body_is_held_to_its_stream_window() {
    let (_pki, _app, mut tls) =
        malformed_to_a_client_without_window("h2-malformed-window", 60, field::POST, 0).await;
    // The server has read the preface and opened its connection window before the body.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let chunk = vec![b'x'; 16_384];
    // 65 frames of 16 KiB: one more than the stream's 1 MiB window, within the 2 MiB the
    // connection's window gives (the discarded bytes are given back to it).
    for _ in 0..65 {
        tls.write_all(&frame(DATA, 0, 1, &chunk)).await.unwrap();
    }
    let answer = read_answer(&mut tls).await;
    assert_eq!(answer.reset, Some(FLOW_CONTROL_ERROR), "{answer:?}");
    assert_eq!(
        answer.head_block.first(),
        Some(&(0x80 | 12)),
        "`:status 400`"
    );
}

/// Trailers must end the stream (RFC 9113, 8.1): a second HEADERS without END_STREAM makes
/// the request malformed. The request itself was well formed and handed over; found malformed
/// before the service took it, it is answered as a malformed request, not by the endpoint.
#[actix_web::test]
async fn a_second_headers_without_end_stream() {
    let answer = answer_to(|app| {
        let mut frames = headers(
            &[
                field::GET,
                field::HTTPS,
                &field::path("/v1/ping"),
                &authority(app),
            ]
            .concat(),
            END_HEADERS,
        );
        frames.extend(headers(&field::literal("x-trailer", "1"), END_HEADERS));
        frames
    })
    .await;
    assert_answered_then_reset(&answer);
}

/// RFC 9113, 8.1.1: DATA that add up to more than `content-length` make the request malformed.
#[actix_web::test]
async fn a_body_longer_than_its_content_length() {
    let answer = answer_to(|app| {
        let block = [
            field::POST,
            field::HTTPS,
            &field::path("/v1/ping"),
            &authority(app),
            &field::content_length("1"),
        ]
        .concat();
        let mut frames = headers(&block, END_HEADERS);
        frames.extend(frame(DATA, END_STREAM, 1, b"xy"));
        frames
    })
    .await;
    assert_answered_then_reset(&answer);
}

/// And DATA that end the stream short of `content-length`.
#[actix_web::test]
async fn a_body_shorter_than_its_content_length() {
    let answer = answer_to(|app| {
        let block = [
            field::POST,
            field::HTTPS,
            &field::path("/v1/ping"),
            &authority(app),
            &field::content_length("5"),
        ]
        .concat();
        let mut frames = headers(&block, END_HEADERS);
        frames.extend(frame(DATA, END_STREAM, 1, b"xy"));
        frames
    })
    .await;
    assert_answered_then_reset(&answer);
}

/// A request found malformed after the service took it (here: its body turns out longer than
/// its `content-length` while the endpoint waits for it) is not answered as a malformed
/// request: the endpoint reading its body learns that the body broke and answers, in the
/// catalogue's words, and the stream still ends with PROTOCOL_ERROR rather than END_STREAM.
#[actix_web::test]
async fn a_body_found_malformed_while_its_endpoint_reads_it() {
    let pki = TestPki::new("h2-malformed-late");
    let app = tls_app_with(&pki, |_| {}).await;
    let mut tls = h2_tls(&pki, &app).await;
    let block = [
        field::POST,
        field::HTTPS,
        &field::path("/test/echo"),
        &authority(&app),
        &field::literal("content-type", "application/json"),
        &field::content_length("30"),
    ]
    .concat();
    let mut frames = headers(&block, END_HEADERS);
    frames.extend(frame(DATA, 0, 1, br#"{"name_id":"x","#));
    tls.write_all(&preface_and(frames)).await.unwrap();
    // The endpoint has the request and waits for the rest of its body.
    tokio::time::sleep(Duration::from_millis(300)).await;
    tls.write_all(&frame(
        DATA,
        END_STREAM,
        1,
        br#""count":1} and more than promised"#,
    ))
    .await
    .unwrap();
    let answer = read_answer(&mut tls).await;
    assert_eq!(answer.reset, Some(PROTOCOL_ERROR), "{answer:?}");
    assert!(
        !answer.ended_by_a_frame,
        "no frame ends the stream: {answer:?}"
    );
    assert_eq!(
        answer.head_block.first(),
        Some(&(0x80 | 12)),
        "`:status 400`"
    );
    let json: serde_json::Value = serde_json::from_slice(&answer.body).unwrap();
    assert_eq!(json["error"]["type"], "invalid_request_error");
    assert_eq!(json["error"]["code"], "request_invalid");
    assert!(
        json["error"]["request_id"]
            .as_str()
            .unwrap()
            .starts_with("req_")
    );
    // The endpoint answered it (a request answered as malformed never reaches the service,
    // so it would not be counted under its route).
    assert_eq!(
        metric_samples(&app, "partner_api_http_requests_total{route=\"/test/echo\"").await,
        [r#"partner_api_http_requests_total{route="/test/echo",method="POST",status="400"} 1"#]
    );
}
