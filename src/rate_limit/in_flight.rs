//! The per-client ceilings: how many requests one client (keyed like the rate limits, by IPv4
//! address or IPv6 /64) may have open at once in this process, from the head's arrival to the
//! last byte of the answer, and, with a second ceiling of the same kind, how many connections
//! one peer may hold (`server::startup` gates each new connection with it). The rate limits
//! bound how fast a client starts requests, not how long each one lasts; without a ceiling, a
//! client inside its quota that holds every request (a body it never sends, an answer it never
//! reads) kept each one until its deadline and, at ten a second, could hold hundreds of
//! descriptors at once. A request over the ceiling is refused at once with the rate limit's
//! 429. Counted per process, not across replicas: descriptors and memory are per process.
//!
//! What a request pays, and why no worker waits on another for it. Each client's count is one
//! atomic of its own, raised with a compare-and-swap that never
//! passes the ceiling and lowered when the request ends: exact, whichever worker serves which
//! of the client's requests. A worker finds the atomic through a map of its own
//! ([`WorkerCeiling`]), so a request takes no lock and writes no memory that requests of other
//! clients write; the shared map, under a lock, is read only the first time a worker sees a
//! client. A shared map alone would have every request lock one of its shards, write the map
//! twice and count a reference on a block every worker counts on (BENCHMARKS.md, "Memory
//! every worker writes"). A worker forgets clients with nothing in flight once its map
//! has doubled since it last looked (so it remembers at most about twice the clients it had in
//! flight at its last look, plus 1,024), and a client no worker remembers and nothing holds is
//! dropped from the shared map then, or by the periodic pruning. A connection's place is given
//! back, and its peer forgotten, when it closes.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::ClientKey;

/// Shards of the shared map: workers meeting new clients rarely wait for each other.
const SHARDS: usize = 16;

/// Clients a worker remembers before it first looks for ones to forget.
const FIRST_SWEEP: usize = 1024;

/// The ceiling and the counts; cheap to clone, shared by every worker.
#[derive(Clone, Debug)]
pub struct InFlightCeiling {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    max: u32,
    hasher: RandomState,
    shards: [Mutex<HashMap<ClientKey, Arc<Count>>>; SHARDS],
    /// Admissions through [`InFlightCeiling::admit`] (connections) refused since the start.
    refused: AtomicU64,
}

/// One client's requests in flight.
#[derive(Debug, Default)]
struct Count(AtomicU32);

impl Count {
    /// One more, unless that would pass `max`.
    fn raise(&self, max: u32) -> bool {
        self.0
            .fetch_update(Ordering::Acquire, Ordering::Relaxed, |count| {
                (count < max).then_some(count + 1)
            })
            .is_ok()
    }

    fn lower(&self) {
        self.0.fetch_sub(1, Ordering::Release);
    }

    fn get(&self) -> u32 {
        self.0.load(Ordering::Relaxed)
    }
}

/// One admitted connection's place under its peer's ceiling, given back when dropped; the
/// peer is forgotten then if nothing else holds its count, so closed connections from ever new
/// addresses leave nothing behind (a connection is rare enough for the lock).
pub struct InFlightSlot {
    shared: Arc<Shared>,
    key: ClientKey,
    count: Option<Arc<Count>>,
}

impl Drop for InFlightSlot {
    fn drop(&mut self) {
        if let Some(count) = self.count.take() {
            count.lower();
            self.shared.forget(self.key, count);
        }
    }
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

    /// A place for one more of `key`, or `None` when the client is at its ceiling. Takes the
    /// shared map's lock: for connections, which are rarer than requests; requests go through
    /// a [`WorkerCeiling`].
    pub fn admit(&self, key: ClientKey) -> Option<InFlightSlot> {
        let count = self.shared.count_of(key);
        if !count.raise(self.shared.max) {
            self.shared.refused.fetch_add(1, Ordering::Relaxed);
            self.shared.forget(key, count);
            return None;
        }
        Some(InFlightSlot {
            shared: Arc::clone(&self.shared),
            key,
            count: Some(count),
        })
    }

