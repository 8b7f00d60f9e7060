//! The audit trail: one record for every request to an operation marked `x-member-data`,
//! saying who (the key's id and its partner) did what (the operation, the method and path)
//! to which members' data (the ids the handler read or changed), when, and with what outcome
//! (the status and error code), whatever the outcome: a request refused for its key, its
//! quota or its input is recorded too. What health-data regulation asks of a processor, and
//! kept apart from the operational logs: records are JSON lines on a sink of their own
//! (`sink.rs`), which `RUST_LOG` does not reach, and which drops and counts rather than makes a
//! request wait (docs/operations/member-data.md, "The audit trail").
//!
//! The request-conventions middleware writes the record when the answer's head is ready; a
//! handler adds the members it touched with `context.audit_members(...)`, which is all an
//! endpoint does for its trail.

pub mod sink;

use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::request_id::RequestId;

/// The member ids a handler read or changed, gathered while it runs (`context.audit_members`)
/// and written in the request's record; when the handler named none (it did not run: the
/// request was refused for its key, its quota or its input; or it found nothing), the ids the
/// request's path carries instead, so that every record says what was asked for. Shared
/// between the handler's context and the middleware; empty and unallocated for operations that
/// are not audited.
#[derive(Clone, Debug, Default)]
pub struct Members(Option<Arc<Mutex<Named>>>);

#[derive(Debug, Default)]
struct Named {
    /// The audited operation's `operationId`.
    operation: Arc<str>,
    touched: Vec<String>,
    asked: Vec<String>,
}

impl Members {
    /// The list of a request that is audited.
    pub fn audited() -> Members {
        Members(Some(Arc::default()))
    }

    /// The list of a request for `operation` (its `operationId`), which is audited.
    pub fn audited_as(operation: Arc<str>) -> Members {
        Members(Some(Arc::new(Mutex::new(Named {
            operation,
            ..Named::default()
        }))))
    }

    /// The operation and the members its record would name now (those the handler touched,
    /// else those its path asked for), left for the record the request ends with; `None`
    /// when the request is not audited.
    pub fn so_far(&self) -> Option<(Arc<str>, Vec<String>)> {
        self.0.as_ref().map(|named| {
            let named = named.lock().unwrap_or_else(|poison| poison.into_inner());
            let members = if named.touched.is_empty() {
                named.asked.clone()
            } else {
                named.touched.clone()
            };
            (Arc::clone(&named.operation), members)
        })
    }

    /// Adds `ids`, when the request is audited.
    pub fn add<I: IntoIterator<Item = S>, S: AsRef<str>>(&self, ids: I) {
        self.add_to(ids, |named| &mut named.touched);
    }

    /// The ids the request's path carries: named when the handler names none.
    pub fn asked<I: IntoIterator<Item = S>, S: AsRef<str>>(&self, ids: I) {
        self.add_to(ids, |named| &mut named.asked);
    }

    fn add_to<I: IntoIterator<Item = S>, S: AsRef<str>>(
        &self,
        ids: I,
        list: impl Fn(&mut Named) -> &mut Vec<String>,
    ) {
        if let Some(named) = &self.0 {
            let mut named = named.lock().unwrap_or_else(|poison| poison.into_inner());
            let list = list(&mut named);
            for id in ids {
                let id = id.as_ref();
                if !list.iter().any(|listed| listed == id) {
                    list.push(id.to_owned());
                }
            }
        }
    }

    pub fn is_audited(&self) -> bool {
        self.0.is_some()
    }

    fn take(&self) -> Vec<String> {
        self.0.as_ref().map_or_else(Vec::new, |named| {
            let mut named = named.lock().unwrap_or_else(|poison| poison.into_inner());
            if named.touched.is_empty() {
                std::mem::take(&mut named.asked)
            } else {
                std::mem::take(&mut named.touched)
            }
        })
    }
}

