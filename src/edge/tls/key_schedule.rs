//! TLS 1.3's key schedule (HKDF) on HMAC keys prepared once, in place of the aws-lc-rs
//! provider's own, which is built for FIPS's service indicator: each of its HKDF-Expand calls
//! runs HKDF-Extract again from the secret and sets up both HMAC keys anew. SHA-384's block
//! function was the largest single cost of a full handshake, and the repeated work was a
//! tenth of the handshake's instructions (BENCHMARKS.md, "Handshakes").
//!
//! What is used instead is rustls' own generic `HkdfUsingHmac` over aws-lc's HMAC, whose keys
//! keep their inner and outer hash states: the same HKDF (RFC 5869), so the same keys on the
//! wire, checked against RFC 5869's vectors and against aws-lc-rs' HKDF below. The service
//! does not claim FIPS mode, so nothing is lost by leaving the indicator out.

use std::sync::LazyLock;

use ::aws_lc_rs::hmac as aws_hmac;
use rustls::SupportedCipherSuite;
use rustls::crypto::aws_lc_rs::ALL_CIPHER_SUITES;
use rustls::crypto::hash::HashAlgorithm;
use rustls::crypto::hmac::{Hmac, Key, Tag};
use rustls::crypto::tls13::{Hkdf, HkdfExpander, HkdfUsingHmac, OkmBlock};
use rustls::{CipherSuiteCommon, Tls13CipherSuite};

/// aws-lc's HMAC behind rustls' `Hmac`: a key is set up once, and each use copies its state.
struct PreparedHmac(aws_hmac::Algorithm);

impl Hmac for PreparedHmac {
    fn with_key(&self, key: &[u8]) -> Box<dyn Key> {
        Box::new(PreparedKey(aws_hmac::Key::new(self.0, key)))
    }

    fn hash_output_len(&self) -> usize {
        self.0.digest_algorithm().output_len()
    }
}

struct PreparedKey(aws_hmac::Key);

impl Key for PreparedKey {
    fn sign_concat(&self, first: &[u8], middle: &[&[u8]], last: &[u8]) -> Tag {
        let mut context = aws_hmac::Context::with_key(&self.0);
        context.update(first);
        for part in middle {
            context.update(part);
        }
        context.update(last);
        Tag::new(context.sign().as_ref())
    }

    fn tag_len(&self) -> usize {
        self.0.algorithm().digest_algorithm().output_len()
    }
}

/// rustls' `HkdfUsingHmac` with one change: the pseudorandom key an extraction makes (the
/// handshake and master secrets' parents) is held in an `OkmBlock`, wiped when dropped, where
/// `HkdfUsingHmac` hands it over in a `Vec` that is freed as it is.
struct PreparedHkdf(&'static PreparedHmac);

impl Hkdf for PreparedHkdf {
    fn extract_from_zero_ikm(&self, salt: Option<&[u8]>) -> Box<dyn HkdfExpander> {
        let zeroes = [0u8; Tag::MAX_LEN];
        self.extract_from_secret(salt, &zeroes[..self.0.hash_output_len()])
    }

    fn extract_from_secret(&self, salt: Option<&[u8]>, secret: &[u8]) -> Box<dyn HkdfExpander> {
        let zeroes = [0u8; Tag::MAX_LEN];
        let salt = salt.unwrap_or(&zeroes[..self.0.hash_output_len()]);
        // A `Tag` is wiped when dropped, and so is the `OkmBlock` made from it.
        let pseudorandom_key = self.0.with_key(salt).sign(&[secret]);
        self.expander_for_okm(&OkmBlock::new(pseudorandom_key.as_ref()))
    }

    fn expander_for_okm(&self, okm: &OkmBlock) -> Box<dyn HkdfExpander> {
        HkdfUsingHmac(self.0).expander_for_okm(okm)
    }

    fn hmac_sign(&self, key: &OkmBlock, message: &[u8]) -> Tag {
        HkdfUsingHmac(self.0).hmac_sign(key, message)
    }
}

static HMAC_SHA256: PreparedHmac = PreparedHmac(aws_hmac::HMAC_SHA256);
static HMAC_SHA384: PreparedHmac = PreparedHmac(aws_hmac::HMAC_SHA384);
static HKDF_SHA256: PreparedHkdf = PreparedHkdf(&HMAC_SHA256);
static HKDF_SHA384: PreparedHkdf = PreparedHkdf(&HMAC_SHA384);

/// The provider's TLS 1.3 suites with this key schedule, in the provider's order; their
/// ciphers and everything else are the provider's own.
static TLS13_SUITES: LazyLock<Vec<Tls13CipherSuite>> = LazyLock::new(|| {
    ALL_CIPHER_SUITES
        .iter()
        .filter_map(|suite| match suite {
            SupportedCipherSuite::Tls13(tls13) => Some(Tls13CipherSuite {
                hkdf_provider: hkdf_for(tls13.common.hash_provider.algorithm())?,
                common: CipherSuiteCommon {
                    suite: tls13.common.suite,
                    hash_provider: tls13.common.hash_provider,
                    confidentiality_limit: tls13.common.confidentiality_limit,
                },
                aead_alg: tls13.aead_alg,
                quic: tls13.quic,
            }),
            SupportedCipherSuite::Tls12(_) => None,
        })
        .collect()
});

/// The key schedule for `hash`; none for a hash no TLS 1.3 suite uses today, whose suite then
/// keeps the provider's own.
fn hkdf_for(hash: HashAlgorithm) -> Option<&'static dyn Hkdf> {
    match hash {
        HashAlgorithm::SHA256 => Some(&HKDF_SHA256),
        HashAlgorithm::SHA384 => Some(&HKDF_SHA384),
        _ => None,
    }
}

