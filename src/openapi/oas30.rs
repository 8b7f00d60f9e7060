//! The OpenAPI 3.0.3 rendition of the contract, for generators that read 3.0 only (progenitor,
//! among others). It is derived from the 3.1 document by the few rewrites the document needs,
//! so both always say the same thing: `type: [T, "null"]` becomes `type: T` with
//! `nullable: true`; a schema's `examples` list becomes its first `example`; `const` becomes a
//! one-value `enum`; and a schema `$ref` with sibling keywords (ignored beside `$ref` in 3.0)
//! becomes an `allOf` of that reference, keeping the description; a nullable schema written
//! `oneOf: [<schema>, {type: null}]` (what an `Option` of a named type gives) becomes that
//! schema with `nullable: true`, a reference as `allOf: [<reference>]` with the referenced
//! schema's `type` beside it (3.0's `nullable` applies only beside a `type`). That is the
//! form 3.0 generators (openapi-generator, progenitor) read as an optional value of the named
//! type; a validator that reads 3.0.3's clarification to the letter (`nullable` widens only
//! its sibling `type`, and the `allOf` still refuses null) would refuse a null there, which
//! no 3.0 form that keeps the reference avoids for every tool.
//! `openapi/v1.oas30.yaml` is exactly [`to_yaml`]'s output; a test fails when the two differ.

use serde_json::{Map, Value, json};
use utoipa::openapi::OpenApi;

/// The version the rendition declares.
pub const VERSION: &str = "3.0.3";

/// The 3.0.3 rendition of `document`.
pub fn convert(document: &OpenApi) -> Value {
    let mut value = super::canonical(document);
    let types = schema_types(&value);
    rewrite(&mut value, &types);
    value["openapi"] = json!(VERSION);
    value
}

/// The rendition as YAML: the content of `openapi/v1.oas30.yaml`.
pub fn to_yaml(document: &OpenApi) -> String {
    super::yaml::quoted_for_yaml11(
        &yaml_serde::to_string(&convert(document)).expect("the rendition serializes"),
    )
}

/// The rendition as pretty-printed JSON, with a final newline.
pub fn to_json(document: &OpenApi) -> String {
    let mut json =
        serde_json::to_string_pretty(&convert(document)).expect("the rendition serializes");
    json.push('\n');
    json
}

/// Keys whose values are data (examples, defaults, enum values), never rewritten.
const LITERAL_KEYS: [&str; 5] = ["example", "examples", "default", "enum", "const"];

/// Keys whose values map names to schemas, so a property named like a literal key is still a
/// schema.
const SCHEMA_MAP_KEYS: [&str; 3] = ["properties", "patternProperties", "schemas"];

/// The `type` of each named schema that has one, by the reference that names it
/// (`#/components/schemas/Date` → `"string"`).
fn schema_types(document: &Value) -> Map<String, Value> {
    let schemas = document["components"]["schemas"].as_object();
    schemas
        .into_iter()
        .flatten()
        .filter_map(|(name, schema)| {
            // A type list (`[string, "null"]`) names its one type beside the null.
            let kind = match schema.get("type")? {
                Value::String(_) => schema["type"].clone(),
                Value::Array(kinds) => {
                    match kinds.iter().filter(|k| *k != "null").collect::<Vec<_>>()[..] {
                        [one] => one.clone(),
                        _ => return None,
                    }
                }
                _ => return None,
            };
            Some((format!("#/components/schemas/{name}"), kind))
        })
        .collect()
}

/// Rewrites every 3.1-only construct in `value` and below it; `types` as [`schema_types`].
fn rewrite(value: &mut Value, types: &Map<String, Value>) {
    match value {
        Value::Object(object) => {
            for (key, child) in object.iter_mut() {
                match child {
                    Value::Object(named) if SCHEMA_MAP_KEYS.contains(&key.as_str()) => {
                        named.values_mut().for_each(|child| rewrite(child, types));
                    }
                    _ if LITERAL_KEYS.contains(&key.as_str()) => {}
                    _ => rewrite(child, types),
                }
            }
            rewrite_schema(object);
            rewrite_nullable_alternative(object, types);
        }
        Value::Array(items) => items.iter_mut().for_each(|item| rewrite(item, types)),
        _ => {}
    }
}

