//! Partner keys: who a request comes from. A key is issued by an operator (`partner-api keys
//! issue`, `commands.rs`), printed once, and sent by the partner as `Authorization: Bearer
//! <key>`; its text and checksum are `key.rs`, the file of issued keys every replica reads is
//! `store.rs`. The request view decides once, at the edge, what a request's `Authorization`
//! header makes it ([`Caller`]): nobody, a partner's valid key, or a key refused with the code
//! saying why. Everything after the edge reads that one answer: the rate limiter (per key when
//! valid), the operation's requirement (`edge::routes`: 401 or 403 before the handler runs),
//! the handler (`context.partner()`) and the audit trail. A key never reaches a log line, a
//! metric or an error message; its id does.

pub mod commands;
pub mod key;
pub mod store;

use std::sync::Arc;

use actix_web::http::header::HeaderValue;

use self::store::{KeyStore, PartnerKey};
use crate::errors::{ApiError, ErrorCode};

/// The name of the security scheme an operation that needs a key declares:
/// `#[utoipa::path(security(("partner_key" = ["things:read"])))]`.
pub const SECURITY_SCHEME: &str = "partner_key";

/// What a request's `Authorization` header makes it; see the module documentation.
#[derive(Clone, Debug, Default)]
pub enum Caller {
    /// No `Authorization` header.
    #[default]
    Anonymous,
    /// A key in force.
    Partner(Arc<PartnerKey>),
    /// A key that cannot be used, and why: one of the 401 codes.
    Refused(ErrorCode),
    /// A key issued once, no longer in force (`key_revoked`, `key_expired`): refused like the
    /// others, and named in the audit record, so that a leaked key still tried leaves a trace.
    Stale(ErrorCode, Arc<PartnerKey>),
}

impl Caller {
    /// Decides what `authorization` (every `Authorization` field the request carries) makes a
    /// request, against `keys` at `now`.
    pub fn of<'a>(
        mut authorization: impl Iterator<Item = &'a HeaderValue>,
        keys: &KeyStore,
        now: jiff::Timestamp,
    ) -> Caller {
        let Some(first) = authorization.next() else {
            return Caller::Anonymous;
        };
        if authorization.next().is_some() {
            return Caller::Refused(ErrorCode::KeyMalformed);
        }
        let Some(text) = bearer_token(first.as_bytes()) else {
            return Caller::Refused(ErrorCode::KeyMalformed);
        };
        let Ok(digest) = key::check(text) else {
            return Caller::Refused(ErrorCode::KeyMalformed);
        };
        match keys.find(&digest) {
            None => Caller::Refused(ErrorCode::KeyUnknown),
            // A record whose mode is not its key's (the file edited by hand): a test key never
            // reaches live data, nor the reverse.
            Some(key) if key.test != key::is_test(text) => {
                log::warn!(
                    "the key {} is a {} key and its record says otherwise: refused as unknown",
                    key.id,
                    if key::is_test(text) { "test" } else { "live" }
                );
                Caller::Refused(ErrorCode::KeyUnknown)
            }
            Some(key) if key.revoked.is_some() => Caller::Stale(ErrorCode::KeyRevoked, key),
            Some(key) if key.expires.is_some_and(|expires| now >= expires) => {
                Caller::Stale(ErrorCode::KeyExpired, key)
            }
            Some(key) => Caller::Partner(key),
        }
    }

    /// The key in force, when the request has one.
    pub fn key(&self) -> Option<&Arc<PartnerKey>> {
        match self {
            Caller::Partner(key) => Some(key),
            _ => None,
        }
    }

    /// The issued key the request named, in force or not (for the audit record only: a key not
    /// in force gives no access and no quota).
    pub fn named_key(&self) -> Option<&Arc<PartnerKey>> {
        match self {
            Caller::Partner(key) | Caller::Stale(_, key) => Some(key),
            _ => None,
        }
    }

    /// The answer to a request for an operation that needs `scope`: none when the request may
    /// go on, the 401 or 403 otherwise.
    pub fn refusal_for(&self, scope: &str) -> Option<ApiError> {
        match self {
            Caller::Anonymous => Some(ApiError::new(ErrorCode::KeyMissing)),
            Caller::Refused(code) | Caller::Stale(code, _) => Some(ApiError::new(*code)),
            Caller::Partner(key) if key.has_scope(scope) => None,
            Caller::Partner(_) => Some(ApiError::new(ErrorCode::KeyScopeMissing).with_message(
                format!("The key lacks the scope this operation needs: {scope}."),
            )),
        }
    }
}

/// The token of `Bearer <token>` (RFC 6750, 2.1: the scheme in any case, one or more spaces).
fn bearer_token(value: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(value).ok()?;
    let (scheme, rest) = text.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| rest.trim_start_matches(' '))
}

