//! The `partner-api` binary: parses the command line and hands over to the library.

use std::process::ExitCode;

use partner_api::auth::commands;
use partner_api::observability::{log_sink, logging};
use partner_api::openapi;
use partner_api::server::config::{Cli, Command, EXIT_BAD_CONFIG, KeysCommand};
use partner_api::server::healthcheck;
use partner_api::server::startup::{Application, StartupError};

fn main() -> ExitCode {
    // Before anything else, and before any other thread exists (see its documentation).
    partner_api::server::startup::ignore_hangups_until_listened();
    // One crypto provider for every TLS connection, the shared store's client's included.
    partner_api::edge::tls::install_provider();
    let cli = Cli::parse_or_exit();
    match &cli.command {
        Some(Command::Healthcheck(args)) => healthcheck::run(args, &cli.server),
        Some(Command::Openapi { json, oas30 }) => {
            let document = openapi::document();
            let text = match (*json, *oas30) {
                (false, false) => openapi::to_yaml(&document),
                (true, false) => openapi::to_json(&document),
                (false, true) => openapi::oas30::to_yaml(&document),
                (true, true) => openapi::oas30::to_json(&document),
            };
            print!("{text}");
            ExitCode::SUCCESS
        }
        Some(Command::Keys(command)) => keys(command),
        None => serve(&cli),
    }
}

/// `partner-api keys ...`: exit 0, or 2 with one line saying why.
fn keys(command: &KeysCommand) -> ExitCode {
    let now = jiff::Timestamp::now();
    let (mut out, mut note) = (std::io::stdout(), std::io::stderr());
    let done = match command {
        KeysCommand::Issue {
            keys_file,
            partner,
            scopes,
            expires,
        } => {
            let request = commands::Issue {
                partner,
                scopes,
                expires: expires.as_deref(),
            };
            commands::issue(keys_file, &request, now, &mut out, &mut note)
        }
        KeysCommand::List { keys_file } => commands::list(keys_file, now, &mut out),
        KeysCommand::Revoke { keys_file, id } => commands::revoke(keys_file, id, now, &mut note),
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("partner-api keys: {error}");
            ExitCode::from(EXIT_BAD_CONFIG)
        }
    }
}

fn serve(cli: &Cli) -> ExitCode {
    // Before any other thread exists (see its documentation).
    partner_api::rate_limit::memory::return_large_blocks_at_once();
    logging::init(cli.server.log_format, cli.server.log_when_stalled);
    let result = actix_web::rt::System::new().block_on(async {
        let application = match Application::build(&cli.server) {
            Ok(application) => application,
            // A bad certificate, key or credential file is a bad setting: one line, exit code 2.
            Err(error @ (StartupError::Tls(_) | StartupError::Setting(_))) => {
                return Err((error.to_string(), ExitCode::from(EXIT_BAD_CONFIG)));
            }
            Err(error) => return Err((error.to_string(), ExitCode::FAILURE)),
        };
        let scheme = if cli.server.tls_cert.is_some() {
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
            cli.server.worker_count()
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
