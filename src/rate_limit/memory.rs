//! The in-process store: governor's keyed GCRA limiters (through actix-governor, which brings
//! it), one per policy, built once and shared by all workers (a bucket per client key in a
//! sharded concurrent map), pruned of quiet clients by one periodic task. It is the default
//! store, and the fallback of the shared one.
//!
//! The limiters are consulted directly rather than through actix-governor's middleware, which
//! did work this service then undid: it stores a result in the request's extensions, and
//! allocates `x-ratelimit-*` headers that had to be parsed and replaced by the IETF fields; its
//! 429 is plain text with a truncated wait (BENCHMARKS.md, "What profiling found").
//!
//! A decision writes the client's bucket (one compare-and-swap) and takes the lock of the map's
//! shard that holds it (dashmap's default shards). The limiters are built with governor
//! directly, where actix-governor's config would hand its limiter out as a clone of an `Arc`.

use actix_governor::governor::clock::{Clock, DefaultClock};
use actix_governor::governor::middleware::StateInformationMiddleware;
use actix_governor::governor::state::keyed::DashMapStateStore;
use actix_governor::governor::{Quota as GcraQuota, RateLimiter};
use std::num::NonZeroU32;

use super::{ClientKey, Outcome, PolicyName, Quota};

type Limiter =
    RateLimiter<ClientKey, DashMapStateStore<ClientKey>, DefaultClock, StateInformationMiddleware>;

/// One limiter per policy.
pub struct MemoryStore {
    limiters: [Limiter; 2],
}

fn limiter(quota: Quota) -> Limiter {
    let gcra = GcraQuota::with_period(quota.period())
        .expect("the period is non-zero")
        .allow_burst(NonZeroU32::new(quota.burst.max(1)).expect("at least 1"));
    Limiter::new(gcra, DashMapStateStore::default(), DefaultClock::default())
}

impl MemoryStore {
    pub fn new(api: Quota, docs: Quota) -> Self {
        MemoryStore {
            limiters: [limiter(api), limiter(docs)],
        }
    }

    /// Counts one request of `key` against `policy`.
    pub fn decide(&self, policy: PolicyName, key: ClientKey) -> Outcome {
        let limiter = &self.limiters[policy as usize];
        match limiter.check_key(&key) {
            Ok(snapshot) => Outcome::Allowed {
                remaining: snapshot.remaining_burst_capacity(),
            },
            // The limiter's own clock: building a new one (as `DefaultClock::default()` does)
            // runs CPUID, which costs a VM exit on virtual machines, per refusal.
            Err(refusal) => Outcome::Refused {
                wait: refusal.wait_time_from(limiter.clock().now()),
            },
        }
    }

    /// Drops the state of clients whose buckets are full again (they are indistinguishable
    /// from new ones) and returns the memory.
    pub fn prune(&self) {
        for limiter in &self.limiters {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
        return_free_memory();
    }

    pub fn tracked_clients(&self, policy: PolicyName) -> usize {
        self.limiters[policy as usize].len()
    }

    /// Checks `count` requests from distinct IPv4 clients against the API limiter, as if they
    /// had arrived; for memory tests of the limiter alone.
    pub fn check_distinct_clients(&self, count: u32) {
        let limiter = &self.limiters[PolicyName::Api as usize];
        for client in 0..count {
            let _ = limiter.check_key(&ClientKey::V4(client));
        }
    }
}

/// Has the allocator hand large blocks back to the system as soon as they are freed, from
/// every thread's arena. By default glibc raises its mmap threshold (up to 32 MiB) each time a
/// large block is freed, so the limiter's grown tables come from the workers' arenas instead of
/// their own mappings; pruning frees them, but memory at the top of a worker's arena stays
/// resident, which `malloc_trim` does not reach for arenas other than the main one. Fixed at
/// 128 KiB (glibc's starting values), a table of a million clients is a mapping of its own and
/// goes back whole, so pruning brings resident memory back to its starting level rather than
/// leaving it above. Blocks that size are rare on the request path (bodies are limited, the
/// reference is built once); a scrape's exposition, at its largest, is one, on the admin
/// listener.
pub fn return_large_blocks_at_once() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes the allocator's tuning; it touches no allocation. It is
    // called before any worker starts, so no other thread reads the thresholds meanwhile
    // (glibc takes the main arena's lock for it, and other arenas read them unlocked).
    unsafe {
        const LARGE_BLOCK: libc::c_int = 128 * 1024;
        libc::mallopt(libc::M_MMAP_THRESHOLD, LARGE_BLOCK);
        libc::mallopt(libc::M_TRIM_THRESHOLD, LARGE_BLOCK);
    }
}

/// Gives the memory that pruning freed back to the system. glibc keeps freed heap memory for
/// reuse (and raises its mmap threshold as the limiter's tables grow), so after a million
/// clients went quiet the process would otherwise stay at its peak size.
fn return_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator; it touches no live
    // allocation and is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A million distinct clients, then quiet: pruning drops their state and frees the map.
    #[test]
    fn pruning_forgets_a_million_quiet_clients() {
        let quota = Quota {
            per_second: 1000,
            burst: 1,
        };
        let store = MemoryStore::new(quota, quota);
        store.check_distinct_clients(1_000_000);
        assert_eq!(store.tracked_clients(PolicyName::Api), 1_000_000);
        // One request's worth of quota (1 ms) later every bucket is full again.
        std::thread::sleep(Duration::from_millis(20));
        store.prune();
        assert_eq!(store.tracked_clients(PolicyName::Api), 0);
    }

    #[test]
    fn a_burst_is_allowed_then_the_wait_is_one_period() {
        let quota = Quota {
            per_second: 10,
            burst: 3,
        };
        let store = MemoryStore::new(quota, quota);
        let key = ClientKey::V4(1);
        for remaining in [2, 1, 0] {
            assert_eq!(
                store.decide(PolicyName::Api, key),
                Outcome::Allowed { remaining }
            );
        }
        match store.decide(PolicyName::Api, key) {
            Outcome::Refused { wait } => {
                assert!(wait > Duration::from_millis(90) && wait <= Duration::from_millis(100))
            }
            other => panic!("{other:?}"),
        }
    }
}
