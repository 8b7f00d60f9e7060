//! `Idempotency-Key` on a POST: the same key and the same request within 24 hours gets the first
//! answer again and changes nothing more; the same key with another request (another operation,
//! path or body) is refused with `idempotency_key_reused` (422); the same key while the first
//! request is still being answered, with `idempotency_key_in_use` (409). Keys are kept per partner
//! and mode (a partner's test keys' apart from its live keys'; per client address, an IPv6 /64 as
//! one, for an operation without a key), so partners cannot meet each other's, nor a test key a
//! live one's; the bounds below count each apart. Only a success is kept: after an error the same
//! key may be sent again, as the request did nothing. A request abandoned mid-way (its client gone)
//! frees its key.
//!
//! [`Replays`] keeps them in this process (each `api::table::Table` has its own), within
//! bounds counted across the whole process: 4 MiB and 10,000 keys per partner (or client), so
//! that one pushes out its own oldest first, and 32 MiB and 100,000 keys in all, past which the
//! oldest kept anywhere in the store go first. A key still being answered is never pushed out.
//! A request is kept as the SHA-256 of its method, path and body (its JSON with every object's
//! keys in order, so a body read into a map of any order is the same body). A table in the
//! database keeps its keys there instead, by the same rules ([`whose`], [`fingerprint`],
//! [`KEPT_FOR`]), in the transaction that creates the thing, so that replicas agree
//! (`api::table`).

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::write::Created;
use crate::edge::context::RequestContext;
use crate::edge::header::IdempotencyKey;
use crate::errors::{ApiError, ErrorCode};

/// How long a key is kept.
pub const KEPT_FOR: Duration = Duration::from_secs(24 * 60 * 60);

/// Keys kept at most in the process, whoever sent them.
pub const KEYS: usize = 100_000;
/// Bytes kept at most in the process (keys and answers), whoever's.
pub const BYTES: usize = 32 * 1024 * 1024;
/// Keys kept at most of one partner (or client) in one store.
pub const KEYS_EACH: usize = 10_000;
/// Bytes kept at most of one partner (or client) in one store.
pub const BYTES_EACH: usize = 4 * 1024 * 1024;

/// What every store of the process keeps, counted together against [`KEYS`] and [`BYTES`].
static KEPT_KEYS: AtomicUsize = AtomicUsize::new(0);
static KEPT_BYTES: AtomicUsize = AtomicUsize::new(0);

/// The keys of the creates answered lately; see the module documentation.
#[derive(Debug, Default)]
pub struct Replays {
    state: Mutex<State>,
}

/// What is kept, and in which order it came, whole and per partner (or client), so that the
/// oldest go first when a bound is reached.
#[derive(Debug, Default)]
struct State {
    entries: HashMap<Scoped, Entry>,
    /// Every key by the order it came.
    order: BTreeMap<u64, Scoped>,
    /// Each partner's (or client's) keys by the order they came, and their bytes.
    scopes: HashMap<String, Scope>,
    next: u64,
}

#[derive(Debug, Default)]
struct Scope {
    order: BTreeMap<u64, String>,
    bytes: usize,
}

/// A key as sent, with whose it is.
type Scoped = (String, String);

#[derive(Debug)]
struct Entry {
    /// Its place in the order keys came: which request made it.
    sequence: u64,
    /// The SHA-256 of the request the key was first sent with.
    request: [u8; 32],
    came: Instant,
    answer: Option<Created>,
    /// What it weighs against the bounds.
    bytes: usize,
}

impl Replays {
    /// Answers a create once per `key`: `create`'s answer, kept for the same key and `body`
    /// sent again, or the first answer again, or the refusal. Without a key, just `create`.
    pub async fn once<C: ?Sized, B: Serialize, F>(
        &self,
        context: &RequestContext<C>,
        key: &IdempotencyKey,
        body: &B,
        create: F,
    ) -> Result<Created, ApiError>
    where
        F: Future<Output = Result<Created, ApiError>>,
    {
        let Some(key) = &key.0 else {
            return create.await;
        };
        // A replay names the thing's member in its audit record too: the table does, which
        // knows the member of its things.
        self.once_keyed(context, key, body, create).await
    }