/// `suite` with this key schedule if it is a TLS 1.3 suite; a TLS 1.2 suite as it is (its
/// PRF does not re-derive keys).
pub fn with_prepared_key_schedule(suite: SupportedCipherSuite) -> SupportedCipherSuite {
    let SupportedCipherSuite::Tls13(tls13) = suite else {
        return suite;
    };
    TLS13_SUITES
        .iter()
        .find(|ours| ours.common.suite == tls13.common.suite)
        .map_or(suite, SupportedCipherSuite::Tls13)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::aws_lc_rs::hkdf;

    fn hex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|at| u8::from_str_radix(&text[at..at + 2], 16).unwrap())
            .collect()
    }

    fn expand(hkdf: &dyn Hkdf, salt: &[u8], secret: &[u8], info: &[u8], length: usize) -> Vec<u8> {
        let mut out = vec![0; length];
        hkdf.extract_from_secret(Some(salt), secret)
            .expand_slice(&[info], &mut out)
            .unwrap();
        out
    }

    #[test]
    fn rfc_5869_test_case_1() {
        let okm = expand(
            &HKDF_SHA256,
            &hex("000102030405060708090a0b0c"),
            &[0x0b; 22],
            &hex("f0f1f2f3f4f5f6f7f8f9"),
            42,
        );
        assert_eq!(
            okm,
            hex(
                "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"
            )
        );
    }

    #[test]
    fn rfc_5869_test_case_3_without_salt() {
        let mut okm = vec![0; 42];
        HKDF_SHA256
            .extract_from_secret(None, &[0x0b; 22])
            .expand_slice(&[], &mut okm)
            .unwrap();
        assert_eq!(
            okm,
            hex(
                "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"
            )
        );
    }

    /// SHA-384, the suite the service prefers, against aws-lc-rs' own HKDF, at the lengths the
    /// key schedule asks for (a secret, a key, an IV) and over two blocks.
    #[test]
    fn sha384_matches_aws_lc_rs_hkdf() {
        struct Length(usize);
        impl hkdf::KeyType for Length {
            fn len(&self) -> usize {
                self.0
            }
        }
        let (salt, secret, info) = (b"a salt".as_slice(), [7u8; 48], b"tls13 c hs traffic");
        for length in [48, 32, 12, 100] {
            let mut theirs = vec![0; length];
            hkdf::Salt::new(hkdf::HKDF_SHA384, salt)
                .extract(&secret)
                .expand(&[info], Length(length))
                .unwrap()
                .fill(&mut theirs)
                .unwrap();
            assert_eq!(
                expand(&HKDF_SHA384, salt, &secret, info, length),
                theirs,
                "{length} bytes"
            );
        }
    }

    #[test]
    fn every_tls13_suite_is_replaced_and_tls12_suites_are_kept() {
        for suite in ALL_CIPHER_SUITES {
            let replaced = with_prepared_key_schedule(*suite);
            assert_eq!(replaced.suite(), suite.suite());
            match (suite, replaced) {
                (SupportedCipherSuite::Tls13(theirs), SupportedCipherSuite::Tls13(ours)) => {
                    assert!(
                        !std::ptr::eq(*theirs, ours),
                        "{:?} not replaced",
                        suite.suite()
                    );
                    assert!(std::ptr::addr_eq(theirs.aead_alg, ours.aead_alg));
                    assert_eq!(
                        theirs.common.confidentiality_limit,
                        ours.common.confidentiality_limit
                    );
                }
                (SupportedCipherSuite::Tls12(theirs), SupportedCipherSuite::Tls12(ours)) => {
                    assert!(std::ptr::eq(*theirs, ours));
                }
                _ => panic!("{:?} changed version", suite.suite()),
            }
        }
    }

    /// Every method rustls calls gives what the provider's own key schedule gives, for each
    /// suite: salts absent, empty and given; secrets shorter and longer than a block; an
    /// `info` in several parts; every length up to the largest HKDF allows, and its refusal
    /// one byte past it.
    #[test]
    fn every_method_agrees_with_the_providers_own_key_schedule() {
        for suite in ALL_CIPHER_SUITES {
            let SupportedCipherSuite::Tls13(theirs) = suite else {
                continue;
            };
            let SupportedCipherSuite::Tls13(ours) = with_prepared_key_schedule(*suite) else {
                panic!("{:?} changed version", suite.suite());
            };
            let (theirs, ours) = (theirs.hkdf_provider, ours.hkdf_provider);
            let hash_len = suite.tls13().unwrap().common.hash_provider.output_len();
            for salt in [None, Some(&b""[..]), Some(&b"a salt"[..])] {
                for secret in [&b""[..], &[3u8; 48][..hash_len], &[5u8; 200][..]] {
                    agree(
                        theirs.extract_from_secret(salt, secret),
                        ours.extract_from_secret(salt, secret),
                    );
                }
                agree(
                    theirs.extract_from_zero_ikm(salt),
                    ours.extract_from_zero_ikm(salt),
                );
            }
            let okm = OkmBlock::new(&[9u8; 48][..hash_len]);
            agree(theirs.expander_for_okm(&okm), ours.expander_for_okm(&okm));
            assert_eq!(
                theirs.hmac_sign(&okm, b"finished").as_ref(),
                ours.hmac_sign(&okm, b"finished").as_ref()
            );
        }
    }

    fn agree(theirs: Box<dyn HkdfExpander>, ours: Box<dyn HkdfExpander>) {
        let hash_len = theirs.hash_len();
        assert_eq!(ours.hash_len(), hash_len);
        let info: [&[u8]; 3] = [b"tls13 ", b"c hs traffic", &[1, 2, 3]];
        assert_eq!(
            theirs.expand_block(&info).as_ref(),
            ours.expand_block(&info).as_ref()
        );
        for length in [1, 12, 32, hash_len, 2 * hash_len + 1, 255 * hash_len] {
            let (mut expected, mut got) = (vec![0; length], vec![0; length]);
            theirs.expand_slice(&info, &mut expected).unwrap();
            ours.expand_slice(&info, &mut got).unwrap();
            assert_eq!(got, expected, "{length} bytes");
        }
        let mut too_long = vec![0; 255 * hash_len + 1];
        assert!(theirs.expand_slice(&info, &mut too_long).is_err());
        assert!(ours.expand_slice(&info, &mut too_long).is_err());
    }

    /// This key schedule is not FIPS's (it leaves out the service indicator): were the build
    /// ever moved to aws-lc's FIPS module, this fails, and the provider's own must come back.
    #[test]
    fn the_build_is_not_in_fips_mode() {
        assert!(!rustls::crypto::aws_lc_rs::default_provider().fips());
    }
}