/// `oneOf` (or `anyOf`) of one schema and `{type: null}`, already rewritten below, as that
/// schema with `nullable: true`. A reference, already `allOf: [<reference>]` with its siblings
/// (or bare), gets its target's `type` beside `nullable`.
fn rewrite_nullable_alternative(object: &mut Map<String, Value>, types: &Map<String, Value>) {
    let null = json!({"type": "null"});
    // Exactly one schema (an object) beside the null; anything else is left as it is.
    let Some(keyword) = ["oneOf", "anyOf"].into_iter().find(|keyword| {
        object
            .get(*keyword)
            .and_then(Value::as_array)
            .is_some_and(|alternatives| {
                alternatives.len() == 2
                    && alternatives.contains(&null)
                    && alternatives
                        .iter()
                        .any(|schema| schema.is_object() && *schema != null)
            })
    }) else {
        return;
    };
    let Some(Value::Array(alternatives)) = object.remove(keyword) else {
        unreachable!("checked above");
    };
    let Some(Value::Object(mut schema)) = alternatives.into_iter().find(|schema| *schema != null)
    else {
        unreachable!("checked above");
    };
    if let Some(reference) = schema.remove("$ref") {
        schema.insert("allOf".to_owned(), json!([{ "$ref": reference }]));
    }
    let target = schema
        .get("allOf")
        .and_then(|all| all.get(0)?.get("$ref")?.as_str())
        .unwrap_or_default()
        .to_owned();
    // An `allOf` beside the alternatives keeps its parts, the reference after them.
    if let (Some(Value::Array(outer)), Some(Value::Array(inner))) =
        (object.remove("allOf"), schema.get_mut("allOf"))
    {
        inner.splice(0..0, outer);
    }
    if !schema.contains_key("type")
        && let Some(kind) = types.get(&target)
    {
        object.insert("type".to_owned(), kind.clone());
    }
    for (key, value) in schema {
        object.entry(key).or_insert(value);
    }
    object.insert("nullable".to_owned(), json!(true));
}