#[cfg(test)]
mod tests {
    use super::store::{KeyFile, KeyRecord};
    use super::*;

    fn store_with(record: impl FnOnce(&mut KeyRecord)) -> (KeyStore, String) {
        store_of(key::IssuedKey::generate(), record)
    }

    /// A store holding `issued`'s record, as `record` changes it.
    fn store_of(issued: key::IssuedKey, record: impl FnOnce(&mut KeyRecord)) -> (KeyStore, String) {
        let mut stored = KeyRecord {
            id: "ky_1".to_owned(),
            partner: "pt_acme".to_owned(),
            scopes: vec!["things:read".to_owned()],
            digest: issued.digest().to_string(),
            created: "2026-11-01T00:00:00Z".to_owned(),
            expires: None,
            revoked: None,
            test: false,
        };
        record(&mut stored);
        let store = KeyStore::from_records(&KeyFile { keys: vec![stored] }).unwrap();
        (store, issued.expose().to_owned())
    }

    fn caller(store: &KeyStore, values: &[&str]) -> Caller {
        let values: Vec<HeaderValue> = values
            .iter()
            .map(|value| HeaderValue::from_str(value).unwrap())
            .collect();
        Caller::of(
            values.iter(),
            store,
            "2026-11-27T12:00:00Z".parse().unwrap(),
        )
    }

    fn code(caller: &Caller) -> Option<ErrorCode> {
        match caller {
            Caller::Refused(code) | Caller::Stale(code, _) => Some(*code),
            _ => None,
        }
    }

    #[test]
    fn each_way_a_key_fails_has_its_code() {
        let (store, key) = store_with(|_| {});
        assert!(matches!(caller(&store, &[]), Caller::Anonymous));
        assert!(caller(&store, &[&format!("Bearer {key}")]).key().is_some());
        assert!(caller(&store, &[&format!("bearer  {key}")]).key().is_some());
        for malformed in [
            format!("Basic {key}"),
            key.clone(),
            format!("Bearer {key}x"),
            format!("Bearer {}", key.replace("pak_", "pak-")),
            "Bearer".to_owned(),
        ] {
            assert_eq!(
                code(&caller(&store, &[&malformed])),
                Some(ErrorCode::KeyMalformed),
                "{malformed}"
            );
        }
        let twice = format!("Bearer {key}");
        assert_eq!(
            code(&caller(&store, &[&twice, &twice])),
            Some(ErrorCode::KeyMalformed)
        );
        let other = key::IssuedKey::generate();
        assert_eq!(
            code(&caller(&store, &[&format!("Bearer {}", other.expose())])),
            Some(ErrorCode::KeyUnknown)
        );
        let (expired, key) =
            store_with(|record| record.expires = Some("2026-11-27T00:00:00Z".into()));
        assert_eq!(
            code(&caller(&expired, &[&format!("Bearer {key}")])),
            Some(ErrorCode::KeyExpired)
        );
        let (later, key) =
            store_with(|record| record.expires = Some("2026-11-28T00:00:00Z".into()));
        assert!(caller(&later, &[&format!("Bearer {key}")]).key().is_some());
        let (revoked, key) =
            store_with(|record| record.revoked = Some("2026-11-20T00:00:00Z".into()));
        assert_eq!(
            code(&caller(&revoked, &[&format!("Bearer {key}")])),
            Some(ErrorCode::KeyRevoked)
        );
    }

    #[test]
    fn a_key_whose_record_says_another_mode_is_unknown() {
        let (store, key) = store_with(|record| record.test = true);
        assert_eq!(
            code(&caller(&store, &[&format!("Bearer {key}")])),
            Some(ErrorCode::KeyUnknown),
            "a live key recorded as a test key"
        );
        let (store, key) = store_of(key::IssuedKey::generate_for(true), |_| {});
        assert_eq!(
            code(&caller(&store, &[&format!("Bearer {key}")])),
            Some(ErrorCode::KeyUnknown),
            "a test key recorded as a live one"
        );
        let (store, key) = store_with(|_| {});
        assert!(
            !caller(&store, &[&format!("Bearer {key}")])
                .key()
                .unwrap()
                .test
        );
    }

    #[test]
    fn a_valid_key_without_the_scope_is_forbidden() {
        let (store, key) = store_with(|_| {});
        let partner = caller(&store, &[&format!("Bearer {key}")]);
        assert!(partner.refusal_for("things:read").is_none());
        let refusal = partner.refusal_for("things:write").unwrap();
        assert_eq!(refusal.code(), ErrorCode::KeyScopeMissing);
        assert_eq!(
            refusal.message(),
            "The key lacks the scope this operation needs: things:write."
        );
        assert_eq!(
            Caller::Anonymous.refusal_for("things:read").unwrap().code(),
            ErrorCode::KeyMissing
        );
    }
}
