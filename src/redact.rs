//! Partner keys kept out of what the service writes: a client that puts its key where a key
//! does not go (in a path: `GET /v1/pak_...`) must not find it in an error message, an access
//! line or an audit record. [`keys_masked`] writes every `pak_` followed by 38 letters and
//! digits (a key's shape, `auth::key`) as `pak_[redacted]`, and a test key, `pak_test_` and 38
//! more, as `pak_test_[redacted]`.

use std::borrow::Cow;

/// What every partner key starts with.
pub const KEY_PREFIX: &str = "pak_";

/// What every test key starts with.
pub const TEST_KEY_PREFIX: &str = "pak_test_";

/// Letters and digits after the prefix.
pub const KEY_BODY_LEN: usize = 38;

/// `text` with every key in it masked; borrowed, and scanned once, when it holds none.
pub fn keys_masked(text: &str) -> Cow<'_, str> {
    // Text shorter than a key holds none: most paths, at no cost (a search for the prefix costs
    // a ping about 240 instructions, callgrind; BENCHMARKS.md).
    if text.len() < KEY_PREFIX.len() + KEY_BODY_LEN || !text.contains(KEY_PREFIX) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(KEY_PREFIX) {
        let prefix = if rest[at..].starts_with(TEST_KEY_PREFIX) {
            TEST_KEY_PREFIX
        } else {
            KEY_PREFIX
        };
        let after = &rest[at + prefix.len()..];
        let body = after
            .bytes()
            .take(KEY_BODY_LEN)
            .take_while(u8::is_ascii_alphanumeric)
            .count();
        out.push_str(&rest[..at + prefix.len()]);
        if body == KEY_BODY_LEN {
            out.push_str("[redacted]");
            rest = &after[body..];
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_anywhere_is_masked_and_other_text_kept() {
        let key = format!("pak_{}", "a1".repeat(19));
        assert_eq!(keys_masked("/v1/ping"), "/v1/ping");
        assert_eq!(
            keys_masked(&format!("/v1/{key}/x?pak_short")),
            "/v1/pak_[redacted]/x?pak_short"
        );
        assert_eq!(
            keys_masked(&format!("{key}{key}z")),
            "pak_[redacted]pak_[redacted]z",
            "keys one after the other are each masked"
        );
        assert_eq!(keys_masked("pak_pak_"), "pak_pak_");
        // Exactly a key's length is masked; one character shorter cannot be a key.
        assert_eq!(keys_masked(&key), "pak_[redacted]");
        assert!(matches!(
            keys_masked(&key[..key.len() - 1]),
            Cow::Borrowed(_)
        ));
        let test_key = format!("pak_test_{}", "b2".repeat(19));
        assert_eq!(
            keys_masked(&format!("/v1/{test_key}/{key}")),
            "/v1/pak_test_[redacted]/pak_[redacted]"
        );
        assert_eq!(keys_masked("pak_test_short"), "pak_test_short");
    }
}
