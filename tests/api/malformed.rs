//! HTTP/2 by the book: a malformed request (RFC 9113, 8.1.1) is a stream error of type
//! PROTOCOL_ERROR. Each kind of malformed request is reset with `RST_STREAM(PROTOCOL_ERROR)` and
//! nothing else, as upstream h2 sends it (the RFC lets a server answer first; a reset is not an
//! answer the contract shapes), and the connection goes on serving its other streams. Raw
//! frames over TLS, one test per kind.

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
/// RFC 9113, 7: PROTOCOL_ERROR.
const PROTOCOL_ERROR: u32 = 0x1;

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

/// `RST_STREAM(PROTOCOL_ERROR)` on stream 1 and nothing before it: no answer, no frame that
/// ends the stream, no GOAWAY.
fn assert_reset(answer: &Answer) {
    assert_eq!(
        answer.reset,
        Some(PROTOCOL_ERROR),
        "RST_STREAM(PROTOCOL_ERROR): {answer:?}"
    );
    assert!(answer.head_block.is_empty(), "no answer: {answer:?}");
    assert!(answer.body.is_empty(), "no answer: {answer:?}");
    assert!(!answer.ended_by_a_frame, "{answer:?}");
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
    assert_reset(&answer);
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
    assert_reset(&answer);
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
    assert_reset(&answer);
}

#[actix_web::test]
async fn an_empty_path() {
    let answer =
        answer_to(|app| request(&[field::GET, field::HTTPS, &field::path(""), &authority(app)]))
            .await;
    assert_reset(&answer);
}

#[actix_web::test]
async fn a_missing_path() {
    let answer = answer_to(|app| request(&[field::GET, field::HTTPS, &authority(app)])).await;
    assert_reset(&answer);
}

#[actix_web::test]
async fn a_missing_method() {
    let answer =
        answer_to(|app| request(&[field::HTTPS, &field::path("/v1/ping"), &authority(app)])).await;
    assert_reset(&answer);
}

#[actix_web::test]
async fn a_missing_scheme() {
    let answer =
        answer_to(|app| request(&[field::GET, &field::path("/v1/ping"), &authority(app)])).await;
    assert_reset(&answer);
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
    assert_reset(&answer);
}

/// RFC 9113, 8.3.1: every request but CONNECT has `:path`, with `:authority` or without. Without
/// `:authority` the request used to be served with an empty path (a 404).
#[actix_web::test]
async fn a_request_without_a_path_is_reset_even_without_an_authority() {
    let answer = answer_to(|_| request(&[field::GET, field::HTTPS])).await;
    assert_reset(&answer);
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
    assert_reset(&answer);
}

#[actix_web::test]
async fn a_connection_specific_field_before_a_continuation() {
    let answer = split_block_answer(field::literal("connection", "close")).await;
    assert_reset(&answer);
}

/// Trailers must end the stream (RFC 9113, 8.1): a second HEADERS without END_STREAM makes
/// the request malformed.
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
    assert_reset(&answer);
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
    assert_reset(&answer);
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
    assert_reset(&answer);
}

/// A request found malformed after the service took it (here: its body turns out longer than
/// its `content-length` while the endpoint waits for it) is reset too; the endpoint reading
/// its body learns that the body broke, and its answer, which nobody receives, is counted.
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
    assert_reset(&answer);
    assert_eq!(
        metric_samples(&app, "partner_api_http_requests_total{route=\"/test/echo\"").await,
        [r#"partner_api_http_requests_total{route="/test/echo",method="POST",status="400"} 1"#]
    );
}

/// `POST /test/echo` with a JSON body of 25 bytes, its HEADERS not ending the stream.
fn echo_head(app: &TestApp, extra: &[&[u8]]) -> Vec<u8> {
    let mut block = [
        field::POST,
        field::HTTPS,
        &field::path("/test/echo"),
        &authority(app),
        &field::literal("content-type", "application/json"),
    ]
    .concat();
    block.extend(extra.concat());
    headers(&block, END_HEADERS)
}

const ECHO_BODY: &[u8] = br#"{"name_id":"x","count":1}"#;

/// RFC 9113, 8.1: trailers MUST NOT include pseudo-header fields. Trailers made only of them
/// used to be dropped unread and the request served (200 from the echo).
#[actix_web::test]
async fn trailers_with_a_pseudo_header_field_are_reset() {
    let answer = answer_to(|app| {
        let mut frames = echo_head(app, &[]);
        frames.extend(frame(DATA, 0, 1, ECHO_BODY));
        frames.extend(headers(
            &[field::POST, &field::path("/v1/ping")].concat(),
            END_HEADERS | END_STREAM,
        ));
        frames
    })
    .await;
    assert_reset(&answer);
}

