//! A partner key's text: `pak_`, 32 random letters and digits, and 6 more that are a checksum
//! of what comes before (GitHub's token format): `pak_` says what it is to a reader and to
//! secret scanners (the pattern `pak_[0-9A-Za-z]{38}`), and the checksum tells a mistyped or
//! cut-short key from an unknown one without a lookup. 32 characters of 62 carry 190 bits of
//! randomness, so a key cannot be guessed, and it is stored only as its SHA-256 digest
//! ([`KeyDigest`]): a key that has the digest is the key, and the file holding the digests
//! gives nobody a key.
//!
//! A test key (`keys issue --test`) is `pak_test_` and the same 38 characters: it reaches only
//! test data, so it can be given to a partner before any agreement, and its prefix tells it
//! apart in a partner's configuration, a log of theirs or a secret scanner's find (the pattern
//! `pak_(test_)?[0-9A-Za-z]{38}`).

use std::fmt;

use aws_lc_rs::digest;

/// What every key starts with.
pub const PREFIX: &str = crate::redact::KEY_PREFIX;

/// What a test key starts with: [`PREFIX`] and `test_`.
pub const TEST_PREFIX: &str = crate::redact::TEST_KEY_PREFIX;

/// Random characters after the prefix.
const RANDOM_LEN: usize = 32;

/// Characters of the checksum, after the random ones: base 62 of a CRC-32 needs 6.
const CHECKSUM_LEN: usize = 6;

// The shape `redact` masks is the shape of a key.
const _: () = assert!(RANDOM_LEN + CHECKSUM_LEN == crate::redact::KEY_BODY_LEN);

/// A key's whole length.
pub const KEY_LEN: usize = PREFIX.len() + RANDOM_LEN + CHECKSUM_LEN;

/// A test key's whole length.
pub const TEST_KEY_LEN: usize = TEST_PREFIX.len() + RANDOM_LEN + CHECKSUM_LEN;

const ALPHABET: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A key as issued: its text is shown once, to the operator who issued it, and never kept.
pub struct IssuedKey(String);

impl IssuedKey {
    /// A new random key.
    pub fn generate() -> IssuedKey {
        IssuedKey::generate_for(false)
    }

    /// A new random key, a test key when `test`.
    pub fn generate_for(test: bool) -> IssuedKey {
        let mut key = String::with_capacity(TEST_KEY_LEN);
        key.push_str(if test { TEST_PREFIX } else { PREFIX });
        key.push_str(&random_text(RANDOM_LEN));
        let checksum = checksum_text(&key);
        key.push_str(&checksum);
        IssuedKey(key)
    }

    /// The key's text, to print once.
    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn digest(&self) -> KeyDigest {
        KeyDigest::of(&self.0)
    }
}

/// Kept out of every `Debug` output: an issued key is printed on purpose only.
impl fmt::Debug for IssuedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("IssuedKey(..)")
    }
}

/// `length` letters and digits from the system's random source, each of the 62 equally likely
/// (bytes from 248 up are drawn again, so that none is favoured).
pub fn random_text(length: usize) -> String {
    let mut text = String::with_capacity(length);
    let mut bytes = [0u8; 64];
    while text.len() < length {
        aws_lc_rs::rand::fill(&mut bytes).expect("the system's random source works");
        for byte in bytes {
            if byte < 248 && text.len() < length {
                text.push(char::from(ALPHABET[usize::from(byte % 62)]));
            }
        }
    }
    text
}

/// The 6-character checksum of `text`: its CRC-32 in base 62, most significant first.
fn checksum_text(text: &str) -> String {
    let mut value = u64::from(crc32fast::hash(text.as_bytes()));
    let mut digits = [b'0'; CHECKSUM_LEN];
    for digit in digits.iter_mut().rev() {
        *digit = ALPHABET[(value % 62) as usize];
        value /= 62;
    }
    String::from_utf8(digits.to_vec()).expect("ASCII")
}

/// Why a presented text is not a key, told without a lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Malformed {
    /// Not `pak_` and 38 letters and digits.
    Shape,
    /// The shape of a key, but its checksum does not match: mistyped.
    Checksum,
}

/// Whether `text` is a test key's (`pak_test_...`); see the module documentation.
pub fn is_test(text: &str) -> bool {
    text.starts_with(TEST_PREFIX)
}

