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

/// `text` with every key in it masked; borrowed, and scanned once, when it holds none. Every
/// `pak_` is looked at, those inside another key's characters too, so that keys run together
/// (`pak_` and 35 letters, then a whole key) are masked whole, never one key's tail left out.
pub fn keys_masked(text: &str) -> Cow<'_, str> {
    // Text shorter than a key holds none: most paths return here without the search for the
    // prefix, which would otherwise run on every request.
    if text.len() < KEY_PREFIX.len() + KEY_BODY_LEN || !text.contains(KEY_PREFIX) {
        return Cow::Borrowed(text);
    }
    // Each key found: where it starts, its prefix's length, where it ends.
    let mut keys: Vec<(usize, usize, usize)> = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find(KEY_PREFIX) {
        let at = from + found;
        let prefix = if text[at..].starts_with(TEST_KEY_PREFIX) {
            TEST_KEY_PREFIX
        } else {
            KEY_PREFIX
        };
        let body = text.as_bytes()[at + prefix.len()..]
            .iter()
            .take(KEY_BODY_LEN)
            .take_while(|byte| byte.is_ascii_alphanumeric())
            .count();
        if body == KEY_BODY_LEN {
            keys.push((at, prefix.len(), at + prefix.len() + KEY_BODY_LEN));
        }
        from = at + 1;
    }
    if keys.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut written = 0;
    let mut keys = keys.into_iter().peekable();
    while let Some((start, prefix, mut end)) = keys.next() {
        // Keys that overlap this one are masked with it.
        while let Some(&(next, _, next_end)) = keys.peek() {
            if next >= end {
                break;
            }
            end = end.max(next_end);
            keys.next();
        }
        out.push_str(&text[written..start + prefix]);
        out.push_str("[redacted]");
        written = end;
    }
    out.push_str(&text[written..]);
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
        // A key whose first characters end another key's 38: both masked, nothing left out.
        let run_on = format!("/v1/pak_{}{key}/x", "a".repeat(35));
        assert_eq!(keys_masked(&run_on), "/v1/pak_[redacted]/x");
        let run_on = format!("/v1/pak_test_{}{test_key}", "a".repeat(35));
        assert_eq!(keys_masked(&run_on), "/v1/pak_test_[redacted]");
    }
}
