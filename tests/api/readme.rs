//! The README's tables are checked against the code, so they cannot drift from it.

use partner_api::errors::ErrorCode;

const README: &str = include_str!("../../README.md");

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
        assert!(README.contains(&row), "README lacks the row starting {row}");
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
            README
                .lines()
                .any(|line| line.contains(&flag) && line.contains(&env)),
            "README's configuration table lacks {flag} / {env}"
        );
    }
}
