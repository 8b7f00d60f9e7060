//! Generates the progenitor client from the committed 3.0.3 rendition, as a partner's build
//! would (progenitor reads OpenAPI 3.0 only). progenitor 0.15 counts a `default` response as a
//! possible success and requires one type for all successes, so it panics on an operation
//! whose 200 is a ping and whose `default` is the error envelope (its issue #950); the
//! `default` responses are dropped first, as PARTNERS.md tells a partner to do. Every error
//! status the service answers is listed beside them, so the client loses no typed error.

use std::path::Path;

fn main() {
    let rendition = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../openapi/v1.oas30.yaml");
    println!("cargo:rerun-if-changed={}", rendition.display());
    let text = std::fs::read_to_string(&rendition).expect("openapi/v1.oas30.yaml is readable");
    let mut spec: openapiv3::OpenAPI =
        yaml_serde::from_str(&text).expect("the rendition is OpenAPI 3.0");
    for item in spec.paths.paths.values_mut() {
        if let openapiv3::ReferenceOr::Item(item) = item {
            let operations = [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.options,
                &mut item.head,
                &mut item.patch,
                &mut item.trace,
            ];
            for operation in operations.into_iter().flatten() {
                operation.responses.default = None;
            }
        }
    }
    let mut generator = progenitor::Generator::default();
    let tokens = generator
        .generate_tokens(&spec)
        .expect("progenitor generates a client");
    let file = syn::parse2(tokens).expect("progenitor's output is Rust");
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).join("progenitor_client.rs");
    std::fs::write(out, prettyplease::unparse(&file)).unwrap();
}