    /// The ceiling as one worker uses it; call on the worker's thread.
    pub fn for_worker(&self) -> WorkerCeiling {
        WorkerCeiling {
            shared: Arc::clone(&self.shared),
            known: RefCell::new(HashMap::new()),
            sweep_at: std::cell::Cell::new(FIRST_SWEEP),
        }
    }

    /// How many admissions of connections were refused since the start.
    pub fn refused(&self) -> u64 {
        self.shared.refused.load(Ordering::Relaxed)
    }

    /// The requests of `key` in flight now.
    pub fn count(&self, key: ClientKey) -> u32 {
        self.shared
            .shard(key)
            .get(&key)
            .map_or(0, |count| count.get())
    }

    /// Drops the clients that have nothing in flight and that no worker remembers. Called
    /// periodically by one task.
    pub fn prune(&self) {
        for shard in &self.shared.shards {
            let mut counts = lock(shard);
            counts.retain(|_, count| Arc::strong_count(count) > 1 || count.get() > 0);
            counts.shrink_to_fit();
        }
    }

    /// Clients in the shared map (remembered by a worker or with something in flight).
    pub fn tracked_clients(&self) -> usize {
        self.shared
            .shards
            .iter()
            .map(|shard| lock(shard).len())
            .sum()
    }
}

