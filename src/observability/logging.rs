//! Logging: env_logger at `info` unless `RUST_LOG` says otherwise, to stderr, as text (the
//! default, for people) or as one JSON object a line (`--log-format json`, for a log
//! pipeline). The access log is one line per request under the target `access`, so
//! `RUST_LOG=info,access=off` silences it alone; in JSON its fields (request id, client,
//! method, path, status, duration, the partner's trace id) are separate keys. A panic becomes
//! one `error` line with its location; the request-conventions middleware adds a second one
//! naming the request id.
//!
//! Writing every line with its own `write(2)` would put a system call on every request
//! (BENCHMARKS.md, "What profiling found"), so on the server's worker threads lines are
//! gathered in a buffer of that thread (no lock is shared between workers for it) and handed
//! on in batches: when the buffer passes [`BATCH_BYTES`], every [`FLUSH_EVERY`] by a task on
//! that worker, and when the worker stops. Warnings and errors are handed on at once. Other
//! threads hand on every line at once. Handed on means to the log sink (`log_sink`): a
//! bounded queue to one writer thread, so no request ever waits on stderr; when the sink
//! stalls, lines are dropped and counted. A line is therefore at most [`FLUSH_EVERY`] late,
//! and a process killed with SIGKILL can lose that much and what is queued.

use std::cell::RefCell;
use std::io::{self, Write};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::Duration;

use serde::Serialize;

use super::client_errors::ClientErrorsAtDebug;
use super::log_sink::{self, LineKind, Lines, WhenStalled};
use super::trace_context::TraceId;
use crate::edge::context::RequestInfo;
use crate::edge::view::{path_for_log, write_path_for_log};
use crate::request_id::RequestId;

/// Bytes gathered before a worker writes them out.
pub const BATCH_BYTES: usize = 32 * 1024;
/// Longest time a line waits in a worker's buffer.
pub const FLUSH_EVERY: Duration = Duration::from_millis(50);

/// Log target of the access log, so it can be filtered on its own (`RUST_LOG=access=off`).
pub const ACCESS_LOG_TARGET: &str = "access";

/// Whether [`init`] installed the service's own logger, whose line format [`write_access`]
/// reproduces (not so in the tests).
static OWN_LOGGER: AtomicBool = AtomicBool::new(false);

/// Whether access lines are written at all, so a request whose line would be dropped does not
/// build it.
pub fn access_log_enabled() -> bool {
    log::log_enabled!(target: ACCESS_LOG_TARGET, log::Level::Info)
}

/// How log lines are written: `text` for people, `json` (one object a line) for a log pipeline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// `[<time> <LEVEL> <target>] <message>`
    #[default]
    Text,
    /// `{"time":…,"level":…,"target":…,"message":…}`; access lines add their fields.
    Json,
}

/// The format [`init`] installed (text until then, and under any other logger).
static FORMAT: AtomicU8 = AtomicU8::new(0);

fn format() -> LogFormat {
    if FORMAT.load(Ordering::Relaxed) == 1 {
        LogFormat::Json
    } else {
        LogFormat::Text
    }
}

/// What an access line says about one request.
pub struct AccessRecord<'a> {
    pub request_id: &'a RequestId,
    pub client: Option<IpAddr>,
    pub method: &'a str,
    pub path: &'a str,
    pub status: u16,
    pub micros: u64,
    /// The trace id of a well-formed `traceparent` request header.
    pub trace_id: Option<&'a TraceId>,
    /// The connection ended before the response's last byte was handed to it (the client went
    /// away, or read nothing within the send deadline).
    pub aborted: bool,
}

