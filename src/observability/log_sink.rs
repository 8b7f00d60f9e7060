//! Where log lines go once written: a bounded queue to one writer thread, the only code that
//! ever waits on stderr. A request only hands its worker's batch of lines to the queue; when
//! the sink stalls (a log shipper that stopped reading, a full pipe, a blocking container log
//! driver, a full disk) and the queue is full, the batch is dropped and its lines are counted
//! by kind (`partner_api_log_lines_dropped_total`), and once the sink takes lines again the
//! writer says in one warning how many were lost. The API never waits on its logs, the way
//! Envoy's access-log buffers are flushed by a thread of their own.
//!
//! An operator who prefers to lose no line, at the price of requests waiting on a stalled sink,
//! chooses `--log-when-stalled wait`: a full queue then blocks the worker that writes, as every
//! write to stderr did before this queue existed.
//!
//! A small queue of our own rather than a crate: the lines are already gathered in per-worker
//! batches (`logging`), so what is needed is a bounded hand-off with a byte budget and a count
//! of what was dropped, which `std::sync::mpsc::sync_channel` and two atomics give.

use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Unit;

/// What the service does with a log line when the sink does not take lines as fast as they come.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum WhenStalled {
    /// Drop it and count it: requests never wait on logging (the default).
    #[default]
    Drop,
    /// Wait until the sink takes it: no line is lost, and requests stall with the sink.
    Wait,
}

/// The kinds of line counted apart when dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    Access = 0,
    Other = 1,
}

impl LineKind {
    pub const ALL: [LineKind; 2] = [LineKind::Access, LineKind::Other];

    pub fn as_str(self) -> &'static str {
        match self {
            LineKind::Access => "access",
            LineKind::Other => "other",
        }
    }
}

/// Bytes the queue may hold before lines are dropped (or, with `wait`, writers wait): about
/// 10,000 access lines in the JSON format (about 290 bytes each; some 27,000 of the text
/// format's 115), 10 seconds of a replica at 1,000 requests a second, and a bound on memory.
/// Each batch is counted by the memory it holds, which [`fitted`] keeps close to its lines.
pub const QUEUE_BYTES: usize = 3 * 1024 * 1024;

/// Batches the queue may hold, whatever their size (the byte budget is the usual bound).
const QUEUE_BATCHES: usize = 1024;

/// Lines handed over together, with how many lines of each kind they hold.
#[derive(Debug, Default)]
pub struct Lines {
    pub bytes: Vec<u8>,
    pub counts: [u64; 2],
}

impl Lines {
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Appends one whole line (newline included) of `kind`.
    pub fn push(&mut self, kind: LineKind, line: &[u8]) {
        self.bytes.extend_from_slice(line);
        self.counts[kind as usize] += 1;
    }

    pub fn count(&mut self, kind: LineKind) {
        self.counts[kind as usize] += 1;
    }
}

struct Sink {
    sender: SyncSender<Lines>,
    when_stalled: WhenStalled,
    writer: Mutex<Option<JoinHandle<()>>>,
}

static SINK: OnceLock<Sink> = OnceLock::new();
/// Bytes in the queue now.
static QUEUED_BYTES: AtomicUsize = AtomicUsize::new(0);
/// Lines dropped since the start, by kind (the metric).
static DROPPED: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
/// Lines dropped since the writer last reported a loss, by kind.
static UNREPORTED: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

/// Starts the writer thread. `warning` formats the one line that reports lost lines, in the
/// log's format. Until this is called (and in the tests, which capture logs themselves), lines
/// are written to stderr at once.
pub fn start(when_stalled: WhenStalled, warning: fn(&str) -> Vec<u8>) {
    let (sender, receiver) = std::sync::mpsc::sync_channel(QUEUE_BATCHES);
    let writer = std::thread::Builder::new()
        .name("log-writer".to_owned())
        .spawn(move || write_out(&receiver, &mut io::stderr(), warning))
        .expect("the log writer thread starts");
    let _ = SINK.set(Sink {
        sender,
        when_stalled,
        writer: Mutex::new(Some(writer)),
    });
}