/// RFC 9110, 8.6 and RFC 9113, 8.1.1: two `content-length` fields that disagree leave the
/// length unknown. The request used to be served when its body matched the first.
#[actix_web::test]
async fn content_length_fields_that_disagree_are_reset() {
    let answer = answer_to(|app| {
        let length = ECHO_BODY.len().to_string();
        let mut frames = echo_head(
            app,
            &[
                &field::content_length(&length),
                &field::content_length("99"),
            ],
        );
        frames.extend(frame(DATA, END_STREAM, 1, ECHO_BODY));
        frames
    })
    .await;
    assert_reset(&answer);
}

/// RFC 9113, 8.2.1: a NUL in a field value makes the request malformed, a stream error: the
/// rest of its header block is still decoded (a field after it, added to the HPACK table, is
/// there for the next request), the connection goes on, and a request on stream 3 that names
/// that field by its table index is served. The whole connection used to end (GOAWAY),
/// failing every other stream on it.
#[actix_web::test]
async fn a_nul_in_a_field_value_resets_only_its_stream() {
    // `x-after: 1`, a literal with incremental indexing (RFC 7541, 6.2.1): the first entry of
    // the dynamic table, index 62.
    let mut indexed = vec![0x40, 7];
    indexed.extend(b"x-after");
    indexed.extend([1, b'1']);
    let answers = two_streams(
        "h2-malformed-nul",
        &[&field::literal("x-note", "a\0b"), &indexed],
        &[0x80 | 62],
    )
    .await;
    assert_eq!(answers, (Some(PROTOCOL_ERROR), Some(0x80 | 8)));
}

/// A header block whose first frame ends just after a malformed field (`connection`): the
/// block goes on in a CONTINUATION, its stream is reset where it ends, and the connection
/// goes on. The stream used to be reset at the first frame, and the CONTINUATION that followed
/// ended the connection.
#[actix_web::test]
async fn a_malformed_field_ending_a_frame_resets_only_its_stream() {
    let pki = TestPki::new("h2-malformed-boundary");
    let app = tls_app_with(&pki, |_| {}).await;
    let mut tls = h2_tls(&pki, &app).await;
    let ping = ping_fields(&app);
    let mut frames = headers(
        &[&ping, &field::literal("connection", "close")[..]].concat(),
        END_STREAM,
    );
    frames.extend(frame(
        CONTINUATION,
        END_HEADERS,
        1,
        &field::literal("x-padding", "abcdef"),
    ));
    frames.extend(frame(HEADERS, END_HEADERS | END_STREAM, 3, &ping));
    tls.write_all(&preface_and(frames)).await.unwrap();
    assert_eq!(
        answers_on_streams_1_and_3(&mut tls).await,
        (Some(PROTOCOL_ERROR), Some(0x80 | 8))
    );
}

/// `GET /v1/ping` of `app`, as header fields.
fn ping_fields(app: &TestApp) -> Vec<u8> {
    [
        field::GET,
        field::HTTPS,
        &field::path("/v1/ping"),
        &authority(app),
    ]
    .concat()
}

/// Stream 1: a ping with `extra` fields; stream 3: a ping with `then`; sent together. What
/// came back on each (see [`answers_on_streams_1_and_3`]).
async fn two_streams(name: &str, extra: &[&[u8]], then: &[u8]) -> (Option<u32>, Option<u8>) {
    let pki = TestPki::new(name);
    let app = tls_app_with(&pki, |_| {}).await;
    let mut tls = h2_tls(&pki, &app).await;
    let ping = ping_fields(&app);
    let mut first = vec![&ping[..]];
    first.extend(extra);
    let mut frames = request(&first);
    frames.extend(frame(
        HEADERS,
        END_HEADERS | END_STREAM,
        3,
        &[&ping[..], then].concat(),
    ));
    tls.write_all(&preface_and(frames)).await.unwrap();
    answers_on_streams_1_and_3(&mut tls).await
}

/// Reads until stream 1 is reset and stream 3 has its answer's head (within 10 s): the reset's
/// error code and the first byte of stream 3's HPACK block (`:status 200` is `0x88`). A GOAWAY
/// or an answer on stream 1 fails.
async fn answers_on_streams_1_and_3(
    tls: &mut tokio_rustls::client::TlsStream<tokio::net::TcpStream>,
) -> (Option<u32>, Option<u8>) {
    let mut reset = None;
    let mut served = None;
    tokio::time::timeout(Duration::from_secs(10), async {
        while reset.is_none() || served.is_none() {
            let (kind, flags, stream, payload) = next_frame(tls).await;
            match (kind, stream) {
                (0x4, 0) if flags & 0x1 == 0 => {
                    tls.write_all(&frame(0x4, 0x1, 0, &[])).await.unwrap()
                }
                (0x3, 1) => reset = Some(u32::from_be_bytes(payload[..4].try_into().unwrap())),
                (HEADERS, 3) => served = Some(payload[0]),
                (HEADERS, 1) => panic!("stream 1 answered: {payload:?}"),
                (0x7, _) => panic!("GOAWAY instead of a stream error: {payload:?}"),
                _ => {}
            }
        }
    })
    .await
    .expect("stream 1 reset and stream 3 answered within 10 s");
    (reset, served)
}
