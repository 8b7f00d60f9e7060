//! The watchdog: whether every API worker is still making progress. Each worker runs a timer
//! task that stamps the time on a heartbeat of its own every [`BEAT`]; a worker whose thread is
//! blocked (a handler that sleeps, a lock never released, a write to a stalled pipe) runs no
//! task, so its stamp grows old. A monitor thread of its own checks the stamps: when one is
//! older than the threshold, it logs one error naming the worker and counts a stall
//! (`partner_api_worker_stalls_total`), and `/livez` (with `/readyz`) answers 503 naming it
//! until the worker beats again, so that Kubernetes or a load balancer acts on what partners
//! see. The watchdog itself runs on no worker, so a stalled worker cannot silence it; Envoy's
//! watchdog notices a stuck worker the same way.
//!
//! A pause of the whole process (SIGSTOP, a frozen host or VM, a starved cgroup) silences the
//! monitor too: when it wakes to find its own round late by more than the threshold, it logs
//! one warning that the process was not scheduled, counts no stall, and restarts every
//! worker's clock; a worker that runs first and finds the monitor silent as long as itself
//! does the same. So the log blames what stopped, not a worker that merely stopped with it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;

/// How often a worker stamps its heartbeat.
pub const BEAT: Duration = Duration::from_millis(250);

/// The API workers' heartbeats; cheap to clone.
#[derive(Clone, Debug)]
pub struct Watchdog(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    threshold: Duration,
    started: Instant,
    hearts: Mutex<Vec<Arc<Heart>>>,
    stalls: AtomicU64,
    /// Milliseconds since `started` at the end of the monitor's last round; `NO_MONITOR` until
    /// it runs.
    last_round_ms: AtomicU64,
    /// True while the monitor checks the workers and logs what it found: logging may wait
    /// (`--log-when-stalled wait`), and a monitor that waits is not paused.
    in_round: AtomicBool,
    /// When the last pause of the whole process ended (milliseconds since `started`).
    pause_ended_ms: AtomicU64,
}

/// `last_round_ms` before the monitor's first round: workers count their own stalls.
const NO_MONITOR: u64 = u64::MAX;

#[derive(Debug)]
struct Heart {
    name: String,
    /// Milliseconds since `started` at the last beat.
    last_beat_ms: AtomicU64,
    stalled: AtomicBool,
}