/// Hands `lines` to the writer; never waits unless the operator chose `wait`.
pub fn submit(lines: Lines) {
    if lines.is_empty() {
        return;
    }
    let Some(sink) = SINK.get() else {
        let _ = io::stderr().lock().write_all(&lines.bytes);
        return;
    };
    // What the batch holds in memory, not only what it says: the budget bounds memory.
    let lines = fitted(lines);
    let size = lines.bytes.capacity();
    match sink.when_stalled {
        WhenStalled::Wait => {
            QUEUED_BYTES.fetch_add(size, Ordering::Relaxed);
            if let Err(failed) = sink.sender.send(lines) {
                QUEUED_BYTES.fetch_sub(size, Ordering::Relaxed);
                dropped(&failed.0.counts);
            }
        }
        WhenStalled::Drop => {
            if QUEUED_BYTES.fetch_add(size, Ordering::Relaxed) + size > QUEUE_BYTES {
                QUEUED_BYTES.fetch_sub(size, Ordering::Relaxed);
                return dropped(&lines.counts);
            }
            match sink.sender.try_send(lines) {
                Ok(()) => {}
                Err(TrySendError::Full(lines) | TrySendError::Disconnected(lines)) => {
                    QUEUED_BYTES.fetch_sub(size, Ordering::Relaxed);
                    dropped(&lines.counts);
                }
            }
        }
    }
}

/// `lines` in a buffer its size. A batch handed over by time rather than by size holds a few
/// lines in a buffer sized for many (up to 64 KiB): counted as it is, a stalled sink's queue
/// would hold a small fraction of the lines its budget is meant for. One copy of the batch,
/// on the worker, once per batch, never per line.
fn fitted(mut lines: Lines) -> Lines {
    if lines.bytes.capacity() > lines.bytes.len() + lines.bytes.len() / 4 {
        lines.bytes.shrink_to_fit();
    }
    lines
}

fn dropped(counts: &[u64; 2]) {
    for kind in LineKind::ALL {
        let count = counts[kind as usize];
        if count > 0 {
            DROPPED[kind as usize].fetch_add(count, Ordering::Relaxed);
            UNREPORTED[kind as usize].fetch_add(count, Ordering::Relaxed);
        }
    }
}

/// Lines of `kind` dropped since the start.
pub fn dropped_total(kind: LineKind) -> u64 {
    DROPPED[kind as usize].load(Ordering::Relaxed)
}

/// Bytes waiting in the queue.
pub fn queued_bytes() -> usize {
    QUEUED_BYTES.load(Ordering::Relaxed)
}

/// The writer thread: writes every batch, counts one that cannot be written as dropped, and
/// after a write that succeeds reports what was lost before it.
fn write_out(receiver: &Receiver<Lines>, out: &mut impl Write, warning: fn(&str) -> Vec<u8>) {
    for lines in receiver {
        // Counted as queued until written, so that `finish` waits for this batch too.
        let written = out.write_all(&lines.bytes);
        QUEUED_BYTES.fetch_sub(lines.bytes.capacity(), Ordering::Relaxed);
        if written.is_err() {
            dropped(&lines.counts);
            continue;
        }
        let lost = LineKind::ALL.map(|kind| UNREPORTED[kind as usize].swap(0, Ordering::Relaxed));
        if lost.iter().any(|count| *count > 0) {
            let report = warning(&format!(
                "the log sink stalled: {} lines were dropped ({} access, {} other); \
                 partner_api_log_lines_dropped_total counts them",
                lost[0] + lost[1],
                lost[0],
                lost[1]
            ));
            if out.write_all(&report).is_err() {
                // Still failing: the loss is reported by the next write that succeeds.
                for kind in LineKind::ALL {
                    UNREPORTED[kind as usize].fetch_add(lost[kind as usize], Ordering::Relaxed);
                }
            }
        }
        let _ = out.flush();
    }
}

