//! The per-client ceilings: how many requests one client (keyed like the rate limits, by IPv4
//! address or IPv6 /64) may have open at once in this process, from the head's arrival to the
//! last byte of the answer, and, with a second ceiling of the same kind, how many connections
//! one peer may hold (`server::startup` gates each new connection with it). The rate limits bound how fast a client
//! starts requests, not how long each one lasts; without a ceiling, a client inside its quota
//! that holds every request (a body it never sends, an answer it never reads) kept each one
//! until its deadline and, at ten a second, could hold hundreds of descriptors at once. A
//! request over the ceiling is refused at once with the rate limit's 429. Counted per process,
//! not across replicas: descriptors and memory are per process.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::ClientKey;

/// Shards of the count map: workers admitting different clients rarely wait for each other.
const SHARDS: usize = 16;

/// The ceiling and the counts; cheap to clone, shared by every worker.
#[derive(Clone, Debug)]
pub struct InFlightCeiling {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    max: u32,
    hasher: RandomState,
    shards: [Mutex<HashMap<ClientKey, u32>>; SHARDS],
    /// Admissions refused since the start.
    refused: AtomicU64,
}

/// One admitted request's place under its client's ceiling, given back when dropped.
pub struct InFlightSlot {
    shared: Arc<Shared>,
    key: ClientKey,
}

impl InFlightCeiling {
    /// At most `max` requests in flight per client.
    pub fn new(max: u32) -> Self {
        InFlightCeiling {
            shared: Arc::new(Shared {
                max,
                hasher: RandomState::new(),
                shards: std::array::from_fn(|_| Mutex::new(HashMap::new())),
                refused: AtomicU64::new(0),
            }),
        }
    }

    /// A place for one more request of `key`, or `None` when the client is at its ceiling.
    pub fn admit(&self, key: ClientKey) -> Option<InFlightSlot> {
        let mut counts = self.shared.shard(key);
        let count = counts.entry(key).or_insert(0);
        if *count >= self.shared.max {
            drop(counts);
            self.shared.refused.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        *count += 1;
        drop(counts);
        Some(InFlightSlot {
            shared: Arc::clone(&self.shared),
            key,
        })
    }

    /// How many admissions were refused since the start.
    pub fn refused(&self) -> u64 {
        self.shared.refused.load(Ordering::Relaxed)
    }

    /// The requests of `key` in flight now.
    pub fn count(&self, key: ClientKey) -> u32 {
        self.shared.shard(key).get(&key).copied().unwrap_or(0)
    }
}

impl Shared {
    fn shard(&self, key: ClientKey) -> MutexGuard<'_, HashMap<ClientKey, u32>> {
        let shard = self.hasher.hash_one(key) as usize % SHARDS;
        // A panic while a shard was held cannot leave a count half-written.
        self.shards[shard]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Drop for InFlightSlot {
    fn drop(&mut self) {
        let mut counts = self.shared.shard(self.key);
        // A client with nothing in flight takes no room: the map holds only clients with
        // requests open, whatever number of clients came and went.
        if let Entry::Occupied(mut entry) = counts.entry(self.key) {
            *entry.get_mut() -= 1;
            if *entry.get() == 0 {
                entry.remove();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_at_its_ceiling_is_refused_until_a_request_ends() {
        let ceiling = InFlightCeiling::new(2);
        let (a, b) = (ClientKey::V4(1), ClientKey::V4(2));
        let first = ceiling.admit(a).unwrap();
        let _second = ceiling.admit(a).unwrap();
        assert!(ceiling.admit(a).is_none());
        // Another client is not affected.
        let other = ceiling.admit(b).unwrap();
        drop(first);
        assert_eq!(ceiling.count(a), 1);
        assert!(ceiling.admit(a).is_some());
        drop(other);
        assert_eq!(ceiling.count(b), 0);
        assert!(
            ceiling.shared.shard(b).get(&b).is_none(),
            "emptied entries go"
        );
    }
}