impl Shared {
    fn shard(&self, key: ClientKey) -> MutexGuard<'_, HashMap<ClientKey, Arc<Count>>> {
        lock(&self.shards[self.hasher.hash_one(key) as usize % SHARDS])
    }

    /// The count of `key`, made when the client is new.
    fn count_of(&self, key: ClientKey) -> Arc<Count> {
        Arc::clone(self.shard(key).entry(key).or_default())
    }

    /// Forgets `key` when its count, just let go of by a worker, is held by nothing else.
    fn forget(&self, key: ClientKey, count: Arc<Count>) {
        let mut counts = self.shard(key);
        drop(count);
        // Under the shard's lock nobody can take a new reference, so a count referenced only
        // by the map, with nothing in flight, is unused.
        if let Some(kept) = counts.get(&key)
            && Arc::strong_count(kept) == 1
            && kept.get() == 0
        {
            counts.remove(&key);
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while a shard was held cannot leave a count half-written: counts are atomics.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The ceiling of one worker: the counts of the clients it served, found without a lock.
pub struct WorkerCeiling {
    shared: Arc<Shared>,
    /// The clients this worker has served, each with its shared count. The `Rc` is held by
    /// each of the worker's requests in flight for the client, so a count of 1 means none.
    known: RefCell<HashMap<ClientKey, Rc<Known>>>,
    /// The size of `known` at which the worker next looks for clients to forget.
    sweep_at: std::cell::Cell<usize>,
}

/// A client a worker knows: its shared count, held by the worker's map and by each of the
/// worker's requests in flight for the client (the `Rc` around it counts those, without
/// touching the shared count's own reference count).
struct Known(Arc<Count>);

/// One admitted request's place under its client's ceiling, given back when dropped.
pub struct WorkerSlot {
    count: Rc<Known>,
}

impl Drop for WorkerSlot {
    fn drop(&mut self) {
        self.count.0.lower();
    }
}

impl WorkerCeiling {
    /// A place for one more request of `key`, or `None` when the client is at its ceiling.
    pub fn admit(&self, key: ClientKey) -> Option<WorkerSlot> {
        let count = {
            let mut known = self.known.borrow_mut();
            match known.get(&key) {
                Some(count) => Rc::clone(count),
                None => {
                    let count = Rc::new(Known(self.shared.count_of(key)));
                    known.insert(key, Rc::clone(&count));
                    count
                }
            }
        };
        if self.known.borrow().len() >= self.sweep_at.get() {
            self.sweep();
        }
        // Built only once raised: a slot lowers the count when dropped.
        if count.0.raise(self.shared.max) {
            Some(WorkerSlot { count })
        } else {
            None
        }
    }

    /// Forgets the clients with none of this worker's requests in flight, and sets the next
    /// sweep at twice the clients remembered after it: a steady set of clients is never swept,
    /// and a stream of new ones costs a constant amount per client.
    fn sweep(&self) {
        let idle: Vec<(ClientKey, Rc<Known>)> = {
            let mut known = self.known.borrow_mut();
            let idle_keys: Vec<ClientKey> = known
                .iter()
                .filter(|(_, count)| Rc::strong_count(count) == 1)
                .map(|(key, _)| *key)
                .collect();
            idle_keys
                .into_iter()
                .filter_map(|key| known.remove(&key).map(|count| (key, count)))
                .collect()
        };
        for (key, count) in idle {
            if let Ok(Known(count)) = Rc::try_unwrap(count) {
                self.shared.forget(key, count);
            }
        }
        let mut known = self.known.borrow_mut();
        known.shrink_to_fit();
        self.sweep_at.set((known.len() * 2).max(FIRST_SWEEP));
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
        assert_eq!(ceiling.refused(), 1);
        // Another client is not affected.
        let other = ceiling.admit(b).unwrap();
        drop(first);
        assert_eq!(ceiling.count(a), 1);
        assert!(ceiling.admit(a).is_some());
        drop(other);
        assert_eq!(ceiling.count(b), 0);
        assert_eq!(
            ceiling.tracked_clients(),
            1,
            "emptied entries go, held ones stay"
        );
    }

    /// Connections from ever new addresses, each closed, leave nothing behind, without
    /// waiting for the pruning.
    #[test]
    fn closed_connections_leave_no_trace() {
        let ceiling = InFlightCeiling::new(u32::MAX);
        for prefix in 0..100_000u64 {
            drop(ceiling.admit(ClientKey::V6Prefix64(prefix)));
        }
        assert_eq!(ceiling.tracked_clients(), 0);
        let refused = InFlightCeiling::new(0);
        assert!(refused.admit(ClientKey::V4(1)).is_none());
        assert_eq!(refused.tracked_clients(), 0);
    }

    /// Two workers admitting one client's requests share its ceiling exactly: the sum in
    /// flight never passes it, and a place one worker frees is the other's at once.
    #[test]
    fn workers_share_one_clients_ceiling_exactly() {
        let ceiling = InFlightCeiling::new(3);
        let key = ClientKey::V4(7);
        let (first, second) = (ceiling.for_worker(), ceiling.for_worker());
        let a = first.admit(key).unwrap();
        let _b = second.admit(key).unwrap();
        let _c = first.admit(key).unwrap();
        assert!(second.admit(key).is_none());
        assert!(first.admit(key).is_none());
        assert!(
            ceiling.admit(key).is_none(),
            "the shared path sees the same count"
        );
        drop(a);
        assert_eq!(ceiling.count(key), 2);
        let _d = second.admit(key).unwrap();
        assert!(first.admit(key).is_none());
        // Another client has its own ceiling.
        assert!(first.admit(ClientKey::V4(8)).is_some());
    }

    /// A worker that met many clients forgets the idle ones, and the shared map lets go of
    /// them too; a client with a request in flight is kept.
    #[test]
    fn idle_clients_are_forgotten_once_a_worker_has_met_many() {
        let ceiling = InFlightCeiling::new(1);
        let worker = ceiling.for_worker();
        let held = worker.admit(ClientKey::V4(u32::MAX)).unwrap();
        for client in 0..10_000u32 {
            drop(worker.admit(ClientKey::V4(client)).unwrap());
        }
        assert!(
            worker.known.borrow().len() < 2 * FIRST_SWEEP,
            "{} remembered",
            worker.known.borrow().len()
        );
        assert!(ceiling.tracked_clients() < 2 * FIRST_SWEEP);
        assert!(
            worker.admit(ClientKey::V4(u32::MAX)).is_none(),
            "still held"
        );
        drop(held);
        assert!(worker.admit(ClientKey::V4(u32::MAX)).is_some());
        drop(worker);
        ceiling.prune();
        assert_eq!(ceiling.tracked_clients(), 0);
    }
}