/// Writes one access line (the caller checked [`access_log_enabled`]). With the service's own
/// logger (installed by [`init`]) the line goes straight into the worker's batch: it is the one
/// record every request writes, so it skips env_logger's per-record machinery (its formatter,
/// the lock around its target). Under any other logger (the tests'), it
/// is an ordinary `log` record with the text form as its message.
pub fn write_access(record: &AccessRecord<'_>) {
    if !OWN_LOGGER.load(Ordering::Relaxed) {
        let mut line = Vec::new();
        write_access_text(&mut line, record);
        log::info!(target: ACCESS_LOG_TARGET, "{}", String::from_utf8_lossy(&line));
        return;
    }
    let format = format();
    let appended = BATCH.try_with(|batch| {
        let mut batch = batch.borrow_mut();
        if !batch.enabled {
            return false;
        }
        append_access_line(&mut batch.lines.bytes, record, format);
        batch.lines.count(LineKind::Access);
        if batch.lines.bytes.len() >= BATCH_BYTES {
            batch.write_out();
        }
        true
    });
    if appended != Ok(true) {
        // Not a worker thread: handed on at once.
        let mut lines = Lines::default();
        append_access_line(&mut lines.bytes, record, format);
        lines.count(LineKind::Access);
        log_sink::submit(lines);
    }
}

/// One whole access line, newline included, in `format`.
fn append_access_line(out: &mut Vec<u8>, record: &AccessRecord<'_>, format: LogFormat) {
    match format {
        LogFormat::Text => {
            out.push(b'[');
            let _ = write_timestamp(out);
            out.extend_from_slice(b" INFO  ");
            out.extend_from_slice(ACCESS_LOG_TARGET.as_bytes());
            out.extend_from_slice(b"] ");
            write_access_text(out, record);
        }
        LogFormat::Json => {
            let mut time = Vec::with_capacity(27);
            let _ = write_timestamp(&mut time);
            let mut message = Vec::with_capacity(96);
            write_access_text(&mut message, record);
            let client = record.client.map(|ip| ip.to_string());
            let line = JsonAccessLine {
                time: std::str::from_utf8(&time).unwrap_or_default(),
                level: "INFO",
                target: ACCESS_LOG_TARGET,
                message: &String::from_utf8_lossy(&message),
                request_id: record.request_id.as_str(),
                client: client.as_deref(),
                method: record.method,
                path: &path_for_log(record.path),
                status: record.status,
                duration_us: record.micros,
                trace_id: record.trace_id.map(TraceId::as_str),
                outcome: record.aborted.then_some("aborted"),
            };
            let _ = serde_json::to_writer(&mut *out, &line);
        }
    }
    out.push(b'\n');
}

/// `req_… 192.0.2.1 "GET /v1/ping" 200 41us`, and ` trace=<trace id>` when the request named
/// one. Written piece by piece with `itoa`, without the general formatting machinery: every
/// request writes one (BENCHMARKS.md, "Speed tricks re-measured").
fn write_access_text(out: &mut Vec<u8>, record: &AccessRecord<'_>) {
    out.extend_from_slice(record.request_id.as_str().as_bytes());
    out.push(b' ');
    match record.client {
        Some(IpAddr::V4(ip)) => {
            let mut digits = itoa::Buffer::new();
            for (index, octet) in ip.octets().into_iter().enumerate() {
                if index > 0 {
                    out.push(b'.');
                }
                out.extend_from_slice(digits.format(octet).as_bytes());
            }
        }
        Some(ip @ IpAddr::V6(_)) => {
            let _ = write!(out, "{ip}");
        }
        None => out.push(b'-'),
    }
    out.extend_from_slice(b" \"");
    out.extend_from_slice(record.method.as_bytes());
    out.push(b' ');
    // The path as the router decoded it, with what could break the line encoded again.
    write_path_for_log(out, record.path);
    out.extend_from_slice(b"\" ");
    out.extend_from_slice(itoa::Buffer::new().format(record.status).as_bytes());
    out.push(b' ');
    out.extend_from_slice(itoa::Buffer::new().format(record.micros).as_bytes());
    out.extend_from_slice(b"us");
    if record.aborted {
        out.extend_from_slice(b" aborted");
    }
    if let Some(trace_id) = record.trace_id {
        out.extend_from_slice(b" trace=");
        out.extend_from_slice(trace_id.as_str().as_bytes());
    }
}