thread_local! {
    /// This thread's heartbeat, per watchdog (a test process runs many apps).
    static BEATING: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Watchdog {
    /// A watchdog that calls a worker stalled after `threshold` without a beat.
    pub fn new(threshold: Duration) -> Self {
        Watchdog(Arc::new(Shared {
            threshold,
            started: Instant::now(),
            hearts: Mutex::new(Vec::new()),
            stalls: AtomicU64::new(0),
            last_round_ms: AtomicU64::new(NO_MONITOR),
            in_round: AtomicBool::new(false),
            pause_ended_ms: AtomicU64::new(0),
        }))
    }

    /// A handle that does not keep the watchdog alive: for threads that should end with it.
    pub fn downgrade(&self) -> WeakWatchdog {
        WeakWatchdog(Arc::downgrade(&self.0))
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.0.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Gives the calling worker a heartbeat and starts the task that beats it. Called by the
    /// app factory, which runs on each worker; a second call on one worker does nothing.
    pub fn beat_on_this_worker(&self) {
        let key = Arc::as_ptr(&self.0) as usize;
        let first = BEATING.with(|beating| {
            let mut beating = beating.borrow_mut();
            let first = !beating.contains(&key);
            if first {
                beating.push(key);
            }
            first
        });
        if !first {
            return;
        }
        let heart = {
            let mut hearts = lock(&self.0.hearts);
            let thread = std::thread::current();
            let heart = Arc::new(Heart {
                name: format!(
                    "worker {} ({})",
                    hearts.len() + 1,
                    thread.name().unwrap_or("unnamed")
                ),
                last_beat_ms: AtomicU64::new(self.now_ms()),
                stalled: AtomicBool::new(false),
            });
            hearts.push(Arc::clone(&heart));
            heart
        };
        // The task owns the heart's registration: when the worker's arbiter stops (a worker
        // that stopped at shutdown, or one actix-server replaced after a fault), the task is
        // dropped and the heart retires with it, instead of aging into a false stall.
        let beating = Beating {
            heart,
            watchdog: self.clone(),
        };
        actix_web::rt::spawn(async move {
            let mut ticks = actix_web::rt::time::interval(BEAT);
            loop {
                ticks.tick().await;
                beating.beat();
            }
        });
    }

    /// The workers that have not beaten for longer than the threshold, with how long.
    pub fn stalled(&self) -> Vec<String> {
        let now = self.now_ms();
        let threshold = self.threshold_ms();
        lock(&self.0.hearts)
            .iter()
            .filter_map(|heart| {
                let silent = now.saturating_sub(heart.last_beat_ms.load(Ordering::Relaxed));
                (silent > threshold).then(|| {
                    format!(
                        "{} has made no progress for {:.1} s",
                        heart.name,
                        silent as f64 / 1000.0
                    )
                })
            })
            .collect()
    }

    fn threshold_ms(&self) -> u64 {
        u64::try_from(self.0.threshold.as_millis()).unwrap_or(u64::MAX)
    }

    /// Stalls seen since the start (a worker that stalls twice counts twice).
    pub fn stalls(&self) -> u64 {
        self.0.stalls.load(Ordering::Relaxed)
    }

    /// Starts the monitor thread, which logs and counts each stall once, and each recovery.
    /// It ends when the last other handle to this watchdog is dropped.
    pub fn spawn_monitor(&self) {
        let shared = Arc::downgrade(&self.0);
        let every = (self.0.threshold / 4).clamp(Duration::from_millis(50), Duration::from_secs(1));
        let spawned = std::thread::Builder::new()
            .name("watchdog".to_owned())
            .spawn(move || {
                while let Some(shared) = shared.upgrade() {
                    Watchdog(shared).round();
                    std::thread::sleep(every);
                }
            });
        if let Err(error) = spawned {
            log::error!(
                "the watchdog's monitor cannot start, so a stall is neither logged nor counted \
                 (/livez still sees it): {error}"
            );
        }
    }

    /// One round of the monitor: a pause of the whole process if the end of its last round is
    /// older than the threshold (its own sleep is far shorter), else a check of the workers.
    /// The round's end is stamped after the pause is recorded and the check is done, so a
    /// worker never sees a fresh round without the pause it followed, and a check slowed by
    /// logging is not taken for a pause.
    fn round(&self) {
        let now = self.now_ms();
        let previous = self.0.last_round_ms.load(Ordering::Relaxed);
        if previous != NO_MONITOR && now.saturating_sub(previous) > self.threshold_ms() {
            self.process_paused(now, now - previous);
        } else {
            self.0.in_round.store(true, Ordering::Relaxed);
            self.check_at(now);
            self.0.in_round.store(false, Ordering::Relaxed);
        }
        self.0.last_round_ms.store(self.now_ms(), Ordering::Relaxed);
    }

    /// The whole process was not scheduled for `paused_ms` until `now`: one warning, no stall,
    /// and every worker's clock restarts, so that no worker is blamed for it afterwards.
    fn process_paused(&self, now: u64, paused_ms: u64) {
        let first =
            self.0.pause_ended_ms.swap(now, Ordering::Relaxed) < now.saturating_sub(paused_ms);
        // A worker already stalled before the pause stays stalled: its clock is not restarted.
        for heart in lock(&self.0.hearts).iter() {
            if !heart.stalled.load(Ordering::Relaxed) {
                heart.last_beat_ms.fetch_max(now, Ordering::Relaxed);
            }
        }
        if first {
            log::warn!(
                "the process was not scheduled for {:.1} s (stopped, frozen or starved of CPU: \
                 the watchdog was paused with its workers); no worker is blamed, no stall counted",
                paused_ms as f64 / 1000.0
            );
        }
    }

    /// Whether a worker silent since `last_beat` until `now` was paused with the whole
    /// process: the monitor runs, is not busy in a round (it may wait on logging), and was as
    /// silent (or saw the pause end since).
    fn paused_with_process(&self, last_beat: u64, now: u64) -> bool {
        let last_round = self.0.last_round_ms.load(Ordering::Relaxed);
        last_round != NO_MONITOR
            && !self.0.in_round.load(Ordering::Relaxed)
            && (now.saturating_sub(last_round) > self.threshold_ms()
                || self.0.pause_ended_ms.load(Ordering::Relaxed) > last_beat)
    }

    /// A check of the workers. It logs after letting go of the list: logging may wait (with
    /// `--log-when-stalled wait`), and the probes read the list.
    #[cfg(test)]
    fn check(&self) {
        self.check_at(self.now_ms());
    }

    /// The check of one round, at `now`.
    fn check_at(&self, now: u64) {
        let threshold = self.threshold_ms();
        let newly_stalled: Vec<(String, u64)> = lock(&self.0.hearts)
            .iter()
            .filter_map(|heart| {
                let silent = now.saturating_sub(heart.last_beat_ms.load(Ordering::Relaxed));
                (silent > threshold && !heart.stalled.swap(true, Ordering::Relaxed))
                    .then(|| (heart.name.clone(), silent))
            })
            .collect();
        for (name, silent) in newly_stalled {
            self.stall(&name, silent, "/livez and /readyz answer 503 until it does");
        }
    }

    /// Counts and logs one stall.
    fn stall(&self, name: &str, silent_ms: u64, consequence: &str) {
        self.0.stalls.fetch_add(1, Ordering::Relaxed);
        log::error!(
            "{name} has made no progress for {:.1} s (threshold {} s): {consequence}",
            silent_ms as f64 / 1000.0,
            self.0.threshold.as_secs_f64()
        );
    }
}

/// A [`Watchdog`] handle that does not keep it alive.
#[derive(Clone, Debug)]
pub struct WeakWatchdog(std::sync::Weak<Shared>);

impl WeakWatchdog {
    /// The watchdog, while another handle still holds it.
    pub fn upgrade(&self) -> Option<Watchdog> {
        self.0.upgrade().map(Watchdog)
    }
}

/// A worker's registered heart, owned by its beat task.
struct Beating {
    heart: Arc<Heart>,
    watchdog: Watchdog,
}

impl Beating {
    /// Stamps the time. A worker that comes back from a stall says so; one whose stall was
    /// shorter than a round of the monitor still counts it, once.
    fn beat(&self) {
        let now = self.watchdog.now_ms();
        let last_beat = self.heart.last_beat_ms.swap(now, Ordering::Relaxed);
        let silent = now.saturating_sub(last_beat);
        if self.heart.stalled.swap(false, Ordering::Relaxed) {
            log::info!("{} makes progress again", self.heart.name);
        } else if silent > self.watchdog.threshold_ms() {
            if self.watchdog.paused_with_process(last_beat, now) {
                self.watchdog.process_paused(now, silent);
                return;
            }
            self.watchdog
                .stall(&self.heart.name, silent, "it makes progress again");
        }
    }
}

impl Drop for Beating {
    fn drop(&mut self) {
        lock(&self.watchdog.0.hearts).retain(|heart| !Arc::ptr_eq(heart, &self.heart));
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding it leaves a list of heartbeats, never a broken invariant.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The watchdog's series: how often a worker stalled, and how many are stalled now.
#[derive(Debug)]
pub struct WatchdogCollector(pub Watchdog);

impl Collector for WatchdogCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        encoder
            .encode_descriptor(
                "partner_api_worker_stalls",
                "Times an API worker made no progress for longer than the watchdog's \
                 threshold (its /livez then answered 503).",
                None,
                MetricType::Counter,
            )?
            .encode_counter::<NoLabelSet, _, u64>(&self.0.stalls(), None)?;
        encoder
            .encode_descriptor(
                "partner_api_workers_stalled",
                "API workers making no progress now.",
                None,
                MetricType::Gauge,
            )?
            .encode_gauge(&(self.0.stalled().len() as i64))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[actix_web::test]
    async fn a_worker_that_stops_beating_is_named_and_counted_once() {
        let watchdog = Watchdog::new(Duration::from_millis(300));
        watchdog.beat_on_this_worker();
        watchdog.beat_on_this_worker();
        assert_eq!(lock(&watchdog.0.hearts).len(), 1);
        actix_web::rt::time::sleep(Duration::from_millis(400)).await;
        assert!(watchdog.stalled().is_empty(), "{:?}", watchdog.stalled());
        // Block this worker's thread: its beat task cannot run.
        std::thread::sleep(Duration::from_millis(700));
        let stalled = watchdog.stalled();
        assert_eq!(stalled.len(), 1);
        assert!(stalled[0].starts_with("worker 1 ("), "{stalled:?}");
        watchdog.check();
        watchdog.check();
        assert_eq!(watchdog.stalls(), 1);
        actix_web::rt::time::sleep(Duration::from_millis(400)).await;
        assert!(watchdog.stalled().is_empty());
        watchdog.check();
        assert_eq!(watchdog.stalls(), 1);
        // A stall that ends before the monitor looks is counted by the worker itself.
        std::thread::sleep(Duration::from_millis(700));
        actix_web::rt::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(watchdog.stalls(), 2);
    }

    /// The whole process paused (its monitor with it), woken with the monitor first: no stall,
    /// no worker named, and the worker's late beat counts nothing either.
    #[actix_web::test]
    async fn a_pause_of_the_whole_process_blames_no_worker_when_the_monitor_wakes_first() {
        let watchdog = Watchdog::new(Duration::from_millis(300));
        watchdog.beat_on_this_worker();
        watchdog.round();
        // The worker's thread and the monitor both silent (the monitor runs no round).
        std::thread::sleep(Duration::from_millis(700));
        watchdog.round();
        assert!(watchdog.stalled().is_empty(), "{:?}", watchdog.stalled());
        actix_web::rt::time::sleep(Duration::from_millis(400)).await;
        watchdog.round();
        assert_eq!(watchdog.stalls(), 0);
    }

    /// The same pause, woken with the worker first: it finds the monitor as silent as itself.
    #[actix_web::test]
    async fn a_pause_of_the_whole_process_blames_no_worker_when_a_worker_wakes_first() {
        let watchdog = Watchdog::new(Duration::from_millis(300));
        watchdog.beat_on_this_worker();
        watchdog.round();
        std::thread::sleep(Duration::from_millis(700));
        actix_web::rt::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(watchdog.stalls(), 0);
        watchdog.round();
        assert_eq!(watchdog.stalls(), 0);
        assert!(watchdog.stalled().is_empty());
    }

    /// A monitor held in its round (its log line waiting on a stalled sink) is not a pause: a
    /// worker stalled meanwhile still counts its stall.
    #[actix_web::test]
    async fn a_monitor_waiting_on_its_log_excuses_no_worker() {
        let watchdog = Watchdog::new(Duration::from_millis(300));
        watchdog.beat_on_this_worker();
        watchdog.round();
        watchdog.0.in_round.store(true, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(700));
        actix_web::rt::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(watchdog.stalls(), 1);
    }

    /// A worker blocked while the monitor runs is a stall, as before.
    #[actix_web::test]
    async fn a_worker_blocked_while_the_monitor_runs_is_a_stall() {
        let watchdog = Watchdog::new(Duration::from_millis(300));
        watchdog.beat_on_this_worker();
        let monitor = watchdog.clone();
        let rounds = std::thread::spawn(move || {
            for _ in 0..12 {
                monitor.round();
                std::thread::sleep(Duration::from_millis(75));
            }
        });
        std::thread::sleep(Duration::from_millis(700));
        rounds.join().unwrap();
        assert_eq!(watchdog.stalls(), 1);
    }
}