    async fn once_keyed<C: ?Sized, B: Serialize, F>(
        &self,
        context: &RequestContext<C>,
        key: &str,
        body: &B,
        create: F,
    ) -> Result<Created, ApiError>
    where
        F: Future<Output = Result<Created, ApiError>>,
    {
        let scoped = (whose(context), key.to_owned());
        let request = fingerprint(context, body)?;
        let sequence = {
            let mut state = self.lock();
            let limit = Instant::now().checked_sub(KEPT_FOR);
            // A few expired keys each time, so that no request pays for a day's worth at once;
            // one expired and not yet forgotten is forgotten now.
            state.forget_before(limit, 16);
            let expired = state
                .entries
                .get(&scoped)
                .is_some_and(|entry| limit.is_some_and(|limit| entry.came < limit));
            if expired {
                state.forget(&scoped, None);
            }
            match state.entries.get(&scoped) {
                Some(entry) if entry.request != request => {
                    return Err(ApiError::new(ErrorCode::IdempotencyKeyReused));
                }
                Some(Entry {
                    answer: Some(answer),
                    ..
                }) => return Ok(answer.clone()),
                Some(_) => return Err(ApiError::new(ErrorCode::IdempotencyKeyInUse)),
                None => state.remember(scoped.clone(), request),
            }
        };
        // Frees the key if the create fails or is abandoned (its future dropped).
        let mut pending = Pending {
            replays: self,
            made: Some((scoped, sequence)),
        };
        let answer = create.await?;
        if let Some((scoped, sequence)) = pending.made.take() {
            self.lock().keep(&scoped, sequence, answer.clone());
        }
        Ok(answer)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

/// Whose keys a request's are: its partner's in its key's mode (a test key's apart from the
/// live ones), or, without a key, its client's (an IPv6 /64 as one, as the rate limit counts
/// it).
pub(crate) fn whose<C: ?Sized>(context: &RequestContext<C>) -> String {
    match (
        context.partner(),
        context.client().map(|ip| ip.to_canonical()),
    ) {
        (Some(partner), _) if context.is_test() => format!("partner {partner} test"),
        (Some(partner), _) => format!("partner {partner}"),
        (None, Some(IpAddr::V6(ip))) => {
            let prefix = std::net::Ipv6Addr::from_bits(ip.to_bits() >> 64 << 64);
            format!("client {prefix}/64")
        }
        (None, Some(ip)) => format!("client {ip}"),
        (None, None) => "client unknown".to_owned(),
    }
}

/// The SHA-256 of the request: method, path, and the body's JSON with every object's keys in
/// order.
pub(crate) fn fingerprint<C: ?Sized, B: Serialize>(
    context: &RequestContext<C>,
    body: &B,
) -> Result<[u8; 32], ApiError> {
    let mut value = serde_json::to_value(body)
        .map_err(|error| ApiError::internal(format!("a body does not serialize: {error}")))?;
    value.sort_all_objects();
    let mut request = format!("{} {}\n", context.method(), context.path()).into_bytes();
    serde_json::to_writer(&mut request, &value).expect("a JSON value serializes");
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, &request);
    let mut out = [0u8; 32];
    out.copy_from_slice(digest.as_ref());
    Ok(out)
}

impl State {
    /// Remembers `scoped`, first sent with `request`, its answer to come; its sequence.
    fn remember(&mut self, scoped: Scoped, request: [u8; 32]) -> u64 {
        let bytes = 3 * scoped.1.len() + scoped.0.len() + 160;
        while self
            .scopes
            .get(&scoped.0)
            .is_some_and(|scope| scope.order.len() >= KEYS_EACH)
            && self.forget_oldest(Some(&scoped.0))
        {}
        while KEPT_KEYS.load(Ordering::Relaxed) >= KEYS && self.forget_oldest(None) {}
        let sequence = self.next;
        self.next += 1;
        self.order.insert(sequence, scoped.clone());
        let scope = self.scopes.entry(scoped.0.clone()).or_default();
        scope.order.insert(sequence, scoped.1.clone());
        scope.bytes += bytes;
        KEPT_KEYS.fetch_add(1, Ordering::Relaxed);
        KEPT_BYTES.fetch_add(bytes, Ordering::Relaxed);
        let entry = Entry {
            sequence,
            request,
            came: Instant::now(),
            answer: None,
            bytes,
        };
        self.entries.insert(scoped, entry);
        sequence
    }

