//! The shared store: every replica's decision for a client comes from one Redis (7, or
//! Valkey), so the published quota holds at any number of replicas. One decision is one
//! round trip: a Lua script, loaded once and called by its hash (`EVALSHA`, with `EVAL` only
//! after Redis forgot it), that runs the same GCRA arithmetic as the in-process store (see
//! `memory.rs`: the bucket's "theoretical arrival time" per client key) on Redis's own clock,
//! so replicas whose clocks differ still agree. Each key expires by itself when its bucket is
//! full again, which is exactly when forgetting it changes nothing: Redis memory stays bounded
//! by the clients active in the last window, with no pruning job.
//!
//! Faults degrade, never break: when Redis is unreachable, slow (over the budget,
//! `--rate-limit-store-timeout-ms`) or answers an error, the request is decided by the
//! in-process store instead (same limits, per replica). One slow answer is not a loss: the
//! store is declared lost only after [`LOST_AFTER`] failed calls in a row (any success in
//! between starts the count again), which one warning says; decisions then stay local until a
//! probe every [`PROBE_EVERY`] finds Redis answering again (one info line);
//! the service starts even when Redis cannot be reached. Each worker has a connection of its
//! own (the `redis` crate's connection manager: multiplexed, reconnecting by itself), driven on
//! that worker's runtime, so a decision never waits for another thread; the commands of the
//! worker's concurrent requests are pipelined on it. The probe has one more, on the main
//! runtime. (One connection shared by all workers would make every decision cross to the
//! thread driving it and back; BENCHMARKS.md, "The shared store's budget on a busy host".)

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use redis::Script;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use super::call_durations::CallDurations;
use super::redis_url::RedisUrl;
use super::store_files::{Credentials, StoreFiles};
use super::{ClientKey, Outcome, PolicyName, Quota};

/// How often a lost store is probed.
pub const PROBE_EVERY: Duration = Duration::from_millis(250);

/// Failed calls in a row after which the store is declared lost. A busy host makes a single
/// answer miss a tight budget now and then (BENCHMARKS.md, "The shared store's budget on a
/// busy host"), and each loss is a "lost" and an "answers" line and 250 ms of local decisions;
/// three in a row, with no success between, is Redis away or truly slow. The request of each
/// failed call is decided in-process either way.
pub const LOST_AFTER: u32 = 3;

/// The GCRA decision; times in microseconds. KEYS[1] is the client's key, ARGV[1] the
/// emission interval `t` (time to earn back one request), ARGV[2] the tolerance `tau`
/// (`t` × (burst − 1)). Returns `{1, remaining}` or `{0, microseconds to wait}`.
const GCRA: &str = r"
local t = tonumber(ARGV[1])
local tau = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local tat = tonumber(redis.call('GET', KEYS[1])) or now
local earliest = tat - tau
if now < earliest then
  return {0, earliest - now}
end
local next = math.max(tat, now) + t
local ttl = math.max(1, math.ceil((next - now) / 1000))
redis.call('SET', KEYS[1], string.format('%d', next), 'PX', ttl)
return {1, math.floor(math.min(now + tau + t - next, tau + t) / t)}
";

/// Why a decision did not come from Redis.
#[derive(Debug)]
pub enum StoreError {
    Redis(redis::RedisError),
    /// No answer within the budget.
    Timeout(Duration),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Redis(error) => write!(f, "{error}"),
            StoreError::Timeout(budget) => write!(f, "no answer within {} ms", budget.as_millis()),
        }
    }
}

/// The GCRA parameters of one policy, in microseconds.
#[derive(Clone, Copy, Debug)]
struct Gcra {
    t: u64,
    tau: u64,
}

impl Gcra {
    fn of(quota: Quota) -> Gcra {
        let t = (quota.period().as_micros() as u64).max(1);
        Gcra {
            t,
            tau: t * u64::from(quota.burst.max(1) - 1),
        }
    }
}

