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
//! in-process store instead (same limits, per replica), one warning is logged, and decisions
//! stay local until a probe every [`PROBE_EVERY`] finds Redis answering again (one info line);
//! the service starts even when Redis cannot be reached. Each worker has a connection of its
//! own (the `redis` crate's connection manager: multiplexed, reconnecting by itself), driven on
//! that worker's runtime, so a decision never waits for another thread; the commands of the
//! worker's concurrent requests are pipelined on it. The probe has one more, on the main
//! runtime. (One connection shared by all workers cost a third of the throughput: every
//! decision crossed to the thread driving it and back; see BENCHMARKS.md.)

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{ConnectionAddr, ConnectionInfo, IntoConnectionInfo, Script};

use super::{ClientKey, Outcome, PolicyName, Quota};

/// How often a lost store is probed.
pub const PROBE_EVERY: Duration = Duration::from_millis(250);

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

/// A Redis URL, checked at start-up; shown without its password.
#[derive(Clone)]
pub struct RedisUrl {
    /// Boxed: it is large, and settings carry it by value.
    info: Box<ConnectionInfo>,
    shown: String,
}

impl RedisUrl {
    /// `redis://[user[:password]@]host[:port][/db]` or `rediss://…` (TLS).
    pub fn parse(input: &str) -> Result<RedisUrl, String> {
        let expected = "expected memory, or a Redis URL such as redis://127.0.0.1:6379 or \
                        rediss://user:password@redis.example.com:6380/0";
        if !(input.starts_with("redis://") || input.starts_with("rediss://")) {
            return Err(expected.to_owned());
        }
        let info = input
            .into_connection_info()
            .map_err(|_| expected.to_owned())?;
        let (scheme, host) = match info.addr() {
            ConnectionAddr::Tcp(host, port) => ("redis", format!("{host}:{port}")),
            ConnectionAddr::TcpTls { host, port, .. } => ("rediss", format!("{host}:{port}")),
            _ => return Err(expected.to_owned()),
        };
        let shown = format!("{scheme}://{host}/{}", info.redis_settings().db());
        Ok(RedisUrl {
            info: Box::new(info),
            shown,
        })
    }

    /// The same URL with `password` (from the environment) when the URL has none.
    pub fn with_password(mut self, password: Option<&str>) -> RedisUrl {
        if let Some(password) = password.filter(|password| !password.is_empty())
            && self.info.redis_settings().password().is_none()
        {
            let settings = self.info.redis_settings().clone().set_password(password);
            self.info = Box::new(self.info.set_redis_settings(settings));
        }
        self
    }
}

/// Never the password: this is what logs and `--help` may show.
impl fmt::Display for RedisUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl fmt::Debug for RedisUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RedisUrl({})", self.shown)
    }
}

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
    url: RedisUrl,
    client: redis::Client,
    config: ConnectionManagerConfig,
    /// The probe's connection.
    connection: ConnectionManager,
    script: Script,
    budget: Duration,
    gcra: [Gcra; 2],
    /// Whether decisions go to Redis; false until the first probe answers.
    up: AtomicBool,
    /// Whether the store's loss was logged since it last answered.
    warned: AtomicBool,
    /// Decisions answered by Redis and by the in-process fallback, and Redis calls that failed.
    decided_shared: AtomicU64,
    decided_locally: AtomicU64,
    errors: AtomicU64,
}

/// What the metrics report about the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreCounts {
    pub up: bool,
    pub decided_shared: u64,
    pub decided_locally: u64,
    pub errors: u64,
}

impl RedisStore {
    /// The store for `url`; connects lazily (a probe task makes the first connection), so an
    /// unreachable Redis does not stop the start. Must be called inside the runtime that will
    /// drive the connection.
    pub fn new(url: RedisUrl, budget: Duration, api: Quota, docs: Quota) -> RedisStore {
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(1)))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_secs(1));
        let client = redis::Client::open(*url.info.clone()).expect("checked when parsed");
        let connection = client
            .get_connection_manager_lazy(config.clone())
            .expect("no push sender is asked for, the only reason this fails");
        RedisStore {
            url,
            client,
            config,
            connection,
            script: Script::new(GCRA),
            budget,
            gcra: [Gcra::of(api), Gcra::of(docs)],
            up: AtomicBool::new(false),
            warned: AtomicBool::new(false),
            decided_shared: AtomicU64::new(0),
            decided_locally: AtomicU64::new(0),
            errors: AtomicU64::new(0),
        }
    }

    /// Whether decisions go to Redis now.
    pub fn is_up(&self) -> bool {
        self.up.load(Ordering::Relaxed)
    }

    /// A connection for the calling worker; it connects on first use, on the runtime that
    /// uses it.
    pub fn connect_worker(&self) -> ConnectionManager {
        self.client
            .get_connection_manager_lazy(self.config.clone())
            .expect("no push sender is asked for, the only reason this fails")
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
        let answer: Result<(i64, i64), _> = tokio::time::timeout(self.budget, call)
            .await
            .map_err(|_| StoreError::Timeout(self.budget))?;
        let (allowed, value) = answer.map_err(StoreError::Redis)?;
        self.decided_shared.fetch_add(1, Ordering::Relaxed);
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

    /// A call failed: decisions stay local until a probe finds Redis again. One warning per
    /// loss, not one per request.
    pub fn lost(&self, error: &StoreError) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        if self.up.swap(false, Ordering::Relaxed) {
            self.warned.store(true, Ordering::Relaxed);
            log::warn!(
                "rate-limit store {} lost ({error}): limits are now kept per replica until it \
                 answers again",
                self.url
            );
        }
    }

    pub fn counts(&self) -> StoreCounts {
        StoreCounts {
            up: self.is_up(),
            decided_shared: self.decided_shared.load(Ordering::Relaxed),
            decided_locally: self.decided_locally.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
        }
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
            let mut connection = self.connection.clone();
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
                    self.up.store(true, Ordering::Relaxed);
                    self.warned.store(false, Ordering::Relaxed);
                    log::info!(
                        "rate-limit store {} answers: limits are shared by every replica",
                        self.url
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
                self.url
            );
        }
    }
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_and_shown_without_the_password() {
        let url = RedisUrl::parse("redis://user:s3cret@127.0.0.1:6380/2").unwrap();
        assert_eq!(url.to_string(), "redis://127.0.0.1:6380/2");
        assert!(!format!("{url:?}").contains("s3cret"));
        let url = RedisUrl::parse("rediss://redis.example.com").unwrap();
        assert_eq!(url.to_string(), "rediss://redis.example.com:6379/0");
        for bad in [
            "",
            "memcached://x",
            "redis://",
            "http://127.0.0.1:6379",
            "redis://h:99999",
        ] {
            assert!(RedisUrl::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_password_from_the_environment_does_not_replace_the_urls() {
        let url = RedisUrl::parse("redis://127.0.0.1:6379").unwrap();
        let with = url.clone().with_password(Some("from-env"));
        assert_eq!(with.info.redis_settings().password(), Some("from-env"));
        let own = RedisUrl::parse("redis://:own@127.0.0.1:6379").unwrap();
        let kept = own.with_password(Some("from-env"));
        assert_eq!(kept.info.redis_settings().password(), Some("own"));
    }

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
