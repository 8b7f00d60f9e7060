//! Where audit records go: a bounded queue to a writer thread of their own, writing JSON lines
//! to standard output (the default: the operational log is on standard error, so the two
//! streams stay apart) or appending to a file (`--audit-log`, created `0640`, opened again on
//! SIGHUP so that it can be rotated). A request only hands its record to the queue; when the
//! reader stalls and the queue is full (8 MiB of records, whatever their number), the record is
//! dropped and counted (`partner_api_audit_records_dropped_total`, which pages:
//! PartnerApiAuditRecordsDropped), never waited for, as the operational log does
//! (`observability::log_sink`). At shutdown what is queued is written within a deadline and
//! what is left is counted as dropped. Nothing else is written there, and the log's level
//! setting does not reach it.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;

/// Bytes of records the queue holds before it drops: about 20,000 records of 400 bytes, 20
/// seconds of a replica at 1,000 audited requests a second, and a bound on memory whatever a
/// client puts in a path.
pub const QUEUE_BYTES: usize = 8 * 1024 * 1024;

/// Records the queue holds at most, whatever their size.
const QUEUE_RECORDS: usize = 65_536;

/// Where the records are written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuditTarget {
    /// Standard output.
    Stdout,
    /// Appended to a file.
    File(PathBuf),
}

impl std::fmt::Display for AuditTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuditTarget::Stdout => f.write_str("- (standard output)"),
            AuditTarget::File(path) => write!(f, "{}", path.display()),
        }
    }
}

impl std::str::FromStr for AuditTarget {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, String> {
        match value {
            "" => Err("give - for standard output, or a file".to_owned()),
            "-" => Ok(AuditTarget::Stdout),
            path => Ok(AuditTarget::File(PathBuf::from(path))),
        }
    }
}

/// The sink; cloned into every worker. See the module documentation.
#[derive(Clone, Debug)]
pub struct AuditSink {
    sender: SyncSender<Vec<u8>>,
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    written: AtomicU64,
    dropped: AtomicU64,
    /// Bytes handed over and not yet written.
    queued_bytes: AtomicUsize,
    /// Records handed over and not yet written, and whether the sink has closed: one lock,
    /// so that a record is counted exactly once, written or dropped, whatever the order of a
    /// request handing one over and the shutdown closing.
    queue: Mutex<Queue>,
    /// Audited requests whose record is not written yet (`PendingRecord`s alive).
    live: AtomicUsize,
    /// Set by SIGHUP: the writer opens its file again before the next record.
    reopen: AtomicBool,
    /// Bytes of records the queue may hold.
    budget: usize,
}

#[derive(Debug, Default)]
struct Queue {
    records: usize,
    /// Set at shutdown: what comes later is counted as dropped.
    closed: bool,
}

impl Shared {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

impl AuditSink {
    /// Starts the writer for `target`; an error when its file cannot be opened (a bad setting).
    pub fn start(target: &AuditTarget) -> io::Result<AuditSink> {
        let out = open(target)?;
        let target = target.clone();
        Ok(AuditSink::with_writer(out, QUEUE_BYTES, move || {
            open(&target)
        }))
    }

    /// A sink writing to `out`, holding at most `budget` bytes of records waiting; `reopen`
    /// gives the writer to use after a SIGHUP.
    pub fn with_writer(
        out: Box<dyn Write + Send>,
        budget: usize,
        reopen: impl Fn() -> io::Result<Box<dyn Write + Send>> + Send + 'static,
    ) -> AuditSink {
        let (sender, receiver) = std::sync::mpsc::sync_channel(QUEUE_RECORDS);
        let shared = Arc::new(Shared {
            budget,
            ..Shared::default()
        });
        let writer = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("audit-writer".to_owned())
            .spawn(move || write_all(&receiver, out, &writer, &reopen))
            .expect("a thread can be started");
        AuditSink { sender, shared }
    }

