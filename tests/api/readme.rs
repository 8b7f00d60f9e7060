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

/// The configuration reference of OPERATIONS.md, between its two markers: one row a setting,
/// made from what `--help` prints (clap's flag, variable, default and help), so the reference
/// cannot drift from the program. `PARTNER_API_UPDATE_DOCS=1` writes it in place.
#[test]
fn the_configuration_reference_is_generated_from_the_help() {
    use clap::CommandFactory;
    const BEGIN: &str =
        "<!-- The rows below are generated from `partner-api --help` (tests/api/readme.rs). -->\n";
    const END: &str = "<!-- End of the generated rows. -->\n";
    let command = partner_api::server::config::Cli::command();
    let mut table = String::from(
        "| flag | environment variable | default | meaning |\n| --- | --- | --- | --- |\n",
    );
    for argument in command.get_arguments() {
        let Some(env) = argument.get_env() else {
            continue;
        };
        let defaults: Vec<String> = argument
            .get_default_values()
            .iter()
            .map(|value| format!("`{}`", value.to_string_lossy()))
            .collect();
        let help = argument
            .get_help()
            .map(|help| help.to_string())
            .unwrap_or_default()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .replace('|', "\\|");
        table.push_str(&format!(
            "| `--{}` | `{}` | {} | {} |\n",
            argument.get_long().unwrap(),
            env.to_string_lossy(),
            if defaults.is_empty() {
                "none".to_owned()
            } else {
                defaults.join(", ")
            },
            help
        ));
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/OPERATIONS.md");
    let text = std::fs::read_to_string(path).unwrap();
    let (before, rest) = text
        .split_once(BEGIN)
        .expect("OPERATIONS.md marks where the generated rows begin");
    let (current, after) = rest
        .split_once(END)
        .expect("OPERATIONS.md marks where the generated rows end");
    if std::env::var_os("PARTNER_API_UPDATE_DOCS").is_some() {
        std::fs::write(path, format!("{before}{BEGIN}{table}{END}{after}")).unwrap();
        return;
    }
    assert_eq!(
        current, table,
        "OPERATIONS.md's configuration reference differs from --help: run \
         PARTNER_API_UPDATE_DOCS=1 cargo test --test api readme:: and review the diff"
    );
}

/// The anchors GitHub gives a Markdown text's headings (outside code blocks).
fn heading_anchors(markdown: &str) -> Vec<String> {
    let mut anchors = Vec::new();
    let mut in_code = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if in_code || !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let anchor: String = line[hashes..]
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == '_' || *c == '-' || *c == ' ')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        anchors.push(anchor);
    }
    anchors
}

/// Every relative link of the guides names a file that exists and, where it names an anchor, a
/// heading of that file: the operators' guide is read from its links on call.
#[test]
fn the_guides_links_lead_somewhere() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let guides = [
        "README.md",
        "PARTNERS.md",
        "OPERATIONS.md",
        "CONTRIBUTING.md",
        "docs/operations/configuration.md",
        "docs/operations/deploying.md",
        "docs/operations/monitoring.md",
        "docs/operations/member-data.md",
        "docs/operations/upgrade-notes.md",
    ];
    let mut broken = Vec::new();
    for guide in guides {
        let text = std::fs::read_to_string(root.join(guide)).unwrap();
        let folder = root.join(guide).parent().unwrap().to_path_buf();
        for (at, _) in text.match_indices("](") {
            let rest = &text[at + 2..];
            let Some(end) = rest.find(')') else { continue };
            let link = &rest[..end];
            if link.contains("://") || link.starts_with("mailto:") || link.contains(' ') {
                continue;
            }
            let (file, anchor) = link.split_once('#').unwrap_or((link, ""));
            let target = if file.is_empty() {
                root.join(guide)
            } else {
                folder.join(file)
            };
            if !target.exists() {
                broken.push(format!("{guide}: {link} (no such file)"));
                continue;
            }
            if !anchor.is_empty() && target.extension().is_some_and(|e| e == "md") {
                let anchors = heading_anchors(&std::fs::read_to_string(&target).unwrap());
                if !anchors.iter().any(|known| known == anchor) {
                    broken.push(format!("{guide}: {link} (no such heading)"));
                }
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links that lead nowhere:\n{}",
        broken.join("\n")
    );
}