/// An access line in the JSON format.
#[derive(Serialize)]
struct JsonAccessLine<'a> {
    time: &'a str,
    level: &'a str,
    target: &'a str,
    message: &'a str,
    request_id: &'a str,
    client: Option<&'a str>,
    method: &'a str,
    path: &'a str,
    status: u16,
    duration_us: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    trace_id: Option<&'a str>,
    /// `aborted` when the response was not handed over whole; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    outcome: Option<&'a str>,
}

/// Any other line in the JSON format.
#[derive(Serialize)]
struct JsonLine<'a> {
    time: &'a str,
    level: &'a str,
    target: &'a str,
    message: &'a str,
    /// The request whose handler wrote the line, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    request_id: Option<&'a str>,
}

/// Writes `record` as one text line: `[<time> <LEVEL> <target>] <request id> <message>`, the
/// request id only when a request's handler wrote the line.
fn write_text_record(out: &mut impl Write, record: &log::Record<'_>) -> io::Result<()> {
    out.write_all(b"[")?;
    write_timestamp(out)?;
    write!(out, " {:<5} {}] ", record.level(), record.target())?;
    RequestInfo::with_current_id(|id| match id {
        Some(id) => write!(out, "{id} "),
        None => Ok(()),
    })?;
    // A message may hold what a client sent (a path parameter, say): a line break in it
    // would start a line of its own, one that could pass for another request's.
    match record.args().as_str() {
        Some(message) => write_escaped(out, message)?,
        None => write_escaped(out, &record.args().to_string())?,
    }
    out.write_all(b"\n")
}

/// Writes `text` with its control characters escaped (`\n`, `\r`, `\t`, `\u{1b}`), so that
/// it stays on one line and no byte of it controls a terminal.
fn write_escaped(out: &mut impl Write, text: &str) -> io::Result<()> {
    let mut rest = text;
    while let Some(at) = rest.find(char::is_control) {
        out.write_all(&rest.as_bytes()[..at])?;
        let control = rest[at..].chars().next().expect("found at this index");
        match control {
            '\n' => out.write_all(b"\\n")?,
            '\r' => out.write_all(b"\\r")?,
            '\t' => out.write_all(b"\\t")?,
            other => write!(out, "\\u{{{:x}}}", u32::from(other))?,
        }
        rest = &rest[at + control.len_utf8()..];
    }
    out.write_all(rest.as_bytes())
}

/// Writes `record` as one JSON object and a newline.
fn write_json_record(out: &mut impl Write, record: &log::Record<'_>) -> io::Result<()> {
    let mut time = Vec::with_capacity(27);
    write_timestamp(&mut time)?;
    let message = record.args().to_string();
    RequestInfo::with_current_id(|request_id| {
        let line = JsonLine {
            time: std::str::from_utf8(&time).unwrap_or_default(),
            level: record.level().as_str(),
            target: record.target(),
            message: &message,
            request_id: request_id.map(RequestId::as_str),
        };
        serde_json::to_writer(&mut *out, &line)?;
        out.write_all(b"\n")
    })
}

/// One warning line of the log sink's own, in the format in use.
fn sink_warning(message: &str) -> Vec<u8> {
    let target = "partner_api::observability::log_sink";
    let mut line = Vec::with_capacity(128 + message.len());
    match format() {
        LogFormat::Text => {
            line.push(b'[');
            let _ = write_timestamp(&mut line);
            let _ = writeln!(line, " WARN  {target}] {message}");
        }
        LogFormat::Json => {
            let mut time = Vec::with_capacity(27);
            let _ = write_timestamp(&mut time);
            let record = JsonLine {
                time: std::str::from_utf8(&time).unwrap_or_default(),
                level: "WARN",
                target,
                message,
                request_id: None,
            };
            let _ = serde_json::to_writer(&mut line, &record);
            line.push(b'\n');
        }
    }
    line
}

