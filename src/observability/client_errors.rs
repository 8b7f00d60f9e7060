//! A client's doing is not the server's error. Two of the HTTP layer's crates write lines a
//! client chooses to cause: actix-http an ERROR line, `stream error: …`, for each request it
//! rejects and answers on its own (a malformed or oversized head), and h2 a WARN line for
//! each PING acknowledgement nobody asked for, and when a client's resets reach their limit.
//! A client could fill the log with them at will, and urgent lines are handed to the log sink
//! one at a time. [`ClientErrorsAtDebug`], in front of the service's logger, writes those
//! lines at debug instead; the service records each rejection itself (its access line and its
//! count), and h2 ends a connection whose client goes too far.

use log::{Level, Log, Metadata, Record};

/// Where actix-http writes its line, and how the line begins.
const DISPATCHER: &str = "actix_http::h1::dispatcher";
const STREAM_ERROR: &str = "stream error: ";

/// The logger `L`, with the HTTP layer's lines about what a client did at debug.
pub struct ClientErrorsAtDebug<L>(pub L);

impl<L: Log> ClientErrorsAtDebug<L> {
    /// `record` at debug, when the logger writes debug lines of its target.
    fn log_at_debug(&self, record: &Record, message: std::fmt::Arguments) {
        let at_debug = Metadata::builder()
            .level(Level::Debug)
            .target(record.target())
            .build();
        if self.0.enabled(&at_debug) {
            self.0.log(
                &Record::builder()
                    .metadata(at_debug)
                    .args(message)
                    .module_path(record.module_path())
                    .file(record.file())
                    .line(record.line())
                    .build(),
            );
        }
    }
}

impl<L: Log> Log for ClientErrorsAtDebug<L> {
    fn enabled(&self, metadata: &Metadata) -> bool {
        self.0.enabled(metadata)
    }

    fn log(&self, record: &Record) {
        let target = record.target();
        if record.level() == Level::Warn && (target == "h2" || target.starts_with("h2::")) {
            return self.log_at_debug(record, *record.args());
        }
        if record.level() != Level::Error || target != DISPATCHER {
            return self.0.log(record);
        }
        let message = record.args().to_string();
        if !message.starts_with(STREAM_ERROR) {
            return self.0.log(record);
        }
        self.log_at_debug(record, format_args!("{message}"));
    }

    fn flush(&self) {
        self.0.flush()
    }
}