/// Rewrites `object` where it is a schema using a 3.1 construct. Each test looks at a shape
/// only a schema has (a `type` list, an `examples` list, `const`, a schema `$ref` with
/// siblings), so objects of other kinds, and maps that merely have a key named `type`, are left
/// alone.
fn rewrite_schema(object: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = object.get("type") {
        let null = json!("null");
        let others: Vec<Value> = types.iter().filter(|t| **t != null).cloned().collect();
        if others.len() == 1 {
            let nullable = others.len() < types.len();
            object.insert("type".to_owned(), others[0].clone());
            if nullable {
                object.insert("nullable".to_owned(), json!(true));
            }
        }
    }
    if let Some(Value::Array(examples)) = object.get("examples") {
        let first = examples.first().cloned();
        object.remove("examples");
        if let Some(first) = first {
            object.insert("example".to_owned(), first);
        }
    }
    if let Some(constant) = object.remove("const") {
        object.insert("enum".to_owned(), json!([constant]));
    }
    let is_schema_reference = object
        .get("$ref")
        .and_then(Value::as_str)
        .is_some_and(|target| target.starts_with("#/components/schemas/"));
    if is_schema_reference && object.len() > 1 {
        let reference = object.remove("$ref").expect("checked above");
        object.insert("allOf".to_owned(), json!([{ "$ref": reference }]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(mut value: Value) -> Value {
        let types = json!({"#/components/schemas/Date": "string"});
        rewrite(&mut value, types.as_object().unwrap());
        value
    }

    #[test]
    fn a_nullable_type_list_becomes_nullable() {
        assert_eq!(
            rewritten(json!({"type": ["string", "null"], "description": "d"})),
            json!({"type": "string", "description": "d", "nullable": true})
        );
        assert_eq!(
            rewritten(json!({"type": ["string"]})),
            json!({"type": "string"})
        );
    }

    #[test]
    fn schema_examples_become_one_example_and_media_examples_stay() {
        assert_eq!(
            rewritten(json!({"type": "string", "examples": ["a", "b"]})),
            json!({"type": "string", "example": "a"})
        );
        let media = json!({"examples": {"one": {"value": {"type": ["x"]}}}});
        assert_eq!(rewritten(media.clone()), media);
    }

    #[test]
    fn const_becomes_a_one_value_enum() {
        assert_eq!(
            rewritten(json!({"const": "ping"})),
            json!({"enum": ["ping"]})
        );
    }

    #[test]
    fn a_reference_with_siblings_becomes_all_of() {
        assert_eq!(
            rewritten(json!({"$ref": "#/components/schemas/A", "description": "d"})),
            json!({"description": "d", "allOf": [{"$ref": "#/components/schemas/A"}]})
        );
        let bare = json!({"$ref": "#/components/schemas/A"});
        assert_eq!(rewritten(bare.clone()), bare);
    }

    #[test]
    fn a_nullable_reference_becomes_all_of_with_nullable_and_the_targets_type() {
        assert_eq!(
            rewritten(json!({"oneOf": [
                {"$ref": "#/components/schemas/Date", "description": "d"},
                {"type": "null"},
            ]})),
            json!({
                "type": "string",
                "description": "d",
                "allOf": [{"$ref": "#/components/schemas/Date"}],
                "nullable": true,
            })
        );
        assert_eq!(
            rewritten(json!({"anyOf": [{"type": "null"}, {"$ref": "#/components/schemas/Date"}]})),
            json!({
                "type": "string",
                "allOf": [{"$ref": "#/components/schemas/Date"}],
                "nullable": true,
            })
        );
        assert_eq!(
            rewritten(json!({"oneOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]})),
            json!({"type": "integer", "minimum": 1, "nullable": true})
        );
        let two_kinds = json!({"oneOf": [{"type": "integer"}, {"type": "string"}]});
        assert_eq!(rewritten(two_kinds.clone()), two_kinds);
        let no_schema = json!({"oneOf": [true, {"type": "null"}]});
        assert_eq!(rewritten(no_schema.clone()), no_schema);
        assert_eq!(
            rewritten(json!({
                "allOf": [{"$ref": "#/components/schemas/Base"}],
                "oneOf": [{"$ref": "#/components/schemas/Date"}, {"type": "null"}],
            })),
            json!({
                "type": "string",
                "allOf": [
                    {"$ref": "#/components/schemas/Base"},
                    {"$ref": "#/components/schemas/Date"},
                ],
                "nullable": true,
            })
        );
    }

    #[test]
    fn examples_and_defaults_are_data_and_properties_named_like_them_are_schemas() {
        let data = json!({"default": {"type": ["x", "null"]}, "enum": [{"const": 1}]});
        assert_eq!(rewritten(data.clone()), data);
        assert_eq!(
            rewritten(json!({"properties": {"example": {"type": ["string", "null"]}}})),
            json!({"properties": {"example": {"type": "string", "nullable": true}}})
        );
    }

    #[test]
    fn a_property_named_type_is_not_taken_for_a_type_list() {
        let properties = json!({"properties": {"type": {"$ref": "#/components/schemas/T"}}});
        assert_eq!(rewritten(properties.clone()), properties);
    }

    #[test]
    fn the_rendition_has_no_construct_of_3_1() {
        let rendition = convert(&crate::openapi::document());
        assert_eq!(rendition["openapi"], VERSION);
        let text = rendition.to_string();
        for construct in [r#""null""#, r#""examples":["#, r#""const":"#] {
            assert!(
                !text.contains(construct),
                "{construct} left in the rendition"
            );
        }
    }
}
