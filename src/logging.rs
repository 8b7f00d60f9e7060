//! Logging: env_logger at `info` unless `RUST_LOG` says otherwise. The access log is one line
//! per request under the target `access` (see `conventions.rs`), so `RUST_LOG=info,access=off`
//! silences it alone. A panic becomes one `error` line with its location; the request-
//! conventions middleware adds a second one naming the request id.

/// Installs the logger and the panic hook. Call once, from `main`.
pub fn init() {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info"))
        .format_timestamp_micros()
        .init();
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
