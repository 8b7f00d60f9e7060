//! Generates the progenitor client from a 3.0.3 document, as a partner's build would
//! (progenitor reads OpenAPI 3.0 only): the one a server serves, saved where
//! `PARTNER_API_DOCUMENT` says (scripts/check-sdks), or else the committed rendition.
//! progenitor 0.15 counts a `default` response as a possible success and requires one type
//! for all successes, so it panics on an operation whose 200 is a ping and whose `default` is
//! the error envelope (its issue #950), and it requires one type for all errors too, so it
//! panics again on the balancer's statuses (502, 503, 504), declared without content beside
//! the envelope. Both are dropped first, as PARTNERS.md tells a partner to do: every error
//! status the service answers is listed on its own, so the client loses no typed error, and a
//! balancer's answer becomes progenitor's `Error::UnexpectedResponse`, an error to retry.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-env-changed=PARTNER_API_DOCUMENT");
    let rendition = match std::env::var_os("PARTNER_API_DOCUMENT") {
        Some(served) => Path::new(&served).to_owned(),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../openapi/v1.oas30.yaml"),
    };
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
                operation
                    .responses
                    .responses
                    .retain(|status, _| !matches!(status, openapiv3::StatusCode::Code(502..=504)));
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
