//! The `partner-api` binary: parses the command line and hands over to the library.

use std::process::ExitCode;

use partner_api::config::{Cli, Command};
use partner_api::startup::Application;
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
        let application = Application::build(&cli.server)
            .map_err(|error| format!("cannot listen on {}: {error}", cli.server.bind))?;
        log::info!(
            "partner-api {} listening on http://{} with {} workers",
            env!("CARGO_PKG_VERSION"),
            application.local_addr(),
            cli.server.worker_count()
        );
        application
            .run_until_stopped()
            .await
            .map_err(|error| format!("server error: {error}"))
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            log::error!("{message}");
            ExitCode::FAILURE
        }
    }
}
