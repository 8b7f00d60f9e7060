//! The process's life as a server, from the parsed settings to its exit code: logging set up,
//! the application built and started, the start line, a fatal error reported in one line with
//! its exit code (2 for a bad setting, which a supervisor must not retry), and the log's queue
//! written before the end. `partner-api` runs it with the API alone; the example servers
//! (`examples/`) with their endpoints beside it, so that they run exactly what production runs.

use std::process::ExitCode;

use super::config::{EXIT_BAD_CONFIG, ServerConfig};
use super::startup::{Application, Extension, StartupError};
use crate::database::Database;
use crate::observability::{log_sink, logging};

/// Serves with the endpoints of the extension `extension` builds (with the database the
/// settings name) beside the API's until stopped; the process's exit code.
pub fn serve<X: ?Sized + Send + Sync + 'static>(
    config: &ServerConfig,
    extension: impl FnOnce(&Database) -> Result<Extension<X>, String>,
) -> ExitCode {
    // Before any other thread exists (see its documentation).
    crate::rate_limit::memory::return_large_blocks_at_once();
    logging::init(config.log_format, config.log_when_stalled);
    let result = actix_web::rt::System::new().block_on(async {
        let application = match Application::build_with(config, extension) {
            Ok(application) => application,
            // A bad certificate, key or credential file is a bad setting: one line, exit code 2.
            Err(error @ (StartupError::Tls(_) | StartupError::Setting(_))) => {
                return Err((error.to_string(), ExitCode::from(EXIT_BAD_CONFIG)));
            }
            Err(error) => return Err((error.to_string(), ExitCode::FAILURE)),
        };
        let scheme = if config.tls_cert.is_some() {
            "https"
        } else {
            "http"
        };
        let admin = match application.admin_addr() {
            Some(addr) => format!("admin (probes, metrics) on http://{addr}"),
            None => "admin listener off".to_owned(),
        };
        log::info!(
            "partner-api {} listening on {scheme}://{} with {} workers; {admin}",
            env!("CARGO_PKG_VERSION"),
            application.local_addr(),
            config.worker_count()
        );
        application
            .run_until_stopped()
            .await
            .map_err(|error| (format!("server: {error}"), ExitCode::FAILURE))
    });
    let code = match result {
        Ok(()) => ExitCode::SUCCESS,
        Err((message, code)) => {
            logging::report_fatal(&message);
            code
        }
    };
    // What is queued is written, unless the sink is stalled: the process does not wait long.
    log_sink::finish(std::time::Duration::from_secs(2));
    code
}