/// The shared store of one replica.
pub struct RedisStore {
    /// Where it connects, and with which credentials; replaced when its files change.
    connector: RwLock<Connector>,
    /// The connector's generation, read by every decision without taking the lock.
    generation: AtomicU64,
    config: ConnectionManagerConfig,
    /// Where the credentials come from, and the contents last read from its files.
    files: StoreFiles,
    contents: Mutex<Vec<Vec<u8>>>,
    /// Whether a failed read of the files was logged since the last good one.
    files_refused: AtomicBool,
    script: Script,
    budget: Duration,
    gcra: [Gcra; 2],
    /// Whether decisions go to Redis; false until the first probe answers.
    up: AtomicBool,
    /// Failed calls since the last one that succeeded.
    failures_in_a_row: AtomicU32,
    /// Whether the store's loss was logged since it last answered.
    warned: AtomicBool,
    /// Decisions answered by Redis and by the in-process fallback, and Redis calls that failed.
    decided_shared: AtomicU64,
    decided_locally: AtomicU64,
    errors: AtomicU64,
    /// Times the store was declared lost, and found again: a store that comes and goes
    /// (flapping) shows in these long before it stays lost long enough to alert.
    times_lost: AtomicU64,
    times_back: AtomicU64,
    /// How long each decision's call took, failed ones included.
    durations: CallDurations,
}

/// What the metrics report about the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreCounts {
    pub up: bool,
    pub decided_shared: u64,
    pub decided_locally: u64,
    pub errors: u64,
    pub times_lost: u64,
    pub times_back: u64,
    /// How long a call may take before the decision is made in-process.
    pub budget: Duration,
}