/// `text`'s digest when it is shaped like a key (a live or a test one) and its checksum
/// matches.
pub fn check(text: &str) -> Result<KeyDigest, Malformed> {
    let prefix = if is_test(text) { TEST_PREFIX } else { PREFIX };
    let shaped = text.len() == prefix.len() + RANDOM_LEN + CHECKSUM_LEN
        && text.starts_with(prefix)
        && text[prefix.len()..]
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric());
    if !shaped {
        return Err(Malformed::Shape);
    }
    let (body, checksum) = text.split_at(text.len() - CHECKSUM_LEN);
    if checksum_text(body) != checksum {
        return Err(Malformed::Checksum);
    }
    Ok(KeyDigest::of(text))
}

/// The SHA-256 digest of a key: what the key file stores and what a presented key is looked up
/// by. Written `sha256:<64 hex digits>`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyDigest([u8; 32]);

impl KeyDigest {
    fn of(key: &str) -> KeyDigest {
        let digest = digest::digest(&digest::SHA256, key.as_bytes());
        let mut bytes = [0u8; 32];
        bytes.copy_from_slice(digest.as_ref());
        KeyDigest(bytes)
    }

    /// Reads `sha256:<64 hex digits>`.
    pub fn parse(text: &str) -> Option<KeyDigest> {
        let hex = text.strip_prefix("sha256:")?;
        if hex.len() != 64 {
            return None;
        }
        let mut bytes = [0u8; 32];
        for (index, byte) in bytes.iter_mut().enumerate() {
            *byte = u8::from_str_radix(hex.get(index * 2..index * 2 + 2)?, 16).ok()?;
        }
        Some(KeyDigest(bytes))
    }
}

impl fmt::Display for KeyDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sha256:")?;
        for byte in self.0 {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for KeyDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_issued_key_has_the_prefix_the_length_and_a_matching_checksum() {
        let key = IssuedKey::generate();
        let text = key.expose();
        assert_eq!(text.len(), KEY_LEN);
        assert!(text.starts_with("pak_"));
        assert_eq!(check(text), Ok(key.digest()));
        assert_ne!(IssuedKey::generate().expose(), text);
    }

    #[test]
    fn a_mistyped_key_is_told_apart_from_a_malformed_one() {
        let key = IssuedKey::generate();
        let text = key.expose();
        // One character changed, anywhere after the prefix: the checksum catches it.
        for position in PREFIX.len()..KEY_LEN {
            let mut bytes = text.as_bytes().to_vec();
            bytes[position] = if bytes[position] == b'a' { b'b' } else { b'a' };
            let mistyped = String::from_utf8(bytes).unwrap();
            assert_eq!(check(&mistyped), Err(Malformed::Checksum), "{position}");
        }
        for malformed in [
            "",
            "pak_",
            &text[..KEY_LEN - 1],
            &format!("{text}x"),
            &text.replacen("pak_", "pk_x", 1),
            &format!("pak_{}", "-".repeat(38)),
        ] {
            assert_eq!(check(malformed), Err(Malformed::Shape), "{malformed}");
        }
    }

    #[test]
    fn a_test_key_has_its_prefix_and_checks_like_a_live_one() {
        let key = IssuedKey::generate_for(true);
        let text = key.expose();
        assert_eq!(text.len(), TEST_KEY_LEN);
        assert!(text.starts_with("pak_test_") && is_test(text));
        assert!(!is_test(IssuedKey::generate().expose()));
        assert_eq!(check(text), Ok(key.digest()));
        let mut bytes = text.as_bytes().to_vec();
        let last = bytes.len() - 1;
        bytes[last] = if bytes[last] == b'a' { b'b' } else { b'a' };
        assert_eq!(
            check(&String::from_utf8(bytes).unwrap()),
            Err(Malformed::Checksum)
        );
        // A live key's length after the test prefix is no key; a test key's body after the
        // live prefix is shaped like a live key, and its checksum (over the prefix too) fails.
        assert_eq!(check(&text[..KEY_LEN]), Err(Malformed::Shape));
        assert_eq!(
            check(&text.replacen("pak_test_", "pak_", 1)),
            Err(Malformed::Checksum)
        );
    }

    #[test]
    fn a_digest_reads_back_as_written() {
        let digest = IssuedKey::generate().digest();
        let written = digest.to_string();
        assert!(written.starts_with("sha256:") && written.len() == 71);
        assert_eq!(KeyDigest::parse(&written), Some(digest));
        assert_eq!(KeyDigest::parse("sha256:00"), None);
        assert_eq!(KeyDigest::parse(&written.replace("sha256:", "md5:")), None);
    }

    #[test]
    fn random_text_uses_every_character_of_the_alphabet() {
        let text = random_text(20_000);
        for character in ALPHABET {
            assert!(
                text.as_bytes().contains(character),
                "{}",
                *character as char
            );
        }
    }
}