/// One audit record, as written (one JSON line).
#[derive(Debug, Serialize)]
pub struct AuditRecord<'a> {
    /// When the answer was decided (or the request abandoned), RFC 3339 in UTC with
    /// milliseconds.
    pub time: String,
    pub request_id: &'a str,
    /// The id of the issued key the request carried, in force or not (a revoked key still
    /// tried is named); `null` without one.
    pub key_id: Option<&'a str>,
    /// The key's partner; `null` without a key.
    pub partner: Option<&'a str>,
    /// `false` for a test key (`pak_test_...`, which reaches only test data), `true` for a
    /// live one; `null` without a key.
    pub livemode: Option<bool>,
    /// The operation's `operationId`.
    pub operation: &'a str,
    pub method: &'a str,
    /// The path as the service read it (percent-encoded where it must be); one longer than
    /// [`PATH_BYTES`] is cut, and ends with the SHA-256 of the whole path and its length.
    pub path: &'a str,
    /// The members whose data the handler read or changed; when it touched none (the request
    /// was refused before it ran, or found nothing), the ids the path carries: what was asked
    /// for, not what was served (read `status` with it).
    pub members: Vec<String>,
    /// The status answered; `null` when no answer was: the client went away, or the process
    /// stopped, before it was decided (what the handler did is in `members` all the same).
    pub status: Option<u16>,
    /// The error code, when the answer was an error.
    pub code: Option<&'a str>,
    /// The client's address, as the service decided it.
    pub client: Option<String>,
}

/// Now, as a record's `time` says it: RFC 3339 in UTC with milliseconds.
pub fn now() -> String {
    let now = jiff::Timestamp::now();
    now.round(jiff::Unit::Millisecond)
        .map_or_else(|_| now.to_string(), |at| format!("{at:.3}"))
}

/// Bytes of a path kept whole in a record. Longer ones keep their first [`PATH_HEAD_BYTES`]
/// and end with the digest of the whole and its length: a record's size stays bounded whatever
/// a client puts in its path (an unauthenticated one included), and the path it names can
/// still be matched against the access log's.
pub const PATH_BYTES: usize = 512;

/// Bytes of a cut path kept before its digest.
const PATH_HEAD_BYTES: usize = 256;

/// `path`, or, longer than [`PATH_BYTES`], its head, `...`, and `(sha256:<hex> of <n> bytes)`.
pub fn bounded_path(path: String) -> String {
    if path.len() <= PATH_BYTES {
        return path;
    }
    let mut head = PATH_HEAD_BYTES;
    while !path.is_char_boundary(head) {
        head -= 1;
    }
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, path.as_bytes());
    let mut cut = String::with_capacity(head + 100);
    cut.push_str(&path[..head]);
    cut.push_str("...(sha256:");
    for byte in digest.as_ref() {
        cut.push_str(&format!("{byte:02x}"));
    }
    cut.push_str(&format!(" of {} bytes)", path.len()));
    cut
}

/// The record of one audited request, written exactly once: with its answer
/// ([`PendingRecord::answered`]), or, when the request is dropped before one (its client gone,
/// the server stopping), with none.
pub struct PendingRecord {
    sink: sink::AuditSink,
    request_id: RequestId,
    /// The issued key's id, partner and whether it is a test key.
    key: Option<(Arc<str>, Arc<str>, bool)>,
    operation: Arc<str>,
    method: String,
    path: String,
    members: Members,
    client: Option<IpAddr>,
    written: bool,
}

impl PendingRecord {
    /// The record of the request `request_id` for `operation`; `members` is where its handler
    /// lists the members it touches.
    pub fn new(
        sink: &sink::AuditSink,
        request_id: RequestId,
        key: Option<(Arc<str>, Arc<str>, bool)>,
        (operation, method, path): (Arc<str>, &str, String),
        members: Members,
        client: Option<IpAddr>,
    ) -> PendingRecord {
        sink.record_begun();
        PendingRecord {
            sink: sink.clone(),
            request_id,
            key,
            operation,
            method: method.to_owned(),
            path: bounded_path(path),
            members,
            client,
            written: false,
        }
    }

    /// Writes the record with the answer's `status` and error `code`.
    pub fn answered(mut self, status: u16, code: Option<&str>) {
        self.write(Some(status), code);
    }

    fn write(&mut self, status: Option<u16>, code: Option<&str>) {
        if std::mem::replace(&mut self.written, true) {
            return;
        }
        let record = AuditRecord {
            time: now(),
            request_id: self.request_id.as_str(),
            key_id: self.key.as_ref().map(|(id, _, _)| &**id),
            partner: self.key.as_ref().map(|(_, partner, _)| &**partner),
            livemode: self.key.as_ref().map(|(_, _, test)| !test),
            operation: &self.operation,
            method: &self.method,
            path: &self.path,
            members: self.members.take(),
            status,
            code,
            client: self.client.map(|client| client.to_string()),
        };
        let mut line = serde_json::to_vec(&record).expect("an audit record serializes");
        line.push(b'\n');
        self.sink.submit(line);
        self.sink.record_ended();
    }
}

