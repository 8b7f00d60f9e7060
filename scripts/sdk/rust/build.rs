//! Generates the progenitor client from the committed 3.0.3 rendition, as a partner's build
//! would (progenitor reads OpenAPI 3.0 only).

use std::path::Path;

fn main() {
    let rendition = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../openapi/v1.oas30.yaml");
    println!("cargo:rerun-if-changed={}", rendition.display());
    let text = std::fs::read_to_string(&rendition).expect("openapi/v1.oas30.yaml is readable");
    let spec: openapiv3::OpenAPI =
        yaml_serde::from_str(&text).expect("the rendition is OpenAPI 3.0");
    let mut generator = progenitor::Generator::default();
    let tokens = generator
        .generate_tokens(&spec)
        .expect("progenitor generates a client");
    let file = syn::parse2(tokens).expect("progenitor's output is Rust");
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).join("progenitor_client.rs");
    std::fs::write(out, prettyplease::unparse(&file)).unwrap();
}