/// Lets the writer finish what is queued, waiting at most `within` (a stalled sink must not
/// hold the process after it stopped serving). Call once, at exit.
pub fn finish(within: Duration) {
    let Some(sink) = SINK.get() else {
        return;
    };
    let Some(writer) = sink.writer.lock().ok().and_then(|mut writer| writer.take()) else {
        return;
    };
    let deadline = Instant::now() + within;
    while !writer.is_finished() && queued_bytes() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The sink's series: the lines it dropped, by kind, and the bytes waiting for it.
#[derive(Debug)]
pub struct LogSinkCollector;

impl Collector for LogSinkCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        let mut dropped = encoder.encode_descriptor(
            "partner_api_log_lines_dropped",
            "Log lines dropped because the log sink (stderr's reader) did not take them: the \
             queue was full, or the write failed; by kind (access lines, other lines).",
            None,
            MetricType::Counter,
        )?;
        for kind in LineKind::ALL {
            dropped
                .encode_family(&[("kind", kind.as_str())])?
                .encode_counter::<NoLabelSet, _, u64>(&dropped_total(kind), None)?;
        }
        encoder
            .encode_descriptor(
                "partner_api_log_queue",
                "Bytes of log lines waiting for the log sink.",
                Some(&Unit::Bytes),
                MetricType::Gauge,
            )?
            .encode_gauge(&(queued_bytes() as i64))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Stalled;

    impl Write for Stalled {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::other("the device is full"))
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn warning(message: &str) -> Vec<u8> {
        format!("WARN {message}\n").into_bytes()
    }

    fn lines(access: u64, other: u64) -> Lines {
        let mut lines = Lines::default();
        for _ in 0..access {
            lines.push(LineKind::Access, b"access\n");
        }
        for _ in 0..other {
            lines.push(LineKind::Other, b"other\n");
        }
        lines
    }

    /// Queued as `submit` queues it, so that the writer's accounting balances.
    fn queued(sender: &SyncSender<Lines>, lines: Lines) {
        QUEUED_BYTES.fetch_add(lines.bytes.capacity(), Ordering::Relaxed);
        sender.send(lines).unwrap();
    }

    /// A batch with spare room is counted by its lines, so the queue's budget holds as many
    /// lines as it says; one nearly full keeps its buffer (no copy).
    #[test]
    fn a_batch_is_counted_by_what_it_holds() {
        let mut sparse = Lines::default();
        sparse.bytes.reserve(64 * 1024);
        sparse.bytes.extend_from_slice(&[b'x'; 290]);
        let sparse = fitted(sparse);
        assert!(
            sparse.bytes.capacity() < 290 + 290 / 4,
            "{}",
            sparse.bytes.capacity()
        );
        let mut full = Lines::default();
        full.bytes.reserve_exact(1000);
        full.bytes.extend_from_slice(&[b'x'; 900]);
        let pointer = full.bytes.as_ptr();
        let full = fitted(full);
        assert_eq!(full.bytes.as_ptr(), pointer);
        // The budget: about 10,000 JSON access lines.
        assert!((10_000..11_000).contains(&(QUEUE_BYTES / 293)));
    }

    #[test]
    fn lines_that_cannot_be_written_are_counted_and_reported_once_writes_succeed() {
        let (sender, receiver) = std::sync::mpsc::sync_channel(8);
        let before = [
            dropped_total(LineKind::Access),
            dropped_total(LineKind::Other),
        ];
        queued(&sender, lines(3, 1));
        drop(sender);
        write_out(&receiver, &mut Stalled, warning);
        assert_eq!(dropped_total(LineKind::Access) - before[0], 3);
        assert_eq!(dropped_total(LineKind::Other) - before[1], 1);

        let (sender, receiver) = std::sync::mpsc::sync_channel(8);
        queued(&sender, lines(2, 0));
        drop(sender);
        let mut written = Vec::new();
        write_out(&receiver, &mut written, warning);
        let text = String::from_utf8(written).unwrap();
        assert!(
            text.starts_with("access\naccess\nWARN the log sink stalled: "),
            "{text}"
        );
        assert!(text.contains("(3 access, 1 other)"), "{text}");
    }
}