    /// Queues one record (a whole line); dropped and counted when the queue is full or the
    /// sink has closed.
    pub fn submit(&self, line: Vec<u8>) {
        let size = line.len();
        let shared = &self.shared;
        let over = shared.queued_bytes.fetch_add(size, Ordering::Relaxed) + size > shared.budget;
        let admitted = !over && {
            let mut queue = shared.queue();
            if queue.closed {
                log::error!("an audit record came after the audit sink closed, and is dropped");
            } else {
                queue.records += 1;
            }
            !queue.closed
        };
        if !admitted {
            shared.queued_bytes.fetch_sub(size, Ordering::Relaxed);
            shared.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) =
            self.sender.try_send(line)
        {
            shared.queued_bytes.fetch_sub(size, Ordering::Relaxed);
            let mut queue = shared.queue();
            // Unless the shutdown counted it already.
            if queue.records > 0 && !queue.closed {
                queue.records -= 1;
                shared.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// An audited request began: its record is to come ([`AuditSink::finish`] waits for it).
    pub(crate) fn record_begun(&self) {
        self.shared.live.fetch_add(1, Ordering::Relaxed);
    }

    /// An audited request's record was handed over.
    pub(crate) fn record_ended(&self) {
        self.shared.live.fetch_sub(1, Ordering::Relaxed);
    }

    /// Opens the file again before the next record (SIGHUP: after a rotation).
    pub fn reopen(&self) {
        self.shared.reopen.store(true, Ordering::Relaxed);
    }

    /// At shutdown: waits at most `within` for the records of requests still running (the
    /// workers drop the last ones as they stop) and for the queue to be written, then counts
    /// what is left, and whatever comes later, as dropped.
    pub fn finish(&self, within: Duration) {
        let deadline = Instant::now() + within;
        let busy =
            || self.shared.live.load(Ordering::Relaxed) > 0 || self.shared.queue().records > 0;
        while busy() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        let left = {
            let mut queue = self.shared.queue();
            queue.closed = true;
            std::mem::take(&mut queue.records)
        };
        if left > 0 {
            self.shared
                .dropped
                .fetch_add(left as u64, Ordering::Relaxed);
            log::error!("{left} audit records were not written before the process stopped");
        }
    }

    pub fn written(&self) -> u64 {
        self.shared.written.load(Ordering::Relaxed)
    }

    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }

    /// The sink's series, for the admin listener's metrics.
    pub fn collector(&self) -> AuditCollector {
        AuditCollector(Arc::clone(&self.shared))
    }
}

/// Opens the target. A file must be a regular file: a FIFO would block the start until a
/// reader came (and then the trail would be only as safe as that reader), and a device or a
/// socket is no trail; it is opened without waiting, and refused when it is anything else.
fn open(target: &AuditTarget) -> io::Result<Box<dyn Write + Send>> {
    Ok(match target {
        AuditTarget::Stdout => Box::new(io::stdout()),
        AuditTarget::File(path) => {
            if let Ok(metadata) = std::fs::metadata(path)
                && !metadata.is_file()
            {
                return Err(not_a_regular_file(&metadata));
            }
            // O_NONBLOCK changes nothing for a regular file; it only keeps a FIFO swapped in
            // since the check above from blocking the open.
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o640)
                .custom_flags(libc::O_NONBLOCK)
                .open(path)?;
            let metadata = file.metadata()?;
            if !metadata.is_file() {
                return Err(not_a_regular_file(&metadata));
            }
            Box::new(file)
        }
    })
}

fn not_a_regular_file(metadata: &std::fs::Metadata) -> io::Error {
    use std::os::unix::fs::FileTypeExt;
    let kind = metadata.file_type();
    let what = if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_dir() {
        "a folder"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "not a regular file"
    };
    io::Error::other(format!(
        "it is {what}: the audit trail is appended to a regular file (or - for standard output)"
    ))
}

/// The writer thread: the only code that waits on the audit's reader. A record that cannot be
/// written is counted as dropped, and the operational log says so once per run of failures.
fn write_all(
    receiver: &Receiver<Vec<u8>>,
    mut out: Box<dyn Write + Send>,
    shared: &Shared,
    reopen: &dyn Fn() -> io::Result<Box<dyn Write + Send>>,
) {
    let mut failing = false;
    // When the file could not be opened again (SIGHUP, after a rotation), since when: records go
    // on to the file opened before, which the rotation may compress or remove, so they are
    // counted as dropped, and the open is tried again at most once a second.
    let mut reopen_failed: Option<Instant> = None;
    while let Ok(line) = receiver.recv() {
        let retry = reopen_failed.is_some_and(|since| since.elapsed() >= Duration::from_secs(1));
        if shared.reopen.swap(false, Ordering::Relaxed) || retry {
            match reopen() {
                Ok(fresh) => {
                    out = fresh;
                    if reopen_failed.take().is_some() {
                        log::info!("the audit file is open again; records are written to it");
                    }
                }
                Err(error) => {
                    if reopen_failed.is_none() {
                        log::error!(
                            "the audit file cannot be opened again: {error}; records are \
                             counted as dropped until it can"
                        );
                    }
                    reopen_failed = Some(Instant::now());
                }
            }
        }
        let written = match reopen_failed {
            Some(_) => out
                .write_all(&line)
                .and_then(|()| out.flush())
                .and(Err(io::Error::other(
                    "the audit file could not be opened again",
                ))),
            None => out.write_all(&line).and_then(|()| out.flush()),
        };
        shared.queued_bytes.fetch_sub(line.len(), Ordering::Relaxed);
        // Counted unless `finish` already counted it as dropped.
        let counted = {
            let mut queue = shared.queue();
            let counted = queue.records > 0;
            queue.records = queue.records.saturating_sub(1);
            counted
        };
        match written {
            Ok(()) if counted => {
                shared.written.fetch_add(1, Ordering::Relaxed);
                failing = false;
            }
            Ok(()) => {}
            Err(error) => {
                if counted {
                    shared.dropped.fetch_add(1, Ordering::Relaxed);
                }
                if !failing {
                    log::error!("audit records cannot be written, and are dropped: {error}");
                    failing = true;
                }
            }
        }
    }
}

/// The audit sink's series.
#[derive(Debug)]
pub struct AuditCollector(Arc<Shared>);

impl Collector for AuditCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        encoder
            .encode_descriptor(
                "partner_api_audit_records_written",
                "Audit records written to the audit sink.",
                None,
                MetricType::Counter,
            )?
            .encode_counter::<NoLabelSet, _, u64>(&self.0.written.load(Ordering::Relaxed), None)?;
        encoder
            .encode_descriptor(
                "partner_api_audit_records_dropped",
                "Audit records dropped because the audit sink did not take them (its queue was \
                 full, the write failed, or the process stopped first). Any is a gap in the \
                 trail.",
                None,
                MetricType::Counter,
            )?
            .encode_counter::<NoLabelSet, _, u64>(&self.0.dropped.load(Ordering::Relaxed), None)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A reader that takes nothing until it is let go.
    struct Stalled(Arc<Mutex<()>>);

