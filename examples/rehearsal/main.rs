//! The rehearsal resource (`things.rs` beside this file: the endpoints the test build mounts)
//! served as a process, exactly as production serves the API: the same flags and environment
//! variables, logging, TLS, partner keys, audit trail, probes, metrics and systemd
//! notifications; the API's own endpoints beside it, both in the documents and the reference
//! it serves (its samples call it). The store holds [`things::THINGS`] things
//! of `pt_test` at start (in a database, those already there are kept). For what needs a keyed operation on member data as a running
//! service: `scripts/check-unit-systemd` (a key revoked under the shipped unit, the audit trail
//! under journald's limits), drills, benchmarks and reviews. Not a product binary: it serves
//! endpoints no partner has agreed.
//!
//! ```sh
//! cargo run --example rehearsal -- --keys-file keys.json --audit-log audit.jsonl
//! ```

mod things;

use std::process::ExitCode;

use partner_api::server::config::Cli;
use partner_api::server::run;
use partner_api::server::startup::Extension;

fn main() -> ExitCode {
    // As `partner-api`'s main does, first of all (see their documentation).
    partner_api::server::startup::ignore_hangups_until_listened();
    partner_api::edge::tls::install_provider();
    let cli = Cli::parse_or_exit();
    run::serve(&cli.server, |database| {
        let store = things::ThingStore::with_count(database, things::THINGS)?;
        Ok(Extension::new(store, things::ENDPOINTS).published())
    })
}
