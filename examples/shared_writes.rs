//! What memory that every worker writes costs a request, operation by operation: each
//! per-request operation that wrote (or writes) memory shared by the workers, run in a loop by
//! one thread, then by two threads at once (as two workers would, each on its core), for one
//! client (both threads on the same key: the case of a load test or a partner behind one
//! address) and for many (each thread its own keys). Prints nanoseconds per operation; the
//! figures in BENCHMARKS.md ("Memory every worker writes") come from it.
//!
//! Usage: `cargo run --release --example shared_writes [MILLION_OPERATIONS]` (default 2 per
//! thread; each figure the median of five runs). Threads are not pinned: on a machine with as many cores as threads, each runs on
//! its own. A benchmark, not a test: nothing here judges the figures.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::Instant;

use actix_governor::governor::{Quota as GcraQuota, RateLimiter};
use actix_web::http::header::HeaderValue;
use partner_api::rate_limit::ClientKey;
use partner_api::rate_limit::in_flight::InFlightCeiling;
use partner_api::rate_limit::memory::MemoryStore;
use partner_api::rate_limit::{PolicyName, Quota};
use std::num::NonZeroU32;

/// The in-flight ceiling as it was: sixteen mutex-guarded shards of a shared map, and a
/// reference counted on the shared block for each request's slot.
struct OldCeiling {
    hasher: RandomState,
    shards: [Mutex<HashMap<ClientKey, u32>>; 16],
}

impl OldCeiling {
    fn admit_and_release(self: &Arc<Self>, key: ClientKey) {
        let shard = &self.shards[self.hasher.hash_one(key) as usize % 16];
        *shard.lock().unwrap().entry(key).or_insert(0) += 1;
        let slot = Arc::clone(self);
        let mut counts = slot.shards[self.hasher.hash_one(key) as usize % 16]
            .lock()
            .unwrap();
        let count = counts.get_mut(&key).unwrap();
        *count -= 1;
        if *count == 0 {
            counts.remove(&key);
        }
    }
}

/// Runs `operation(thread, i)` `count` times on each of `threads` threads, started together;
/// nanoseconds per operation, by the slowest thread.
fn measure<F>(threads: usize, count: u64, operation: F) -> f64
where
    F: Fn(usize, u64) + Sync,
{
    let barrier = Barrier::new(threads);
    let slowest = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|thread| {
                let (barrier, operation) = (&barrier, &operation);
                scope.spawn(move || {
                    barrier.wait();
                    let started = Instant::now();
                    for i in 0..count {
                        operation(thread, i);
                    }
                    started.elapsed()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("a measuring thread panicked"))
            .max()
            .expect("at least one thread")
    });
    slowest.as_nanos() as f64 / count as f64
}

fn report<F>(name: &str, count: u64, operation: F)
where
    F: Fn(usize, u64) + Sync,
{
    // A first pass warms the caches and the maps; then the median of five runs of each, as a
    // VM's neighbours and the scheduler move single runs by a factor of two.
    measure(2, count / 10, &operation);
    let median = |threads: usize| {
        let mut runs: Vec<f64> = (0..5)
            .map(|_| measure(threads, count, &operation))
            .collect();
        runs.sort_by(f64::total_cmp);
        runs[2]
    };
    let (one, two) = (median(1), median(2));
    println!("| {name} | {one:.1} | {two:.1} | {:.2} |", two / one);
}

