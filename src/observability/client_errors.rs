//! A client's rejected request is not the server's error. actix-http writes an ERROR line,
//! `stream error: …`, for each request it rejects and answers on its own (a malformed or
//! oversized head), so a client could fill the error log at will. [`ClientErrorsAtDebug`], in
//! front of the service's logger, writes those lines at debug instead; the service records each
//! rejection itself (its access line and its count).

use log::{Level, Log, Metadata, Record};

/// Where actix-http writes the line, and how the line begins.
const TARGET: &str = "actix_http::h1::dispatcher";
const PREFIX: &str = "stream error: ";

/// The logger `L`, with the HTTP layer's lines about a client's rejected request at debug.
pub struct ClientErrorsAtDebug<L>(pub L);

impl<L: Log> Log for ClientErrorsAtDebug<L> {
    fn enabled(&self, metadata: &Metadata) -> bool {
        self.0.enabled(metadata)
    }

    fn log(&self, record: &Record) {
        if record.level() != Level::Error || record.target() != TARGET {
            return self.0.log(record);
        }
        let message = record.args().to_string();
        if !message.starts_with(PREFIX) {
            return self.0.log(record);
        }
        let at_debug = Metadata::builder()
            .level(Level::Debug)
            .target(TARGET)
            .build();
        if self.0.enabled(&at_debug) {
            self.0.log(
                &Record::builder()
                    .metadata(at_debug)
                    .args(format_args!("{message}"))
                    .module_path(record.module_path())
                    .file(record.file())
                    .line(record.line())
                    .build(),
            );
        }
    }

    fn flush(&self) {
        self.0.flush()
    }
}