    /// Keeps `answer` for the entry request `sequence` made (unless it was forgotten since),
    /// then lets the oldest answered keys go while a bound is passed.
    fn keep(&mut self, scoped: &Scoped, sequence: u64, answer: Created) {
        let Some(entry) = self.entries.get_mut(scoped) else {
            return;
        };
        if entry.sequence != sequence || entry.answer.is_some() {
            return;
        }
        let size = answer.size();
        entry.answer = Some(answer);
        entry.bytes += size;
        KEPT_BYTES.fetch_add(size, Ordering::Relaxed);
        if let Some(scope) = self.scopes.get_mut(&scoped.0) {
            scope.bytes += size;
        }
        while self
            .scopes
            .get(&scoped.0)
            .is_some_and(|scope| scope.bytes > BYTES_EACH)
            && self.forget_oldest(Some(&scoped.0))
        {}
        while KEPT_BYTES.load(Ordering::Relaxed) > BYTES && self.forget_oldest(None) {}
    }

    /// Forgets at most `at_most` of the keys that came before `limit`, oldest first (a key
    /// still being answered is left to its request).
    fn forget_before(&mut self, limit: Option<Instant>, at_most: usize) {
        let Some(limit) = limit else {
            return;
        };
        let old: Vec<Scoped> = self
            .order
            .values()
            .take(at_most)
            .filter(|scoped| {
                self.entries
                    .get(*scoped)
                    .is_some_and(|entry| entry.came < limit && entry.answer.is_some())
            })
            .cloned()
            .collect();
        for scoped in old {
            self.forget(&scoped, None);
        }
    }

    /// Forgets the oldest answered key, of `whose` or of anyone's; `false` when there is none.
    fn forget_oldest(&mut self, whose: Option<&str>) -> bool {
        let oldest = match whose {
            Some(whose) => self.scopes.get(whose).and_then(|scope| {
                scope
                    .order
                    .values()
                    .map(|key| (whose.to_owned(), key.clone()))
                    .find(|scoped| self.is_answered(scoped))
            }),
            None => self
                .order
                .values()
                .find(|scoped| self.is_answered(scoped))
                .cloned(),
        };
        match oldest {
            Some(scoped) => {
                self.forget(&scoped, None);
                true
            }
            None => false,
        }
    }

    fn is_answered(&self, scoped: &Scoped) -> bool {
        self.entries
            .get(scoped)
            .is_some_and(|entry| entry.answer.is_some())
    }