fn main() {
    let millions: u64 = std::env::args()
        .nth(1)
        .and_then(|arg| arg.parse().ok())
        .unwrap_or(2);
    let count = millions * 1_000_000;
    let one = |_: usize| ClientKey::V4(1);
    // Many clients: each thread serves 32 of its own, in turn, as a worker serves its connections.
    let many = |thread: usize, i: u64| ClientKey::V4(1000 + 32 * thread as u32 + (i % 32) as u32);
    println!("{count} operations per thread; nanoseconds per operation, by the slowest thread");
    println!();
    println!("| operation | one thread | two threads at once | two / one |");
    println!("| --- | ---: | ---: | ---: |");

    let old = Arc::new(OldCeiling {
        hasher: RandomState::new(),
        shards: std::array::from_fn(|_| Mutex::new(HashMap::new())),
    });
    report(
        "in-flight ceiling before: admit and release, one client",
        count,
        |t, _| old.admit_and_release(one(t)),
    );
    report(
        "in-flight ceiling before: admit and release, 32 clients per thread",
        count,
        |t, i| old.admit_and_release(many(t, i)),
    );

    let ceiling = InFlightCeiling::new(u32::MAX);
    thread_local! {
        static WORKER: std::cell::OnceCell<partner_api::rate_limit::in_flight::WorkerCeiling> =
            const { std::cell::OnceCell::new() };
    }
    let admit = |key: ClientKey| {
        WORKER.with(|worker| {
            let worker = worker.get_or_init(|| ceiling.for_worker());
            drop(worker.admit(key).expect("under the ceiling"));
        })
    };
    report(
        "in-flight ceiling now: admit and release, one client",
        count,
        |t, _| admit(one(t)),
    );
    report(
        "in-flight ceiling now: admit and release, 32 clients per thread",
        count,
        |t, i| admit(many(t, i)),
    );

    // Out of reach: one request a nanosecond, a burst of four billion.
    let quota = Quota {
        per_second: 1_000_000_000,
        burst: u32::MAX,
    };
    // As it was: governor's keyed limiter with dashmap's default shards (four per CPU), behind
    // the `Arc` that actix-governor's `GovernorConfig::limiter()` cloned for every decision.
    let before = Arc::new(RateLimiter::keyed(
        GcraQuota::per_second(NonZeroU32::new(1_000_000_000).expect("non-zero"))
            .allow_burst(NonZeroU32::MAX),
    ));
    report(
        "rate limit decision before (8 shards on 2 CPUs), one client",
        count,
        |t, _| {
            let _ = Arc::clone(&before).check_key(&one(t));
        },
    );
    report(
        "rate limit decision before, 32 clients per thread",
        count,
        |t, i| {
            let _ = Arc::clone(&before).check_key(&many(t, i));
        },
    );
    let limiter = MemoryStore::new(quota, quota);
    report(
        "rate limit decision now (256 shards), one client",
        count,
        |t, _| {
            limiter.decide(PolicyName::Api, one(t));
        },
    );
    report(
        "rate limit decision now, 32 clients per thread",
        count,
        |t, i| {
            limiter.decide(PolicyName::Api, many(t, i));
        },
    );

    let shared_value = HeaderValue::from_str("\"api\";q=1000000;w=1").expect("a header value");
    thread_local! {
        // Each thread's copy, allocated by that thread, as each worker makes its own.
        static OWN_VALUE: std::cell::OnceCell<HeaderValue> = const { std::cell::OnceCell::new() };
    }
    report(
        "a header value every worker clones (RateLimit-Policy before)",
        count,
        |_, _| {
            drop(std::hint::black_box(shared_value.clone()));
        },
    );
    report(
        "a header value each worker has its own of (now)",
        count,
        |_, _| {
            OWN_VALUE.with(|own| {
                let own = own.get_or_init(|| {
                    HeaderValue::from_bytes(shared_value.as_bytes()).expect("a header value")
                });
                drop(std::hint::black_box(own.clone()));
            })
        },
    );

    let shared_counter = AtomicU64::new(0);
    #[repr(align(128))]
    struct Own(AtomicU64);
    let own_counters = [Own(AtomicU64::new(0)), Own(AtomicU64::new(0))];
    report("a counter every worker adds to", count, |_, _| {
        shared_counter.fetch_add(1, Ordering::Relaxed);
    });
    // The control: nothing shared, so what two threads at once cost here without any sharing
    // (on a VM whose two CPUs share a physical core's resources, about twice one's).
    report(
        "a counter per worker, on its own cache line (the metrics)",
        count,
        |t, _| {
            own_counters[t].0.fetch_add(1, Ordering::Relaxed);
        },
    );
}
