//! Logging: env_logger at `info` unless `RUST_LOG` says otherwise, to stderr. The access log is
//! one line per request under the target `access` (see `conventions.rs`), so
//! `RUST_LOG=info,access=off` silences it alone. A panic becomes one `error` line with its
//! location; the request-conventions middleware adds a second one naming the request id.
//!
//! Writing every line with its own `write(2)` cost the service a third of its throughput, so
//! on the server's worker threads lines are gathered in a buffer of that thread (no lock is
//! shared between workers for it) and written out in batches: when the buffer passes
//! [`BATCH_BYTES`], every [`FLUSH_EVERY`] by a task on that worker, and when the worker
//! stops. Warnings and errors are written at once. Other threads write every line at once.
//! A line is therefore at most [`FLUSH_EVERY`] late, and a process killed with SIGKILL can
//! lose that much.

use std::cell::RefCell;
use std::io::{self, Write};
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

/// Bytes gathered before a worker writes them out.
pub const BATCH_BYTES: usize = 32 * 1024;
/// Longest time a line waits in a worker's buffer.
pub const FLUSH_EVERY: Duration = Duration::from_millis(50);

/// Log target of the access log, so it can be filtered on its own (`RUST_LOG=access=off`).
pub const ACCESS_LOG_TARGET: &str = "access";

/// What [`init`] found: whether the service's own logger is installed (its line format is the
/// one [`write_access_line`] reproduces) and whether `RUST_LOG` lets access lines through. The
/// filter cannot change after `init`, and asking env_logger walks its directives, twice a
/// request; so it is asked once.
static ACCESS_LOG: AtomicU8 = AtomicU8::new(OTHER_LOGGER);
/// No logger of ours (the tests): ask `log` for every line.
const OTHER_LOGGER: u8 = 0;
const BATCHED_ON: u8 = 1;
const BATCHED_OFF: u8 = 2;

/// Whether access lines are written at all, so a request whose line would be dropped does not
/// build it.
pub fn access_log_enabled() -> bool {
    match ACCESS_LOG.load(Ordering::Relaxed) {
        BATCHED_ON => true,
        BATCHED_OFF => false,
        _ => log::log_enabled!(target: ACCESS_LOG_TARGET, log::Level::Info),
    }
}

/// Writes one access line, whose text `write_line` appends to the buffer it is given (the
/// caller checked [`access_log_enabled`]). With the service's own logger (installed by
/// [`init`]) that buffer is the worker's batch itself, after env_logger's prefix: the access
/// line is the one record every request writes, and env_logger's per-record machinery (its
/// formatter, the lock around its target) cost about a tenth of a request. Under any other
/// logger (the tests'), it is an ordinary `log` record.
pub fn write_access_line(write_line: impl FnOnce(&mut Vec<u8>)) {
    let mut write_line = Some(write_line);
    if ACCESS_LOG.load(Ordering::Relaxed) == BATCHED_ON {
        let appended = BATCH.try_with(|batch| {
            let mut batch = batch.borrow_mut();
            if !batch.enabled {
                return;
            }
            let bytes = &mut batch.bytes;
            bytes.push(b'[');
            let _ = write_timestamp(bytes);
            bytes.extend_from_slice(b" INFO  ");
            bytes.extend_from_slice(ACCESS_LOG_TARGET.as_bytes());
            bytes.extend_from_slice(b"] ");
            if let Some(write_line) = write_line.take() {
                write_line(bytes);
            }
            bytes.push(b'\n');
            if bytes.len() >= BATCH_BYTES {
                batch.write_out();
            }
        });
        if appended.is_ok() && write_line.is_none() {
            return;
        }
    }
    if let Some(write_line) = write_line {
        let mut line = Vec::new();
        write_line(&mut line);
        log::info!(target: ACCESS_LOG_TARGET, "{}", String::from_utf8_lossy(&line));
    }
}

/// Installs the logger and the panic hook. Call once, from `main`.
pub fn init() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info"))
        .format(|out, record| {
            if record.level() <= log::Level::Warn {
                URGENT.with(|urgent| *urgent.borrow_mut() = true);
            }
            out.write_all(b"[")?;
            write_timestamp(out)?;
            writeln!(
                out,
                " {:<5} {}] {}",
                record.level(),
                record.target(),
                record.args()
            )
        })
        // The format above writes no colours; "always" only stops env_logger from scanning
        // every line for escape codes to strip (a tenth of the request cost when it did).
        .write_style(env_logger::WriteStyle::Always)
        .target(env_logger::Target::Pipe(Box::new(BatchedStderr)))
        .init();
    let access = if log::log_enabled!(target: ACCESS_LOG_TARGET, log::Level::Info) {
        BATCHED_ON
    } else {
        BATCHED_OFF
    };
    ACCESS_LOG.store(access, Ordering::Relaxed);
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

/// Writes the time as RFC 3339 in UTC with microseconds (`2026-11-22T06:55:23.644536Z`). The
/// date and time of day are formatted once per second per thread; only the microseconds are
/// formatted for every line.
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

/// `YYYY-MM-DDTHH:MM:SS` of a Unix time, by the civil-from-days algorithm (proleptic
/// Gregorian calendar, as RFC 3339 uses).
fn format_second(unix_secs: u64) -> [u8; 19] {
    let days = (unix_secs / 86_400) as i64;
    let second_of_day = unix_secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    let mut text = [0u8; 19];
    let mut cursor = io::Cursor::new(&mut text[..]);
    let _ = write!(
        cursor,
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        second_of_day / 3600,
        second_of_day / 60 % 60,
        second_of_day % 60
    );
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

/// A worker's gathered lines; written out when dropped, that is when the worker thread ends.
#[derive(Default)]
struct Batch {
    enabled: bool,
    bytes: Vec<u8>,
}

impl Batch {
    fn write_out(&mut self) {
        if !self.bytes.is_empty() {
            // Nowhere to report a failed log write; the bytes are dropped either way.
            let _ = io::stderr().lock().write_all(&self.bytes);
            self.bytes.clear();
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
            batch.bytes.extend_from_slice(line);
            if urgent || batch.bytes.len() >= BATCH_BYTES {
                batch.write_out();
            }
            true
        });
        if batched != Ok(true) {
            io::stderr().lock().write_all(line)?;
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

    #[test]
    fn a_timestamp_has_microseconds_and_zulu() {
        let mut out = Vec::new();
        write_timestamp(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.len(), 27, "{text}");
        assert!(text.ends_with('Z') && text.as_bytes()[19] == b'.', "{text}");
    }
}
