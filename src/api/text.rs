//! Text a partner gives, of bounded length: [`text_kind!`](crate::text_kind) declares its
//! type (`text_kind!(ProgrammeName, 1, 100, "The programme's name", example = "Walk 10k")`,
//! the example for the reference, request bodies' examples and code samples), which accepts a string
//! of `MIN` to `MAX` characters (Unicode scalar values, as a person counts them, not bytes) and
//! refuses anything else with `parameter_invalid` naming the field (`it must be a string of 1
//! to 100 characters`), before a handler runs; a missing field stays `parameter_missing`. Its
//! schema says the bounds (`minLength`, `maxLength`). The character U+0000 is refused the same
//! way: no store keeps it (PostgreSQL's text and jsonb refuse it).

/// Declares a bounded text type; see the module documentation. It derefs to `str`.
#[macro_export]
macro_rules! text_kind {
    ($name:ident, $min:literal, $max:literal, $what:literal, example = $example:literal) => {
        #[doc = concat!($what, ": ", $min, " to ", $max, " characters.")]
        #[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// `value` when it has `MIN` to `MAX` characters.
            pub fn new(value: &str) -> Option<$name> {
                ($min..=$max)
                    .contains(&value.chars().count())
                    .then(|| $name(value.to_owned()))
            }
        }

        impl $name {
            /// The text, as given.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;

            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                const REQUIREMENT: &str =
                    concat!("must be a string of ", $min, " to ", $max, " characters");
                let value = $crate::edge::extract::text_of(deserializer, REQUIREMENT)?;
                // No store keeps U+0000 in text (PostgreSQL refuses it), and no person types it.
                if value.contains('\0') {
                    return Err($crate::edge::extract::invalid(
                        "must not contain the character U+0000",
                    ));
                }
                $name::new(&value).ok_or_else(|| $crate::edge::extract::invalid(REQUIREMENT))
            }
        }

        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::schema::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .min_length(Some($min))
                    .max_length(Some($max))
                    .examples([$example])
                    .description(Some(concat!(
                        $what,
                        ": ",
                        $min,
                        " to ",
                        $max,
                        " characters."
                    )))
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {
            fn name() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed(stringify!($name))
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use crate::edge::extract::parse_json;
    use crate::errors::ErrorCode;

    crate::text_kind!(Label, 1, 5, "A label", example = "Walks");

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Body {
        label: Label,
    }

    #[test]
    fn text_of_the_bounds_is_taken_and_other_text_named() {
        assert_eq!(
            parse_json::<Body>(br#"{"label":"\u00e9t\u00e9s"}"#)
                .unwrap()
                .label
                .as_str(),
            "étés"
        );
        for body in [
            r#"{"label":""}"#,
            r#"{"label":"sixsix"}"#,
            r#"{"label":5}"#,
            r#"{"label":null}"#,
        ] {
            let error = parse_json::<Body>(body.as_bytes()).unwrap_err();
            assert_eq!(
                (error.code(), error.param()),
                (ErrorCode::ParameterInvalid, Some("label")),
                "{body}"
            );
            assert_eq!(
                error.message(),
                "Invalid value for parameter label: it must be a string of 1 to 5 characters."
            );
        }
        let error = parse_json::<Body>(b"{}").unwrap_err();
        assert_eq!(
            (error.code(), error.param()),
            (ErrorCode::ParameterMissing, Some("label"))
        );
    }
}
