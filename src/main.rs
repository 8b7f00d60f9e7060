//! The `partner-api` binary: parses the command line and hands over to the library.

use std::process::ExitCode;

use partner_api::auth::commands;
use partner_api::database::{DatabaseSettings, commands as database};
use partner_api::openapi;
use partner_api::server::config::{AuditCommand, Cli, Command, EXIT_BAD_CONFIG, KeysCommand};
use partner_api::server::healthcheck;
use partner_api::server::run;
use partner_api::server::startup::Extension;

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
        Some(Command::Migrate { service_role }) => migrate(&cli, service_role.as_deref()),
        Some(Command::Audit(AuditCommand::Export {
            since,
            until,
            partner,
        })) => export(&cli, (*since, *until), partner.as_deref()),
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
            group,
            test,
        } => {
            let request = commands::Issue {
                partner,
                scopes,
                expires: expires.as_deref(),
                group: group.as_deref(),
                test: *test,
            };
            commands::issue(keys_file, &request, now, &mut out, &mut note)
        }
        KeysCommand::List { keys_file } => commands::list(keys_file, now, &mut out),
        KeysCommand::Revoke {
            keys_file,
            id,
            group,
        } => commands::revoke(keys_file, id, group.as_deref(), now, &mut note),
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("partner-api keys: {error}");
            ExitCode::from(EXIT_BAD_CONFIG)
        }
    }
}

/// The database the settings name, or exit 2 saying that one is needed.
fn database(cli: &Cli, command: &str) -> Result<DatabaseSettings, ExitCode> {
    cli.server.database().ok_or_else(|| {
        eprintln!(
            "partner-api {command}: no database: set --database-url (PARTNER_API_DATABASE_URL)"
        );
        ExitCode::from(EXIT_BAD_CONFIG)
    })
}

/// `partner-api migrate`: exit 0 with the versions applied, or 1 with one line saying why.
fn migrate(cli: &Cli, service_role: Option<&str>) -> ExitCode {
    let settings = match database(cli, "migrate") {
        Ok(settings) => settings,
        Err(code) => return code,
    };
    match database::migrate(&settings, service_role) {
        Ok(applied) if applied.is_empty() => {
            eprintln!("partner-api migrate: the schema is current; nothing applied");
            ExitCode::SUCCESS
        }
        Ok(applied) => {
            eprintln!("partner-api migrate: applied {applied:?}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("partner-api migrate: {error}");
            ExitCode::FAILURE
        }
    }
}

/// `partner-api audit export`: the records on standard output, how many on standard error.
fn export(
    cli: &Cli,
    (since, until): (jiff::Timestamp, Option<jiff::Timestamp>),
    partner: Option<&str>,
) -> ExitCode {
    let settings = match database(cli, "audit export") {
        Ok(settings) => settings,
        Err(code) => return code,
    };
    let mut out = std::io::BufWriter::new(std::io::stdout());
    match database::export(&settings, (since, until), partner, &mut out) {
        Ok((count, until)) => {
            eprintln!("partner-api audit export: {count} records from {since} to {until}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("partner-api audit export: {error}");
            ExitCode::FAILURE
        }
    }
}

fn serve(cli: &Cli) -> ExitCode {
    run::serve(&cli.server, |_| Ok(Extension::none()))
}