impl RedisStore {
    /// The store for `url`; connects lazily (a probe task makes the first connection), so an
    /// unreachable Redis does not stop the start. Must be called inside the runtime that will
    /// drive the connection.
    pub fn new(
        credentials: Credentials,
        files: StoreFiles,
        budget: Duration,
        api: Quota,
        docs: Quota,
    ) -> RedisStore {
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(1)))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_secs(1));
        RedisStore {
            connector: RwLock::new(Connector::new(credentials.url, &config, 0)),
            generation: AtomicU64::new(0),
            config,
            files,
            contents: Mutex::new(credentials.contents),
            files_refused: AtomicBool::new(false),
            script: Script::new(GCRA),
            budget,
            gcra: [Gcra::of(api), Gcra::of(docs)],
            up: AtomicBool::new(false),
            failures_in_a_row: AtomicU32::new(0),
            warned: AtomicBool::new(false),
            decided_shared: AtomicU64::new(0),
            decided_locally: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            times_lost: AtomicU64::new(0),
            times_back: AtomicU64::new(0),
            durations: CallDurations::default(),
        }
    }

    /// Whether decisions go to Redis now.
    pub fn is_up(&self) -> bool {
        self.up.load(Ordering::Relaxed)
    }

    /// A connection for the calling worker, and the generation of the credentials it uses;
    /// it connects on first use, on the runtime that uses it.
    pub fn connect_worker(&self) -> (u64, ConnectionManager) {
        let connector = self.connector();
        (connector.generation, connector.connect(&self.config))
    }

    /// The generation of the credentials in use: a worker whose connection is older connects
    /// again.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    fn connector(&self) -> std::sync::RwLockReadGuard<'_, Connector> {
        // A panic while replacing it leaves the old connector or the new one, both whole.
        self.connector
            .read()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the credentials come from files, which may change.
    pub fn from_files(&self) -> bool {
        self.files.from_files()
    }

    /// The URL as logs show it (never the password).
    fn shown(&self) -> String {
        self.connector().url.to_string()
    }

    /// Reads the credentials' files again (`why`: what asked) and, when their contents
    /// changed, connects with the new ones from the next decision on. A file that cannot be
    /// read, or holds no valid URL, keeps the current credentials, with one error logged until
    /// a read succeeds again. Without files there is nothing to read.
    pub fn reload_files(&self, why: &str) {
        if !self.files.from_files() {
            return;
        }
        let credentials = match self.files.read() {
            Ok(Some(credentials)) => credentials,
            Ok(None) => return,
            Err(error) => {
                if !self.files_refused.swap(true, Ordering::Relaxed) || why == "SIGHUP" {
                    log::error!(
                        "rate-limit store credentials not read again ({why}): {error}; the \
                         current ones stay in use"
                    );
                }
                return;
            }
        };
        self.files_refused.store(false, Ordering::Relaxed);
        let mut contents = self.contents.lock().unwrap_or_else(PoisonError::into_inner);
        if *contents == credentials.contents {
            if why == "SIGHUP" {
                log::info!("SIGHUP: the rate-limit store's credential files are unchanged");
            }
            return;
        }
        *contents = credentials.contents;
        let shown = credentials.url.to_string();
        {
            let mut connector = self
                .connector
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            let generation = connector.generation + 1;
            *connector = Connector::new(credentials.url, &self.config, generation);
            // Published after the connector: a worker that sees it connects with the new one.
            self.generation.store(generation, Ordering::Release);
        }
        drop(contents);
        log::info!(
            "rate-limit store credentials read again from their files ({why}): {shown} from the \
             next decision on"
        );
    }

    /// One decision, from Redis through `connection`, within the budget.
    pub async fn decide(
        &self,
        mut connection: ConnectionManager,
        policy: PolicyName,
        key: ClientKey,
    ) -> Result<Outcome, StoreError> {
        let gcra = self.gcra[policy as usize];
        let mut invocation = self.script.key(redis_key(policy, key));
        invocation.arg(gcra.t).arg(gcra.tau);
        let call = async {
            match invocation.invoke_async(&mut connection).await {
                // The worker's connection broke while Redis was away: the manager reconnects
                // when a command fails, so the first decision after Redis is back would fail
                // without this one retry (within the same budget).
                Err(error) if error.is_connection_dropped() || error.is_io_error() => {
                    invocation.invoke_async(&mut connection).await
                }
                answer => answer,
            }
        };
        let started = Instant::now();
        let answer = tokio::time::timeout(self.budget, call).await;
        self.durations.observe(started.elapsed());
        let answer: Result<(i64, i64), _> = answer.map_err(|_| StoreError::Timeout(self.budget))?;
        let (allowed, value) = answer.map_err(StoreError::Redis)?;
        self.decided_shared.fetch_add(1, Ordering::Relaxed);
        // Read first: the usual case (no failure pending) writes nothing every worker shares.
        if self.failures_in_a_row.load(Ordering::Relaxed) != 0 {
            self.failures_in_a_row.store(0, Ordering::Relaxed);
        }
        let value = u64::try_from(value).unwrap_or(0);
        Ok(if allowed == 1 {
            Outcome::Allowed {
                remaining: u32::try_from(value).unwrap_or(u32::MAX),
            }
        } else {
            Outcome::Refused {
                wait: Duration::from_micros(value),
            }
        })
    }

    /// A decision was made in-process instead.
    pub fn decided_locally(&self) {
        self.decided_locally.fetch_add(1, Ordering::Relaxed);
    }

    /// A call failed. The [`LOST_AFTER`]th in a row declares the store lost: decisions stay
    /// local until a probe finds Redis again. One warning per loss, not one per request.
    pub fn lost(&self, error: &StoreError) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        let in_a_row = self.failures_in_a_row.fetch_add(1, Ordering::Relaxed) + 1;
        if in_a_row < LOST_AFTER {
            return;
        }
        if self.up.swap(false, Ordering::Relaxed) {
            self.times_lost.fetch_add(1, Ordering::Relaxed);
            self.warned.store(true, Ordering::Relaxed);
            log::warn!(
                "rate-limit store {} lost ({error}): limits are now kept per replica until it \
                 answers again",
                self.shown()
            );
        }
    }

    pub fn counts(&self) -> StoreCounts {
        StoreCounts {
            up: self.is_up(),
            decided_shared: self.decided_shared.load(Ordering::Relaxed),
            decided_locally: self.decided_locally.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            times_lost: self.times_lost.load(Ordering::Relaxed),
            times_back: self.times_back.load(Ordering::Relaxed),
            budget: self.budget,
        }
    }

    /// How long the decisions' calls took.
    pub fn call_durations(&self) -> &CallDurations {
        &self.durations
    }

    /// Probes Redis every [`PROBE_EVERY`] while decisions are local, and turns shared decisions
    /// back on when it answers. Runs until the server stops.
    pub async fn watch(&self) {
        let mut ticks = tokio::time::interval(PROBE_EVERY);
        loop {
            ticks.tick().await;
            if self.is_up() {
                continue;
            }
            let mut connection = self.connector().probe.clone();
            // The first PING may have to connect (1 s allowed); the second must answer within
            // the budget, or a slow Redis would be taken back only to time out again.
            let ping = || redis::cmd("PING");
            let probe = match tokio::time::timeout(
                Duration::from_secs(1),
                ping().query_async::<String>(&mut connection),
            )
            .await
            {
                Ok(Ok(_)) => {
                    tokio::time::timeout(self.budget, ping().query_async::<String>(&mut connection))
                        .await
                        .map_err(|_| StoreError::Timeout(self.budget))
                }
                other => other.map_err(|_| StoreError::Timeout(Duration::from_secs(1))),
            };
            match probe {
                Ok(Ok(_)) => {
                    // Load the script now rather than on the first request.
                    let _ = self
                        .script
                        .prepare_invoke()
                        .load_async(&mut connection)
                        .await;
                    self.failures_in_a_row.store(0, Ordering::Relaxed);
                    // Back only after a loss: the first answer at start is not a return.
                    let was_up = self.up.swap(true, Ordering::Relaxed);
                    if !was_up
                        && self.times_lost.load(Ordering::Relaxed)
                            > self.times_back.load(Ordering::Relaxed)
                    {
                        self.times_back.fetch_add(1, Ordering::Relaxed);
                    }
                    self.warned.store(false, Ordering::Relaxed);
                    log::info!(
                        "rate-limit store {} answers: limits are shared by every replica",
                        self.shown()
                    );
                }
                Ok(Err(error)) => self.warn_once(format_args!("is unreachable ({error})")),
                Err(error) => self.warn_once(format_args!("is too slow ({error})")),
            }
        }
    }

    /// Logs that the store cannot be used, once until it answers again.
    fn warn_once(&self, what: fmt::Arguments<'_>) {
        if !self.warned.swap(true, Ordering::Relaxed) {
            log::warn!(
                "rate-limit store {} {what}: limits are kept per replica until it answers",
                self.shown()
            );
        }
    }
}

