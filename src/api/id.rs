//! A thing's public id as the contract shapes it: two lower-case letters that say what kind of
//! thing it is, an underscore, and up to 64 letters and digits (`pr_0001`). [`Id`] is the type
//! of every path parameter that names a thing: a value of another shape is refused with
//! `parameter_invalid` before a handler runs, and one of the right shape that names nothing is
//! the handler's `context.no_such`.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

use crate::edge::extract::invalid;

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
        let value = Cow::<str>::deserialize(deserializer)?;
        Id::new(&value).ok_or_else(|| {
            invalid("must be an id: two lower-case letters, _, and up to 64 letters and digits")
        })
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