impl Drop for PendingRecord {
    fn drop(&mut self) {
        self.write(None, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::time::{Duration, Instant};

    /// A writer whose lines a test reads.
    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl Write for Lines {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn record(sink: &sink::AuditSink, members: &Members) -> PendingRecord {
        PendingRecord::new(
            sink,
            RequestId::EXAMPLE,
            Some((Arc::from("ky_1"), Arc::from("pt_acme"), false)),
            (
                Arc::from("retrieve_thing"),
                "GET",
                "/v1/things/th_1".to_owned(),
            ),
            members.clone(),
            Some("192.0.2.7".parse().unwrap()),
        )
    }

    fn written(lines: &Lines, count: usize) -> Vec<serde_json::Value> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
            let records: Vec<serde_json::Value> = text
                .lines()
                .map(|line| serde_json::from_str(line).unwrap())
                .collect();
            if records.len() >= count || Instant::now() > deadline {
                return records;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn a_record_is_written_once_with_its_answer_or_when_its_request_is_dropped() {
        let lines = Lines::default();
        let out = lines.clone();
        let sink = sink::AuditSink::with_writer(Box::new(lines.clone()), 1 << 20, move || {
            Ok(Box::new(out.clone()))
        });
        let members = Members::audited();
        let answered = record(&sink, &members);
        members.add(["th_1", "th_1"]);
        answered.answered(404, Some("resource_missing"));
        let dropped = record(&sink, &Members::audited());
        drop(dropped);
        let records = written(&lines, 2);
        assert_eq!(records.len(), 2);
        for (record, status, code, members) in [
            (
                &records[0],
                serde_json::json!(404),
                serde_json::json!("resource_missing"),
                serde_json::json!(["th_1"]),
            ),
            (
                &records[1],
                serde_json::Value::Null,
                serde_json::Value::Null,
                serde_json::json!([]),
            ),
        ] {
            let mut record = record.clone();
            assert!(record["time"].as_str().unwrap().ends_with('Z'));
            record.as_object_mut().unwrap().remove("time");
            assert_eq!(
                record,
                serde_json::json!({
                    "request_id": RequestId::EXAMPLE.as_str(), "key_id": "ky_1",
                    "partner": "pt_acme", "livemode": true, "operation": "retrieve_thing",
                    "method": "GET",
                    "path": "/v1/things/th_1", "members": members, "status": status,
                    "code": code, "client": "192.0.2.7",
                })
            );
        }
    }

    #[test]
    fn a_records_path_is_bounded_whatever_the_client_sent() {
        let short = "/v1/things/th_1".to_owned();
        assert_eq!(bounded_path(short.clone()), short);
        let exact = format!("/v1/things/{}", "a".repeat(PATH_BYTES - 11));
        assert_eq!(bounded_path(exact.clone()), exact);
        let long = format!("/v1/things/{}", "a".repeat(60_000));
        let cut = bounded_path(long.clone());
        let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, long.as_bytes());
        let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            cut,
            format!("{}...(sha256:{hex} of 60011 bytes)", &long[..256])
        );
        // Another path of the same length and head gets another digest.
        let other = format!("/v1/things/{}b", "a".repeat(59_999));
        assert_ne!(bounded_path(other), cut);
        // Never cut inside a character.
        let wide = format!("/{}", "é".repeat(400));
        assert!(bounded_path(wide).starts_with(&format!("/{}...", "é".repeat(127))));
    }

    #[test]
    fn a_record_names_what_the_handler_touched_or_else_what_the_path_asked_for() {
        let members = Members::audited();
        members.asked(["th_0009"]);
        assert_eq!(members.clone().take(), ["th_0009"]);
        let members = Members::audited();
        members.asked(["en_0001"]);
        members.add(["mb_0001", "mb_0001"]);
        assert_eq!(members.take(), ["mb_0001"]);
        let unaudited = Members::default();
        unaudited.asked(["th_1"]);
        assert!(unaudited.take().is_empty() && !unaudited.is_audited());
    }
}