/// Installs the logger, in `format`, its sink (what happens when it stalls: `when_stalled`)
/// and the panic hook. Call once, from `main`.
pub fn init(format: LogFormat, when_stalled: WhenStalled) {
    FORMAT.store(u8::from(format == LogFormat::Json), Ordering::Relaxed);
    log_sink::start(when_stalled, sink_warning);
    let mut builder = env_logger::Builder::new();
    // rustls warns of what a peer did (an IP address sent as the server name, an alert): a
    // client could write such a line, an urgent one, with every handshake it makes. Its
    // errors stay; `RUST_LOG=info,rustls=warn` brings the warnings back.
    builder.filter_module("rustls", log::LevelFilter::Error);
    builder
        .parse_env(env_logger::Env::default().default_filter_or("info"))
        // tokio-postgres logs every statement's parameters at debug: member data, audit
        // records, stored answers. Set after RUST_LOG, so that no setting of it writes them.
        .filter_module("tokio_postgres", log::LevelFilter::Info)
        .format(move |out, record| {
            if record.level() <= log::Level::Warn {
                URGENT.with(|urgent| *urgent.borrow_mut() = true);
            }
            if format == LogFormat::Json {
                return write_json_record(out, record);
            }
            write_text_record(out, record)
        })
        // The format above writes no colours; "always" only stops env_logger from scanning
        // every line for escape codes to strip, work every request would otherwise pay for.
        .write_style(env_logger::WriteStyle::Always)
        .target(env_logger::Target::Pipe(Box::new(BatchedStderr)));
    let logger = builder.build();
    let max_level = logger.filter();
    if log::set_boxed_logger(Box::new(ClientErrorsAtDebug(logger))).is_ok() {
        log::set_max_level(max_level);
        OWN_LOGGER.store(true, Ordering::Relaxed);
    }
    std::panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map(|location| format!("{}:{}", location.file(), location.line()))
            .unwrap_or_default();
        let thread = std::thread::current();
        log::error!(
            "panic in thread {} at {location}: {}",
            thread.name().unwrap_or("unnamed"),
            info.payload_as_str().unwrap_or("(non-string payload)")
        );
    }));
}

/// Reports why the service cannot start, after [`init`]: one `error: …` line on stderr in the
/// text format (as before logging existed), one JSON object in the JSON format.
pub fn report_fatal(message: &str) {
    match format() {
        // Through the sink, like every line: stderr itself may be a stalled pipe.
        LogFormat::Text => {
            let mut lines = Lines::default();
            lines.push(LineKind::Other, format!("error: {message}\n").as_bytes());
            log_sink::submit(lines);
        }
        LogFormat::Json => log::error!(target: "partner_api", "{message}"),
    }
}

/// Writes the time as RFC 3339 in UTC with microseconds (`2026-11-22T06:55:23.644536Z`). The
/// date and time of day are formatted once per second per thread; only the microseconds are
/// formatted for every line (BENCHMARKS.md, "Speed tricks re-measured").
fn write_timestamp(out: &mut impl Write) -> io::Result<()> {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = since_epoch.as_secs();
    SECOND.with(|cached| {
        let mut cached = cached.borrow_mut();
        if cached.0 != secs {
            *cached = (secs, format_second(secs));
        }
        out.write_all(&cached.1)
    })?;
    let mut micros = *b".000000Z";
    let mut value = since_epoch.subsec_micros();
    for digit in micros[1..7].iter_mut().rev() {
        *digit = b'0' + (value % 10) as u8;
        value /= 10;
    }
    out.write_all(&micros)
}

/// `YYYY-MM-DDTHH:MM:SS` of a Unix time, in UTC (the proleptic Gregorian calendar, as
/// RFC 3339 uses).
fn format_second(unix_secs: u64) -> [u8; 19] {
    let when = i64::try_from(unix_secs)
        .ok()
        .and_then(|secs| jiff::Timestamp::from_second(secs).ok())
        .unwrap_or(jiff::Timestamp::MAX);
    let mut text = [0u8; 19];
    let mut cursor = io::Cursor::new(&mut text[..]);
    let _ = write!(cursor, "{}", when.strftime("%Y-%m-%dT%H:%M:%S"));
    text
}