    /// Forgets `scoped`, when it is the entry request `sequence` made (any, for `None`).
    fn forget(&mut self, scoped: &Scoped, sequence: Option<u64>) {
        if sequence.is_some_and(|sequence| {
            self.entries
                .get(scoped)
                .is_none_or(|entry| entry.sequence != sequence)
        }) {
            return;
        }
        let Some(entry) = self.entries.remove(scoped) else {
            return;
        };
        self.order.remove(&entry.sequence);
        KEPT_KEYS.fetch_sub(1, Ordering::Relaxed);
        KEPT_BYTES.fetch_sub(entry.bytes, Ordering::Relaxed);
        if let Some(scope) = self.scopes.get_mut(&scoped.0) {
            scope.order.remove(&entry.sequence);
            scope.bytes -= entry.bytes;
            if scope.order.is_empty() {
                self.scopes.remove(&scoped.0);
            }
        }
    }
}

/// What a store keeps is given back to the process's bounds when it goes.
impl Drop for State {
    fn drop(&mut self) {
        let bytes: usize = self.entries.values().map(|entry| entry.bytes).sum();
        KEPT_KEYS.fetch_sub(self.entries.len(), Ordering::Relaxed);
        KEPT_BYTES.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// A key whose create has not finished: forgotten unless it finishes with an answer, and only
/// the entry its own request made.
struct Pending<'a> {
    replays: &'a Replays,
    made: Option<(Scoped, u64)>,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if let Some((scoped, sequence)) = self.made.take() {
            self.replays.lock().forget(&scoped, Some(sequence));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scoped(whose: &str, n: usize) -> Scoped {
        (whose.to_owned(), format!("k{n}"))
    }

    fn answer(bytes: usize) -> Created {
        Created::new("/v1/things/th_1", &"x".repeat(bytes)).unwrap()
    }

    /// Remembered and answered at once.
    fn kept(state: &mut State, scoped: Scoped, bytes: usize) {
        let sequence = state.remember(scoped.clone(), [0; 32]);
        state.keep(&scoped, sequence, answer(bytes));
    }

    #[test]
    fn expired_keys_are_forgotten_and_only_by_their_own_request() {
        let mut state = State::default();
        kept(&mut state, scoped("a", 1), 1);
        kept(&mut state, scoped("a", 2), 1);
        let later = Some(Instant::now() + Duration::from_secs(1));
        state.forget_before(later, 1);
        assert_eq!(state.entries.len(), 1, "one at a time");
        state.forget_before(later, 16);
        assert!(state.entries.is_empty() && state.order.is_empty() && state.scopes.is_empty());
        // A request's guard forgets its own entry, never the one a later request made.
        let first = state.remember(scoped("a", 3), [3; 32]);
        state.forget(&scoped("a", 3), Some(first));
        let second = state.remember(scoped("a", 3), [4; 32]);
        state.forget(&scoped("a", 3), Some(first));
        state.keep(&scoped("a", 3), first, answer(1));
        assert_eq!(state.entries[&scoped("a", 3)].sequence, second);
        assert!(state.entries[&scoped("a", 3)].answer.is_none());
    }

    #[test]
    fn one_partner_pushes_out_only_its_own_and_never_a_key_being_answered() {
        let mut state = State::default();
        kept(&mut state, scoped("b", 0), 1);
        let running = state.remember(scoped("a", 0), [0; 32]);
        for n in 1..KEYS_EACH + 5 {
            kept(&mut state, scoped("a", n), 1);
        }
        assert_eq!(state.scopes["a"].order.len(), KEYS_EACH);
        assert_eq!(
            state.entries[&scoped("a", 0)].sequence,
            running,
            "still being answered"
        );
        assert!(!state.entries.contains_key(&scoped("a", 1)));
        assert!(state.entries.contains_key(&scoped("b", 0)));
        // Answers over a partner's bytes: its oldest go.
        let big = BYTES_EACH / 3;
        for n in KEYS_EACH + 5..KEYS_EACH + 9 {
            kept(&mut state, scoped("a", n), big);
        }
        assert!(state.scopes["a"].bytes <= BYTES_EACH);
        assert!(state.entries[&scoped("a", KEYS_EACH + 8)].answer.is_some());
        assert!(state.entries.contains_key(&scoped("b", 0)));
        let total: usize = state.entries.values().map(|entry| entry.bytes).sum();
        let by_scope: usize = state.scopes.values().map(|scope| scope.bytes).sum();
        assert_eq!(total, by_scope);
    }
}
