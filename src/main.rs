//! The `partner-api` binary: parses the command line and hands over to the library.

use std::process::ExitCode;

use partner_api::config::{Cli, Command, EXIT_BAD_CONFIG};
use partner_api::startup::{Application, StartupError};
use partner_api::{healthcheck, logging, openapi};

fn main() -> ExitCode {
    let cli = Cli::parse_or_exit();
    match &cli.command {
        Some(Command::Healthcheck(args)) => healthcheck::run(args, &cli.server),
        Some(Command::Openapi { json }) => {
            let document = openapi::document();
            let text = if *json {
                openapi::to_json(&document)
            } else {
                openapi::to_yaml(&document)
            };
            print!("{text}");
            ExitCode::SUCCESS
        }
        None => serve(&cli),
    }
}

fn serve(cli: &Cli) -> ExitCode {
    logging::init();
    let result = actix_web::rt::System::new().block_on(async {
        let application = match Application::build(&cli.server) {
            Ok(application) => application,
            // A bad certificate or key is a bad setting: one line, exit code 2.
            Err(error @ StartupError::Tls(_)) => {
                return Err((format!("error: {error}"), ExitCode::from(EXIT_BAD_CONFIG)));
            }
            Err(error) => return Err((format!("error: {error}"), ExitCode::FAILURE)),
        };
        let scheme = if cli.server.tls_cert.is_some() {
            "https"
        } else {
            "http"
        };
        log::info!(
            "partner-api {} listening on {scheme}://{} with {} workers",
            env!("CARGO_PKG_VERSION"),
            application.local_addr(),
            cli.server.worker_count()
        );
        application
            .run_until_stopped()
            .await
            .map_err(|error| (format!("error: server: {error}"), ExitCode::FAILURE))
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err((message, code)) => {
            eprintln!("{message}");
            code
        }
    }
}
