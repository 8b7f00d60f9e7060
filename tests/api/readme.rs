//! The README and its three guides: the guides' tables are checked against the code, so they
//! cannot drift from it, and the README stays short and leads to each guide.

use partner_api::errors::ErrorCode;

const README: &str = include_str!("../../README.md");
const PARTNERS: &str = include_str!("../../PARTNERS.md");
const OPERATIONS: &str = include_str!("../../OPERATIONS.md");

/// A newcomer reads it in minutes: what the service is, the two commands, where to read on.
#[test]
fn the_readme_is_short_and_leads_to_each_guide() {
    assert!(
        README.lines().count() <= 60,
        "README.md has grown past a page"
    );
    assert!(README.contains("cargo run --release "));
    assert!(README.contains("cargo test "));
    for guide in ["PARTNERS.md", "OPERATIONS.md", "CONTRIBUTING.md"] {
        assert!(
            README.contains(&format!("]({guide})")),
            "README.md does not link {guide}"
        );
        let path = format!("{}/{guide}", env!("CARGO_MANIFEST_DIR"));
        assert!(std::path::Path::new(&path).is_file(), "{guide} is missing");
    }
}

#[test]
fn readme_lists_every_error_code_with_its_status_and_type() {
    for code in ErrorCode::ALL {
        let spec = code.spec();
        let row = format!(
            "| {} | `{}` | `{}` |",
            spec.status.as_u16(),
            spec.code,
            spec.error_type.as_str()
        );
        assert!(
            PARTNERS.contains(&row),
            "PARTNERS.md lacks the row starting {row}"
        );
    }
}

#[test]
fn readme_documents_every_setting_of_the_command_line() {
    use clap::CommandFactory;
    let command = partner_api::server::config::Cli::command();
    for argument in command.get_arguments() {
        let Some(env) = argument.get_env() else {
            continue;
        };
        let flag = format!("`--{}`", argument.get_long().unwrap());
        let env = format!("`{}`", env.to_string_lossy());
        assert!(
            OPERATIONS
                .lines()
                .any(|line| line.contains(&flag) && line.contains(&env)),
            "OPERATIONS.md's configuration table lacks {flag} / {env}"
        );
    }
}

/// The quotas the guide and the document's description state are the defaults the service
/// starts with: said in two places for two readers, both read from one setting here.
#[test]
fn the_guide_and_the_document_state_the_default_quotas() {
    use clap::CommandFactory;
    let command = partner_api::server::config::Cli::command();
    let default = |long: &str| {
        let argument = command
            .get_arguments()
            .find(|argument| argument.get_long() == Some(long))
            .unwrap_or_else(|| panic!("no --{long}"));
        argument.get_default_values()[0]
            .to_string_lossy()
            .into_owned()
    };
    let (rate, burst) = (
        default("rate-limit-per-second"),
        default("rate-limit-burst"),
    );
    let (docs_rate, docs_burst) = (
        default("docs-rate-limit-per-second"),
        default("docs-rate-limit-burst"),
    );
    let flat = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let guide = flat(PARTNERS);
    for said in [
        format!("may send {rate} requests a second to `/v1`, with bursts of {burst} "),
        format!(
            "a separate quota applies, {docs_rate} requests a second with bursts of {docs_burst},"
        ),
    ] {
        assert!(guide.contains(&said), "PARTNERS.md does not say: {said}");
    }
    let document = partner_api::openapi::document();
    let description = flat(document.info.description.as_deref().unwrap());
    let said =
        format!("by default {rate} requests per second sustained, with bursts of up to {burst}.");
    assert!(
        description.contains(&said),
        "the document does not say: {said}"
    );
}