    impl Write for Stalled {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            drop(self.0.lock().unwrap());
            Ok(bytes.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn stalled(budget: usize) -> (AuditSink, Arc<Mutex<()>>) {
        let gate = Arc::new(Mutex::new(()));
        let writer = Stalled(Arc::clone(&gate));
        let again = Arc::clone(&gate);
        let sink = AuditSink::with_writer(Box::new(writer), budget, move || {
            Ok(Box::new(Stalled(Arc::clone(&again))))
        });
        (sink, gate)
    }

    fn settle(sink: &AuditSink, total: u64) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while sink.written() + sink.dropped() < total && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn a_stalled_reader_costs_drops_never_a_wait_and_large_records_weigh_their_bytes() {
        let (sink, gate) = stalled(4 * 100);
        let held = gate.lock().unwrap();
        let started = Instant::now();
        for _ in 0..50 {
            sink.submit(vec![b'x'; 100]);
        }
        // A record over the whole budget is never queued.
        sink.submit(vec![b'x'; 1000]);
        assert!(started.elapsed() < Duration::from_secs(5));
        // Four records' bytes queued (one of them perhaps in the writer's hands): the rest
        // dropped and counted.
        assert!((46..=47).contains(&sink.dropped()), "{}", sink.dropped());
        drop(held);
        settle(&sink, 51);
        assert_eq!(sink.written() + sink.dropped(), 51);
        assert_eq!(sink.shared.queued_bytes.load(Ordering::Relaxed), 0);
        assert_eq!(sink.shared.queue().records, 0);
    }

    #[test]
    fn what_is_left_at_shutdown_is_counted_as_dropped() {
        let (sink, gate) = stalled(QUEUE_BYTES);
        let held = gate.lock().unwrap();
        for _ in 0..5 {
            sink.submit(b"{}\n".to_vec());
        }
        sink.finish(Duration::from_millis(50));
        // One in the writer's hands when it stalled, four waiting: all counted, once.
        sink.submit(b"{}\n".to_vec());
        drop(held);
        settle(&sink, 6);
        assert_eq!(sink.written() + sink.dropped(), 6);
        assert!(sink.dropped() >= 5, "{}", sink.dropped());
    }

    /// A file that cannot be opened again after a rotation leaves records on the file opened
    /// before, which the rotation may remove: they are counted as dropped, so it pages.
    #[test]
    fn records_after_a_failed_reopen_are_counted_as_dropped() {
        let sink = AuditSink::with_writer(Box::new(io::sink()), QUEUE_BYTES, || {
            Err(io::Error::other("it is a FIFO"))
        });
        sink.submit(b"{}\n".to_vec());
        settle(&sink, 1);
        sink.reopen();
        sink.submit(b"{}\n".to_vec());
        sink.submit(b"{}\n".to_vec());
        settle(&sink, 3);
        assert_eq!((sink.written(), sink.dropped()), (1, 2));
    }
}