/// A client for one set of credentials, with the probe's connection.
struct Connector {
    url: RedisUrl,
    client: redis::Client,
    probe: ConnectionManager,
    generation: u64,
}

impl Connector {
    fn new(url: RedisUrl, config: &ConnectionManagerConfig, generation: u64) -> Connector {
        let client = redis::Client::open(url.connection_info()).expect("checked when parsed");
        let probe = lazy_connection(&client, config);
        Connector {
            url,
            client,
            probe,
            generation,
        }
    }

    fn connect(&self, config: &ConnectionManagerConfig) -> ConnectionManager {
        lazy_connection(&self.client, config)
    }
}

fn lazy_connection(client: &redis::Client, config: &ConnectionManagerConfig) -> ConnectionManager {
    client
        .get_connection_manager_lazy(config.clone())
        .expect("no push sender is asked for, the only reason this fails")
}

/// `partner-api:rl:<policy>:<client>`: an IPv4 address, an IPv6 /64, or `unknown`.
fn redis_key(policy: PolicyName, key: ClientKey) -> String {
    let policy = policy.as_str();
    match key {
        ClientKey::V4(bits) => {
            format!(
                "partner-api:rl:{policy}:{}",
                std::net::Ipv4Addr::from_bits(bits)
            )
        }
        ClientKey::V6Prefix64(prefix) => format!(
            "partner-api:rl:{policy}:{}/64",
            std::net::Ipv6Addr::from_bits(u128::from(prefix) << 64)
        ),
        ClientKey::Unknown => format!("partner-api:rl:{policy}:unknown"),
        // Derived from the key's id, never from the key: the same in every replica.
        ClientKey::Partner(number) => format!("partner-api:rl:{policy}:key:{number:016x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_the_policy_and_the_client() {
        assert_eq!(
            redis_key(PolicyName::Api, ClientKey::V4(0xC000_0201)),
            "partner-api:rl:api:192.0.2.1"
        );
        assert_eq!(
            redis_key(
                PolicyName::Docs,
                ClientKey::of(Some("2001:db8:1:2::9".parse().unwrap()))
            ),
            "partner-api:rl:docs:2001:db8:1:2::/64"
        );
        assert_eq!(
            redis_key(PolicyName::Api, ClientKey::Unknown),
            "partner-api:rl:api:unknown"
        );
    }

    #[test]
    fn the_parameters_are_the_in_process_limiters() {
        let gcra = Gcra::of(Quota {
            per_second: 10,
            burst: 50,
        });
        assert_eq!((gcra.t, gcra.tau), (100_000, 4_900_000));
    }
}