/// Makes the calling worker thread batch its log lines, and starts the task that writes them
/// out every [`FLUSH_EVERY`]. Called by the app factory, which runs on each worker.
pub fn batch_on_this_worker() {
    let already = BATCH.with(|batch| std::mem::replace(&mut batch.borrow_mut().enabled, true));
    if already {
        return;
    }
    actix_web::rt::spawn(async {
        let mut ticks = actix_web::rt::time::interval(FLUSH_EVERY);
        loop {
            ticks.tick().await;
            BATCH.with(|batch| batch.borrow_mut().write_out());
        }
    });
}

/// A worker's gathered lines; handed on when dropped too, that is when the worker thread ends.
#[derive(Default)]
struct Batch {
    enabled: bool,
    lines: Lines,
}

impl Batch {
    /// Hands the gathered lines to the sink, which never makes the worker wait (unless the
    /// operator chose to), and starts a new batch.
    fn write_out(&mut self) {
        if !self.lines.is_empty() {
            let capacity = self.lines.bytes.capacity().min(2 * BATCH_BYTES);
            let lines = std::mem::replace(
                &mut self.lines,
                Lines {
                    bytes: Vec::with_capacity(capacity),
                    counts: [0; 2],
                },
            );
            log_sink::submit(lines);
        }
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        self.write_out();
    }
}

thread_local! {
    static BATCH: RefCell<Batch> = RefCell::new(Batch::default());
    /// The last second formatted by this thread, and its text.
    static SECOND: RefCell<(u64, [u8; 19])> = const { RefCell::new((u64::MAX, [0; 19])) };
    /// Set by the formatter for a warning or an error: that line is written at once.
    static URGENT: RefCell<bool> = const { RefCell::new(false) };
}

/// env_logger's target: appends to the calling thread's batch.
struct BatchedStderr;

impl Write for BatchedStderr {
    fn write(&mut self, line: &[u8]) -> io::Result<usize> {
        let urgent = URGENT.with(|urgent| std::mem::take(&mut *urgent.borrow_mut()));
        let batched = BATCH.try_with(|batch| {
            let mut batch = batch.borrow_mut();
            if !batch.enabled {
                return false;
            }
            batch.lines.push(LineKind::Other, line);
            if urgent || batch.lines.bytes.len() >= BATCH_BYTES {
                batch.write_out();
            }
            true
        });
        if batched != Ok(true) {
            let mut lines = Lines::default();
            lines.push(LineKind::Other, line);
            log_sink::submit(lines);
        }
        Ok(line.len())
    }

    /// env_logger flushes after every line; batching them is the point, so this waits for
    /// the batch to be written out.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both formats, for a line written by a request's handler and for one written outside
    /// any request: the first names the request, the second does not.
    #[test]
    fn a_line_written_inside_a_request_carries_its_id() {
        use crate::edge::context::InContext;
        let write_both = || {
            let arguments = format_args!("stored the thing");
            let record = log::Record::builder()
                .args(arguments)
                .level(log::Level::Info)
                .target("partner_api::api::things")
                .build();
            let (mut text, mut json) = (Vec::new(), Vec::new());
            write_text_record(&mut text, &record).unwrap();
            write_json_record(&mut json, &record).unwrap();
            (
                String::from_utf8(text).unwrap(),
                String::from_utf8(json).unwrap(),
            )
        };
        let request = crate::edge::context::tests::example();
        let (text, json) =
            futures_util::FutureExt::now_or_never(InContext::new(request, async { write_both() }))
                .unwrap();
        let suffix = format!(
            "Z INFO  partner_api::api::things] {} stored the thing\n",
            RequestId::EXAMPLE
        );
        assert!(text.ends_with(&suffix), "{text}");
        let json: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(json["request_id"], RequestId::EXAMPLE.as_str());
        assert_eq!(json["message"], "stored the thing");
        let (text, json) = write_both();
        assert!(
            text.ends_with("Z INFO  partner_api::api::things] stored the thing\n"),
            "{text}"
        );
        // What a client sent stays on its line, whatever control characters it holds.
        let mut line = Vec::new();
        write_escaped(
            &mut line,
            "no thing x\n[2026 INFO  a] req_1 forged\r\t\u{1b}[2J é",
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(line).unwrap(),
            "no thing x\\n[2026 INFO  a] req_1 forged\\r\\t\\u{1b}[2J é"
        );
        let json: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert!(json.get("request_id").is_none(), "{json}");
    }

