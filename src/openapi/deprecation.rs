//! Deprecated operations in the document, from the same rows the route table answers with
//! (`edge::deprecation`): each is marked `deprecated`, its description says since when and
//! until when, and its own responses name the headers it carries (the shared error
//! responses are not copied for it: the description says every answer carries them).

use serde_json::json;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::PathItem;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{Components, Deprecated, RefOr};

use super::components::header_ref;
use super::operations_mut;
use crate::edge::deprecation::Deprecation;

/// Marks the operations of `item` that `deprecations` names.
pub fn document(item: &mut PathItem, deprecations: &[Deprecation]) {
    for operation in operations_mut(item) {
        let id = operation.operation_id.as_deref().unwrap_or_default();
        let Some(row) = deprecations.iter().find(|row| row.names(id)) else {
            continue;
        };
        operation.deprecated = Some(Deprecated::True);
        let until = match row.sunset_on {
            Some(day) => format!("It stops answering on {day}."),
            None => {
                "It answers until v1 ends, which is announced at least 12 months ahead.".to_owned()
            }
        };
        let note = format!(
            "**Deprecated** since {day} (see the changelog): it keeps answering exactly as \
             before. {until} Every answer carries `Deprecation`, `Link` (`rel=\"deprecation\"`){sunset}.",
            day = row.deprecated_on,
            sunset = if row.sunset_on.is_some() {
                " and `Sunset`"
            } else {
                ""
            },
        );
        operation.description = Some(match operation.description.take() {
            Some(description) => format!("{note}\n\n{description}"),
            None => note,
        });
        let mut names = vec!["Deprecation", "Link"];
        if row.sunset_on.is_some() {
            names.push("Sunset");
        }
        for response in operation.responses.responses.values_mut() {
            if let RefOr::T(response) = response {
                for name in &names {
                    response
                        .headers
                        .insert((*name).to_owned(), header_ref(name));
                }
            }
        }
    }
}

/// The headers of deprecated operations, for `components/headers`.
pub fn add_headers(components: &mut Components) {
    let string = || ObjectBuilder::new().schema_type(Type::String);
    for (name, schema, description, example) in [
        (
            "Deprecation",
            string().pattern(Some("^@[0-9]+$")),
            "The operation is deprecated, since this moment (RFC 9745: `@` and Unix seconds).",
            "@1796083200",
        ),
        (
            "Link",
            string(),
            "Where the deprecation is announced: the changelog entry, `rel=\"deprecation\"`.",
            "</docs/changelog#2026-12-01>; rel=\"deprecation\"",
        ),
        (
            "Sunset",
            string(),
            "When the operation stops answering (RFC 8594, an HTTP-date).",
            "Fri, 31 Dec 2027 00:00:00 GMT",
        ),
    ] {
        components.headers.insert(
            name.to_owned(),
            RefOr::T(
                HeaderBuilder::new()
                    .schema(Some(schema))
                    .description(Some(description))
                    .example(Some(json!(example)))
                    .build(),
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::api;

    /// Every row of the API's table names an operation the API has and gives well-formed
    /// days.
    #[test]
    fn every_deprecation_names_an_operation_and_reads() {
        let document = serde_json::to_value(super::super::document()).unwrap();
        let ids: Vec<&str> = document["paths"]
            .as_object()
            .into_iter()
            .flatten()
            .flat_map(|(_, item)| item.as_object().unwrap().values())
            .filter_map(|operation| operation["operationId"].as_str())
            .collect();
        for row in api::ENDPOINTS.deprecations {
            assert!(ids.contains(&row.operation_id), "{row:?}");
            row.headers("").unwrap();
            // The `Link` points at the changelog entry of the release that announced it.
            let released = crate::openapi::releases::record().unwrap();
            assert!(
                released
                    .releases
                    .iter()
                    .any(|release| release.date == row.deprecated_on),
                "{row:?}: no release of {} in openapi/changelog.json",
                row.deprecated_on
            );
        }
    }
}
