//! The example of every JSON request body, composed from its schema: each property's example
//! (its own, or its type's: `Date`'s `2026-12-01`, a `text_kind!`'s), the first alternative of
//! a nullable one, an enumeration's first value. The reference's "Try it out" starts from it
//! and the code samples send it, so a sample of a create is a request the service accepts. A
//! body one of whose required properties has no example gets none, and the project's lint
//! (`partner-request-body-example`) refuses the document: give the type an example.

use serde_json::{Map, Value};
use utoipa::openapi::{OpenApi, RefOr};

/// Writes the example of every JSON request body of `document` that has none.
pub(super) fn add_to(document: &mut OpenApi) {
    let schemas = document
        .components
        .as_ref()
        .map(|components| serde_json::to_value(&components.schemas).expect("schemas serialize"))
        .and_then(|schemas| schemas.as_object().cloned())
        .unwrap_or_default();
    for item in document.paths.paths.values_mut() {
        let operations = [
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ];
        for operation in operations.into_iter().flatten() {
            let Some(RefOr::T(body)) = &mut operation.request_body else {
                continue;
            };
            let Some(RefOr::T(content)) = body.content.get_mut("application/json") else {
                continue;
            };
            if content.example.is_some() {
                continue;
            }
            let schema = serde_json::to_value(&content.schema).expect("a schema serializes");
            content.example = example_of(&schema, &schemas, &mut Vec::new());
        }
    }
}

/// The example of `schema`, references resolved in `schemas`; `None` when a required part has
/// none. `following` holds the references being followed: one met again (a recursive type)
/// ends there, so an optional recursive part is left out and a required one leaves no example.
fn example_of(
    schema: &Value,
    schemas: &Map<String, Value>,
    following: &mut Vec<String>,
) -> Option<Value> {
    if let Some(example) = schema.get("example") {
        return Some(example.clone());
    }
    if let Some(first) = schema.get("examples").and_then(|examples| examples.get(0)) {
        return Some(first.clone());
    }
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        if following.iter().any(|followed| followed == reference) {
            return None;
        }
        let target = schemas.get(reference.strip_prefix("#/components/schemas/")?)?;
        following.push(reference.to_owned());
        let example = example_of(target, schemas, following);
        following.pop();
        return example;
    }
    if let Some(first) = schema.get("enum").and_then(|values| values.get(0)) {
        return Some(first.clone());
    }
    if let Some(constant) = schema.get("const") {
        return Some(constant.clone());
    }
    // Every part of an `allOf` holds: their examples merged, and none when one has none.
    if let Some(parts) = schema.get("allOf").and_then(Value::as_array) {
        let mut merged: Option<Value> = None;
        for part in parts {
            let example = example_of(part, schemas, following)?;
            merged = Some(match (merged, example) {
                (Some(Value::Object(mut fields)), Value::Object(more)) => {
                    fields.extend(more);
                    Value::Object(fields)
                }
                (_, example) => example,
            });
        }
        return merged;
    }
    for keyword in ["oneOf", "anyOf"] {
        if let Some(alternatives) = schema.get(keyword).and_then(Value::as_array) {
            return alternatives
                .iter()
                .filter(|alternative| alternative.get("type") != Some(&Value::from("null")))
                .find_map(|alternative| example_of(alternative, schemas, following));
        }
    }
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        let required = schema["required"].as_array().cloned().unwrap_or_default();
        let mut example = Map::new();
        for (name, property) in properties {
            match example_of(property, schemas, following) {
                Some(value) => {
                    example.insert(name.clone(), value);
                }
                None if required.contains(&Value::from(name.as_str())) => return None,
                None => {}
            }
        }
        return Some(Value::Object(example));
    }
    if let Some(items) = schema.get("items") {
        return Some(Value::Array(vec![example_of(items, schemas, following)?]));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schemas() -> Map<String, Value> {
        json!({
            "Date": {"type": "string", "format": "date", "examples": ["2026-12-01"]},
            "Label": {"type": "string", "minLength": 1, "examples": ["Morning walks"]},
            "Unnamed": {"type": "string"},
            "Status": {"type": "string", "enum": ["active", "archived"]},
            "Loop": {"type": "object", "required": ["next"], "properties": {"next": {"$ref": "#/components/schemas/Loop"}}},
            "Tree": {"type": "object", "required": ["label"], "properties": {
                "label": {"$ref": "#/components/schemas/Label"},
                "left": {"$ref": "#/components/schemas/Tree"},
                "right": {"$ref": "#/components/schemas/Tree"},
            }},
        })
        .as_object()
        .unwrap()
        .clone()
    }

    #[test]
    fn a_body_is_composed_from_its_properties_examples() {
        let body = json!({
            "type": "object",
            "required": ["label"],
            "properties": {
                "label": {"$ref": "#/components/schemas/Label", "description": "d"},
                "starts_on": {"oneOf": [{"type": "null"}, {"$ref": "#/components/schemas/Date"}]},
                "status": {"$ref": "#/components/schemas/Status"},
                "tags": {"type": "array", "items": {"$ref": "#/components/schemas/Label"}},
                "note": {"type": "string"},
            },
        });
        assert_eq!(
            example_of(&body, &schemas(), &mut Vec::new()),
            Some(json!({
                "label": "Morning walks",
                "starts_on": "2026-12-01",
                "status": "active",
                "tags": ["Morning walks"],
            }))
        );
    }

    #[test]
    fn a_required_property_without_an_example_leaves_the_body_without_one() {
        let body = json!({
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"$ref": "#/components/schemas/Unnamed"}},
        });
        assert_eq!(example_of(&body, &schemas(), &mut Vec::new()), None);
        let endless = json!({"$ref": "#/components/schemas/Loop"});
        assert_eq!(example_of(&endless, &schemas(), &mut Vec::new()), None);
    }

    #[test]
    fn a_recursive_type_is_followed_once_and_all_of_merges_every_part() {
        let tree = json!({"$ref": "#/components/schemas/Tree"});
        assert_eq!(
            example_of(&tree, &schemas(), &mut Vec::new()),
            Some(json!({"label": "Morning walks"}))
        );
        let both = json!({"allOf": [
            {"$ref": "#/components/schemas/Tree"},
            {"type": "object", "required": ["on"], "properties": {"on": {"$ref": "#/components/schemas/Date"}}},
        ]});
        assert_eq!(
            example_of(&both, &schemas(), &mut Vec::new()),
            Some(json!({"label": "Morning walks", "on": "2026-12-01"}))
        );
        let unknowable =
            json!({"allOf": [{"$ref": "#/components/schemas/Tree"}, {"type": "string"}]});
        assert_eq!(example_of(&unknowable, &schemas(), &mut Vec::new()), None);
    }
}
