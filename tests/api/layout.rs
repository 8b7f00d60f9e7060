//! The layout keeps its layers: `src/lib.rs` lists the top-level modules from the bottom up, and
//! a module may import (`crate::...`) only the modules listed before it, so no module imports
//! one that imports it back. Read from the sources, comments left out.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The top-level modules in the order `src/lib.rs` declares them.
fn declared_order(lib: &str) -> Vec<String> {
    lib.lines()
        .filter_map(|line| line.strip_prefix("pub mod "))
        .map(|rest| rest.trim_end_matches(';').to_string())
        .collect()
}

/// Every `.rs` file of top-level module `name`: `src/<name>.rs` or all of `src/<name>/`.
fn files_of(src: &Path, name: &str) -> Vec<PathBuf> {
    let file = src.join(format!("{name}.rs"));
    if file.exists() {
        return vec![file];
    }
    let mut files = Vec::new();
    let mut folders = vec![src.join(name)];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                files.push(path);
            }
        }
    }
    assert!(!files.is_empty(), "no sources for module {name}");
    files
}

/// The top-level modules `source` names as `crate::<module>`, outside comments (a macro,
/// `crate::<name>!`, is not a module).
fn imported_modules(source: &str) -> BTreeSet<String> {
    source
        .lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .flat_map(|code| code.split("crate::").skip(1))
        .filter_map(|rest| {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // `$crate::mount!` is a macro exported at the crate's root, not a module.
            let is_macro = rest[name.len()..].starts_with('!');
            (!name.is_empty() && !is_macro).then_some(name)
        })
        .collect()
}

#[test]
fn every_module_imports_only_modules_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let order = declared_order(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    assert!(order.len() >= 10, "{order:?}");
    let mut upward = Vec::new();
    for (position, module) in order.iter().enumerate() {
        for file in files_of(&src, module) {
            let source = std::fs::read_to_string(&file).unwrap();
            for imported in imported_modules(&source) {
                let Some(imported_position) = order.iter().position(|m| *m == imported) else {
                    panic!("{} names crate::{imported}, not a module", file.display());
                };
                if imported_position > position {
                    upward.push(format!("{} imports {imported}", file.display()));
                }
            }
        }
    }
    assert_eq!(upward, Vec::<String>::new(), "imports from a layer above");
}

#[test]
fn the_import_reader_sees_paths_and_skips_comments() {
    let source = "use crate::errors::ApiError;\n\
                  // see crate::server\n\
                  let x = crate::edge::routes::API_PREFIX; // crate::docs\n\
                  $crate::mount!(@split mount, [] ping);\n";
    assert_eq!(
        imported_modules(source),
        BTreeSet::from(["errors".to_string(), "edge".to_string()])
    );
}