    #[test]
    fn seconds_are_formatted_as_rfc_3339_utc() {
        for (unix, text) in [
            (0, "1970-01-01T00:00:00"),
            (951_782_400, "2000-02-29T00:00:00"),
            (1_795_329_323, "2026-11-22T06:35:23"),
            (4_107_542_399, "2100-02-28T23:59:59"),
        ] {
            assert_eq!(
                std::str::from_utf8(&format_second(unix)).unwrap(),
                text,
                "{unix}"
            );
        }
    }

    fn record<'a>(request_id: &'a RequestId, trace_id: Option<&'a TraceId>) -> AccessRecord<'a> {
        AccessRecord {
            request_id,
            client: Some("192.0.2.10".parse().unwrap()),
            method: "GET",
            path: "/v1/ping",
            status: 200,
            micros: 1_234_567,
            trace_id,
            aborted: false,
        }
    }

    #[test]
    fn access_lines_read_the_same_as_with_format() {
        let request_id = RequestId::EXAMPLE;
        for client in [Some("192.0.2.10"), Some("2001:db8::1"), None] {
            let mut line = record(&request_id, None);
            line.client = client.map(|ip| ip.parse().unwrap());
            let mut text = Vec::new();
            write_access_text(&mut text, &line);
            assert_eq!(
                String::from_utf8(text).unwrap(),
                format!(
                    "{request_id} {} \"GET /v1/ping\" 200 1234567us",
                    client.unwrap_or("-")
                )
            );
        }
    }

    #[test]
    fn a_trace_id_ends_the_text_line_and_is_a_json_field() {
        let request_id = RequestId::EXAMPLE;
        let trace_id =
            TraceId::parse(b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
        let mut text = Vec::new();
        append_access_line(
            &mut text,
            &record(&request_id, Some(&trace_id)),
            LogFormat::Text,
        );
        let text = String::from_utf8(text).unwrap();
        assert!(
            text.ends_with(&format!(
                "] {request_id} 192.0.2.10 \"GET /v1/ping\" 200 1234567us \
                 trace=4bf92f3577b34da6a3ce929d0e0e4736\n"
            )),
            "{text}"
        );
        let mut json = Vec::new();
        append_access_line(
            &mut json,
            &record(&request_id, Some(&trace_id)),
            LogFormat::Json,
        );
        assert_eq!(json.last(), Some(&b'\n'));
        let mut object: serde_json::Value = serde_json::from_slice(&json).unwrap();
        let time = object["time"].take();
        assert!(time.as_str().unwrap().ends_with('Z'), "{time}");
        assert_eq!(
            object,
            serde_json::json!({
                "time": null,
                "level": "INFO",
                "target": "access",
                "message": format!("{request_id} 192.0.2.10 \"GET /v1/ping\" 200 1234567us trace=4bf92f3577b34da6a3ce929d0e0e4736"),
                "request_id": request_id.as_str(),
                "client": "192.0.2.10",
                "method": "GET",
                "path": "/v1/ping",
                "status": 200,
                "duration_us": 1234567,
                "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
            })
        );
    }

    #[test]
    fn other_records_are_one_json_object_each() {
        let mut out = Vec::new();
        write_json_record(
            &mut out,
            &log::Record::builder()
                .level(log::Level::Warn)
                .target("partner_api::edge::tls")
                .args(format_args!("a \"quoted\"\nline"))
                .build(),
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches('\n').count(), 1, "{text}");
        let object: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(object["level"], "WARN");
        assert_eq!(object["target"], "partner_api::edge::tls");
        assert_eq!(object["message"], "a \"quoted\"\nline");
        assert_eq!(object["time"].as_str().unwrap().len(), 27);
    }

    #[test]
    fn a_timestamp_has_microseconds_and_zulu() {
        let mut out = Vec::new();
        write_timestamp(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.len(), 27, "{text}");
        assert!(text.ends_with('Z') && text.as_bytes()[19] == b'.', "{text}");
    }
}
