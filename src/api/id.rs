//! A thing's public id as the contract shapes it: two lower-case letters that say what kind of
//! thing it is, an underscore, and up to 64 letters and digits (`pr_0001`). [`Id`] is any
//! kind's; a kind of thing declares its own id type with [`id_kind!`](crate::id_kind)
//! (`id_kind!(ProgrammeId, "pr", "programme")`), which accepts only its own prefix: a path
//! parameter or body field of another shape or kind is refused with `parameter_invalid` before a
//! handler runs (`it must be a programme's id: pr_ and up to 64 letters and digits`), and one
//! of the right shape that names nothing is the handler's `context.no_such`. A new thing's id
//! is `ProgrammeId::generate()`: the prefix and 16 random letters and digits.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

use crate::edge::extract::{invalid, text_of};

/// A public id; see the module documentation. It serializes as the string it is.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Id(String);

impl Id {
    /// The most letters and digits after the kind's prefix.
    const MAX_BODY: usize = 64;

    /// `value` when it has an id's shape.
    pub fn new(value: &str) -> Option<Id> {
        let (kind, body) = value.split_once('_')?;
        let shaped = kind.len() == 2
            && kind.bytes().all(|byte| byte.is_ascii_lowercase())
            && (1..=Id::MAX_BODY).contains(&body.len())
            && body.bytes().all(|byte| byte.is_ascii_alphanumeric());
        shaped.then(|| Id(value.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A new id of the kind `prefix` (two lower-case letters): 16 random letters and digits
    /// after it, 95 bits, so ids made apart never meet.
    pub fn generate(prefix: &str) -> Id {
        Id::new(&format!("{prefix}_{}", crate::auth::key::random_text(16)))
            .expect("a kind's prefix is two lower-case letters")
    }
}

/// Declares the id type of one kind of thing: `id_kind!(ProgrammeId, "pr", "programme");`
/// gives `ProgrammeId`, an [`Id`] whose prefix is `pr`, with `new`, `generate`, `as_str`, its
/// checks when read from a path, query or body, and its schema (`ProgrammeId`, a pattern with
/// the prefix). See the module documentation.
#[macro_export]
macro_rules! id_kind {
    ($name:ident, $prefix:literal, $kind:literal) => {
        #[doc = concat!("The id of a ", $kind, ": `", $prefix, "_` and up to 64 letters and digits.")]
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
        #[serde(transparent)]
        pub struct $name($crate::api::id::Id);

        impl $name {
            /// `value` when it is an id of this kind.
            pub fn new(value: &str) -> Option<$name> {
                let id = $crate::api::id::Id::new(value)?;
                id.as_str()
                    .starts_with(concat!($prefix, "_"))
                    .then_some($name(id))
            }

            /// A new id of this kind.
            pub fn generate() -> $name {
                $name($crate::api::id::Id::generate($prefix))
            }

            pub fn as_str(&self) -> &str {
                self.0.as_str()
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                self.0.as_str()
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.0.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                const REQUIREMENT: &str = concat!(
                    "must be a ",
                    $kind,
                    "'s id: ",
                    $prefix,
                    "_ and up to 64 letters and digits"
                );
                let value = $crate::edge::extract::text_of(deserializer, REQUIREMENT)?;
                $name::new(&value).ok_or_else(|| $crate::edge::extract::invalid(REQUIREMENT))
            }
        }

        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::schema::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .pattern(Some(concat!("^", $prefix, "_[A-Za-z0-9]{1,64}$")))
                    .examples([concat!($prefix, "_0001")])
                    .description(Some(concat!(
                        "The id of a ",
                        $kind,
                        ": it never changes, so store it as given."
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

/// An id is looked up by its text (`table.get(path.programme.as_str())`, a table's range after a
/// cursor); the derived order is the text's, so the two agree.
impl std::borrow::Borrow<str> for Id {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Id {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const REQUIREMENT: &str =
            "must be an id: two lower-case letters, _, and up to 64 letters and digits";
        let value = text_of(deserializer, REQUIREMENT)?;
        Id::new(&value).ok_or_else(|| invalid(REQUIREMENT))
    }
}

impl PartialSchema for Id {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some("^[a-z]{2}_[A-Za-z0-9]{1,64}$"))
            .description(Some(
                "A public id: it never changes, so store it as given; its first two letters say \
                 what kind of thing it is.",
            ))
            .into()
    }
}

impl ToSchema for Id {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Id")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::id_kind!(ProgrammeId, "pr", "programme");

    #[test]
    fn a_kinds_id_takes_only_its_own_prefix() {
        assert_eq!(ProgrammeId::new("pr_0001").unwrap().as_str(), "pr_0001");
        assert!(ProgrammeId::new("en_0001").is_none());
        assert!(ProgrammeId::new("pr-0001").is_none());
        let made = ProgrammeId::generate();
        assert!(made.as_str().starts_with("pr_") && made.as_str().len() == 19);
        assert_ne!(ProgrammeId::generate(), made);
        let error = crate::edge::extract::parse_query::<Path>("programme=en_0001").unwrap_err();
        assert_eq!(error.code(), crate::errors::ErrorCode::ParameterInvalid);
        assert_eq!(
            error.message(),
            "Invalid value for parameter programme: it must be a programme's id: pr_ and up \
             to 64 letters and digits."
        );
    }

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Path {
        programme: ProgrammeId,
    }

    #[test]
    fn an_id_is_two_letters_an_underscore_and_letters_and_digits() {
        for good in [
            "pr_0001",
            "th_a",
            "en_4f2aB9",
            &format!("xy_{}", "9".repeat(64)),
        ] {
            assert_eq!(
                Id::new(good).map(|id| id.to_string()),
                Some(good.to_owned())
            );
        }
        for bad in [
            "",
            "pr",
            "pr_",
            "p_01",
            "pro_01",
            "PR_01",
            "pr-01",
            "pr_0 1",
            "pr_01_2",
            "pr_é",
            &format!("xy_{}", "9".repeat(65)),
        ] {
            assert!(Id::new(bad).is_none(), "{bad}");
        }
    }
}
