//! Rate limiting, per client. Two policies: one for the API (`/v1`) and a more generous one for
//! everything else (the reference, the documents, unknown paths). The request-conventions
//! middleware calls [`WorkerLimits::check`] first thing, before routing and before it keeps
//! anything for later, so a refused request costs no more than the check and its 429. Every
//! answer carries the IETF quota fields (draft-ietf-httpapi-ratelimit-headers-09):
//! `RateLimit-Policy` (`"api";q=<burst>;w=<seconds to refill it>`) and `RateLimit`
//! (`"api";r=<remaining>;t=<seconds until full>`); a 429 also carries `Retry-After` in whole
//! seconds, rounded up, never 0.
//!
//! Where the buckets live is the store's business, behind [`WorkerLimits::check`]: `memory.rs`
//! keeps them in this process (the default), `redis.rs` in a Redis shared by every replica,
//! falling back to the in-process store while Redis cannot answer; that store's URL
//! (`redis_url.rs`), its credentials, given or read from files (`store_files.rs`), and how long
//! its calls take (`call_durations.rs`) are parts of their own. Both stores run the same GCRA arithmetic and report an [`Outcome`]; this
//! module turns it into the quota fields or the refusal, so the middleware, the headers and the
//! 429 never learn which store answered.

pub mod call_durations;
pub mod in_flight;
pub mod memory;
pub mod metrics;
pub mod redis;
pub mod redis_url;
pub mod store_files;

use std::cell::RefCell;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use ::redis::aio::ConnectionManager;
use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue};
use futures_util::future::LocalBoxFuture;

use self::memory::MemoryStore;
use self::redis::{RedisStore, StoreCounts};
use self::store_files::{Credentials, StoreFiles};
use crate::edge::view::RequestView;

/// Header names of the quota fields.
pub const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
pub const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");

/// A sustained rate and a burst for one client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quota {
    pub per_second: u32,
    pub burst: u32,
}

impl Quota {
    /// Time to earn back one request.
    pub(crate) fn period(self) -> Duration {
        Duration::from_nanos(1_000_000_000 / u64::from(self.per_second.max(1)))
    }

    /// Whole seconds for an empty bucket to fill again, rounded up.
    fn window_secs(self) -> u64 {
        ceil_secs(self.period() * self.burst)
    }
}

/// The client key: one bucket per partner key in force (whichever address its requests come
/// from), per IPv4 address, per IPv6 /64 (one host or site usually owns the whole /64, so
/// keying by address would let it multiply its quota), and one shared bucket for requests
/// whose client cannot be determined. A key that is not in force (unknown, expired, revoked,
/// mistyped) counts against its address: sending made-up keys buys no quota.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClientKey {
    Partner(u64),
    V4(u32),
    V6Prefix64(u64),
    Unknown,
}

impl ClientKey {
    /// The bucket of a request as its view decided it: its key's when it carries one in
    /// force, its address's otherwise.
    pub fn for_view(view: &RequestView) -> ClientKey {
        match view.caller().key() {
            Some(key) => ClientKey::Partner(key.limit_key),
            None => ClientKey::of(view.client()),
        }
    }

    pub fn of(ip: Option<IpAddr>) -> ClientKey {
        match ip.map(|ip| ip.to_canonical()) {
            Some(IpAddr::V4(ip)) => ClientKey::V4(ip.to_bits()),
            Some(IpAddr::V6(ip)) => ClientKey::V6Prefix64((ip.to_bits() >> 64) as u64),
            None => ClientKey::Unknown,
        }
    }
}

fn ceil_secs(duration: Duration) -> u64 {
    duration.as_secs() + u64::from(duration.subsec_nanos() > 0)
}

/// One limiter with its policy name and the `RateLimit-Policy` value it announces.
struct Policy {
    name: PolicyName,
    quota: Quota,
    policy_header: HeaderValue,
    /// The `RateLimit` value of a client with nothing left, which is what every refusal says:
    /// written once, not once per 429 (BENCHMARKS.md, "Speed tricks re-measured").
    exhausted_header: HeaderValue,
}

impl Policy {
    fn new(name: PolicyName, quota: Quota) -> Policy {
        let policy_header = HeaderValue::from_str(&format!(
            "\"{}\";q={};w={}",
            name.as_str(),
            quota.burst,
            quota.window_secs()
        ))
        .expect("the policy is a valid header value");
        let mut policy = Policy {
            name,
            quota,
            policy_header,
            exhausted_header: HeaderValue::from_static(""),
        };
        policy.exhausted_header = policy.quota_now(0, quota.window_secs());
        policy
    }

    /// The IETF quota fields for a client with `remaining` requests left.
    fn quota_fields(&self, remaining: u32) -> QuotaFields {
        let now = if remaining == 0 {
            self.exhausted_header.clone()
        } else {
            let used = self.quota.burst.saturating_sub(remaining);
            let refill_secs = ceil_secs(self.quota.period() * used);
            LAST_QUOTA.with_borrow_mut(|last| {
                let slot = &mut last[self.name as usize];
                match slot {
                    Some(last)
                        if last.remaining == remaining && last.refill_secs == refill_secs =>
                    {
                        last.value.clone()
                    }
                    _ => {
                        let value = self.quota_now(remaining, refill_secs);
                        *slot = Some(LastQuota {
                            remaining,
                            refill_secs,
                            value: value.clone(),
                        });
                        value
                    }
                }
            })
        };
        QuotaFields {
            policy: self.policy_header.clone(),
            now,
        }
    }

    /// `"<name>";r=<remaining>;t=<seconds>`.
    fn quota_now(&self, remaining: u32, refill_secs: u64) -> HeaderValue {
        HeaderValue::try_from(format!(
            "\"{}\";r={remaining};t={refill_secs}",
            self.name.as_str()
        ))
        .expect("digits and a token are a header value")
    }
}

thread_local! {
    /// The last `RateLimit` value this thread wrote, by policy (`PolicyName as usize`). A
    /// client well within its limit keeps a nearly full bucket, so most answers repeat the
    /// previous value: a clone shares its bytes, where writing it again costs a `format!` and
    /// an allocation (BENCHMARKS.md, "Speed tricks re-measured").
    static LAST_QUOTA: RefCell<[Option<LastQuota>; PolicyName::ALL.len()]> =
        const { RefCell::new([None, None]) };
}

/// A `RateLimit` value and what it says.
struct LastQuota {
    remaining: u32,
    refill_secs: u64,
    value: HeaderValue,
}

/// The rate-limit settings of the service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimitSettings {
    pub api: Quota,
    pub docs: Quota,
}

/// Where the buckets live.
#[derive(Clone, Debug)]
pub enum StoreSetting {
    /// In this process (each replica counts for itself).
    Memory,
    /// In Redis, shared by every replica; decisions wait at most `budget` for it. The
    /// credentials were read from `files`, which are read again when they change.
    Redis {
        credentials: Credentials,
        files: StoreFiles,
        budget: Duration,
    },
}

/// The two limiter policies, as named in `RateLimit-Policy` and in the metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyName {
    Api = 0,
    Docs = 1,
}

impl PolicyName {
    pub const ALL: [PolicyName; 2] = [PolicyName::Api, PolicyName::Docs];

    pub fn as_str(self) -> &'static str {
        match self {
            PolicyName::Api => "api",
            PolicyName::Docs => "docs",
        }
    }

    /// The policy that guards a request: the API's when its path, as the router decoded it,
    /// is under the API prefix, the docs' otherwise.
    pub fn of(view: &RequestView) -> PolicyName {
        if view.is_api() {
            PolicyName::Api
        } else {
            PolicyName::Docs
        }
    }
}

/// What a store decided about one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Allowed, with this many more allowed at once.
    Allowed { remaining: u32 },
    /// Refused: the client may try again after `wait`.
    Refused { wait: Duration },
}

/// The limiters of one server: built once, then cloned (cheaply, they are shared) into every
/// worker's middleware. `None` when limiting is switched off.
#[derive(Clone)]
pub struct RateLimits {
    limits: Option<Arc<Limits>>,
}

struct Limits {
    policies: [Policy; 2],
    /// The in-process store: the store itself, or the shared one's fallback.
    memory: MemoryStore,
    shared: Option<RedisStore>,
}

impl std::fmt::Debug for RateLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimits")
            .field("on", &self.limits.is_some())
            .finish_non_exhaustive()
    }
}

/// A rate-limit decision: at once (the in-process store), or once the shared store answers.
pub enum Check {
    Decided(Result<Option<QuotaFields>, Refusal>),
    Pending(LocalBoxFuture<'static, Result<Option<QuotaFields>, Refusal>>),
}

impl RateLimits {
    /// In-process limits (`None`: limiting off).
    pub fn new(settings: Option<RateLimitSettings>) -> Self {
        RateLimits::with_store(settings, &StoreSetting::Memory)
    }

    /// Limits kept in `store`. A shared store connects lazily, on the runtime that calls this.
    pub fn with_store(settings: Option<RateLimitSettings>, store: &StoreSetting) -> Self {
        RateLimits {
            limits: settings.map(|settings| {
                let shared = match store {
                    StoreSetting::Memory => None,
                    StoreSetting::Redis {
                        credentials,
                        files,
                        budget,
                    } => Some(RedisStore::new(
                        credentials.clone(),
                        files.clone(),
                        *budget,
                        settings.api,
                        settings.docs,
                    )),
                };
                Arc::new(Limits {
                    policies: [
                        Policy::new(PolicyName::Api, settings.api),
                        Policy::new(PolicyName::Docs, settings.docs),
                    ],
                    memory: MemoryStore::new(settings.api, settings.docs),
                    shared,
                })
            }),
        }
    }

    /// The limits as one worker uses them: with a shared store, through a connection of the
    /// worker's own. Call on the worker's thread.
    pub fn for_worker(&self) -> WorkerLimits {
        let connection = self
            .limits
            .as_ref()
            .and_then(|limits| limits.shared.as_ref())
            .map(RedisStore::connect_worker);
        WorkerLimits {
            limits: self.clone(),
            connection: RefCell::new(connection),
        }
    }

    /// Reads the shared store's credential files again (`why`: what asked); see
    /// [`RedisStore::reload_files`]. Nothing to do without a shared store.
    pub fn reload_store_files(&self, why: &str) {
        if let Some(shared) = self.shared() {
            shared.reload_files(why);
        }
    }

    /// Whether the shared store's credentials come from files, which may change.
    pub fn store_files_in_use(&self) -> bool {
        self.shared().is_some_and(RedisStore::from_files)
    }

    /// Reads the shared store's credential files again every `every`, until the server stops.
    pub async fn watch_store_files(&self, every: Duration) {
        let Some(shared) = self.shared().filter(|shared| shared.from_files()) else {
            return;
        };
        let mut ticks = tokio::time::interval(every);
        ticks.tick().await;
        loop {
            ticks.tick().await;
            shared.reload_files("the files changed");
        }
    }

    fn shared(&self) -> Option<&RedisStore> {
        self.limits.as_ref()?.shared.as_ref()
    }

    /// Drops the in-process state of clients that went quiet. Called periodically by one task.
    pub fn prune(&self) {
        if let Some(limits) = &self.limits {
            limits.memory.prune();
        }
    }

    /// Clients with in-process state for `policy` (0 when limiting is off).
    pub fn tracked_clients(&self, policy: PolicyName) -> usize {
        self.limits
            .as_ref()
            .map_or(0, |limits| limits.memory.tracked_clients(policy))
    }

    /// The shared store's state, when there is one.
    pub fn store_counts(&self) -> Option<StoreCounts> {
        Some(self.limits.as_ref()?.shared.as_ref()?.counts())
    }

    /// How long the shared store's calls took, when there is one.
    pub fn store_call_durations(&self) -> Option<&call_durations::CallDurations> {
        Some(self.limits.as_ref()?.shared.as_ref()?.call_durations())
    }

    /// Watches the shared store (probing it while it is lost); returns at once without one.
    pub async fn watch_store(&self) {
        if let Some(shared) = self
            .limits
            .as_ref()
            .and_then(|limits| limits.shared.as_ref())
        {
            shared.watch().await;
        }
    }
}

/// The limits of one worker.
pub struct WorkerLimits {
    limits: RateLimits,
    /// The worker's connection to the shared store, when there is one, and the generation
    /// of the credentials it was made with.
    connection: RefCell<Option<(u64, ConnectionManager)>>,
}

impl WorkerLimits {
    /// Counts one request against the limiter of its policy, in its client's bucket, both as
    /// the request view decided them: the quota fields to send back (`None` when limiting is
    /// off), or the refusal.
    pub fn check(&self, view: &RequestView) -> Check {
        let Some(limits) = &self.limits.limits else {
            return Check::Decided(Ok(None));
        };
        let policy = PolicyName::of(view);
        let key = ClientKey::for_view(view);
        match &limits.shared {
            Some(shared) if shared.is_up() => {
                let connection = self.connection_to(shared);
                let limits = Arc::clone(limits);
                Check::Pending(Box::pin(async move {
                    let outcome = limits.decide_shared(connection, policy, key).await;
                    answer(&limits.policies[policy as usize], outcome)
                }))
            }
            Some(shared) => {
                shared.decided_locally();
                let outcome = limits.memory.decide(policy, key);
                Check::Decided(answer(&limits.policies[policy as usize], outcome))
            }
            None => {
                let outcome = limits.memory.decide(policy, key);
                Check::Decided(answer(&limits.policies[policy as usize], outcome))
            }
        }
    }

    /// The worker's connection, made again when the store's credentials changed since.
    fn connection_to(&self, shared: &RedisStore) -> ConnectionManager {
        let mut connection = self.connection.borrow_mut();
        match &*connection {
            Some((generation, current)) if *generation == shared.generation() => current.clone(),
            _ => {
                let (generation, fresh) = shared.connect_worker();
                *connection = Some((generation, fresh.clone()));
                fresh
            }
        }
    }
}

impl Limits {
    async fn decide_shared(
        &self,
        connection: ConnectionManager,
        policy: PolicyName,
        key: ClientKey,
    ) -> Outcome {
        let shared = self.shared.as_ref().expect("called with a shared store");
        match shared.decide(connection, policy, key).await {
            Ok(outcome) => outcome,
            Err(error) => {
                shared.lost(&error);
                shared.decided_locally();
                self.memory.decide(policy, key)
            }
        }
    }
}

/// The quota fields of an allowed request, or the refusal, whichever store decided.
fn answer(policy: &Policy, outcome: Outcome) -> Result<Option<QuotaFields>, Refusal> {
    match outcome {
        Outcome::Allowed { remaining } => Ok(Some(policy.quota_fields(remaining))),
        // Rounded up: a client told to wait "0" seconds retries at once and is refused
        // again.
        Outcome::Refused { wait } => Err(Refusal {
            policy: policy.name,
            retry_after_secs: ceil_secs(wait).max(1),
            quota: policy.quota_fields(0),
        }),
    }
}

/// `RateLimit-Policy` and `RateLimit` for one response.
pub struct QuotaFields {
    policy: HeaderValue,
    now: HeaderValue,
}

impl QuotaFields {
    pub fn add_to(self, headers: &mut HeaderMap) {
        headers.insert(RATELIMIT_POLICY, self.policy);
        headers.insert(RATELIMIT, self.now);
    }
}

/// A request over its client's limit: which policy refused it, how long to wait, and the
/// quota fields of the 429.
pub struct Refusal {
    pub policy: PolicyName,
    pub retry_after_secs: u64,
    pub quota: QuotaFields,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_clients_are_keyed_by_their_64() {
        let a = ClientKey::of(Some("2001:db8:1:2:aaaa::1".parse().unwrap()));
        let b = ClientKey::of(Some("2001:db8:1:2:bbbb::9".parse().unwrap()));
        let c = ClientKey::of(Some("2001:db8:1:3::1".parse().unwrap()));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(
            ClientKey::of(Some("::ffff:192.0.2.1".parse().unwrap())),
            ClientKey::of(Some("192.0.2.1".parse().unwrap()))
        );
        assert_eq!(ClientKey::of(None), ClientKey::Unknown);
    }

    #[test]
    fn waits_round_up_and_windows_cover_the_burst() {
        assert_eq!(ceil_secs(Duration::from_millis(1)), 1);
        assert_eq!(ceil_secs(Duration::from_millis(1000)), 1);
        assert_eq!(ceil_secs(Duration::from_millis(1001)), 2);
        assert_eq!(ceil_secs(Duration::ZERO), 0);
        let quota = Quota {
            per_second: 10,
            burst: 50,
        };
        assert_eq!(quota.period(), Duration::from_millis(100));
        assert_eq!(quota.window_secs(), 5);
    }

    #[test]
    fn only_api_paths_use_the_api_limiter() {
        let policy = |path: &str| {
            let request = actix_web::test::TestRequest::with_uri(path).to_srv_request();
            let view = RequestView::of(
                &request,
                &crate::edge::routes::RouteTable::default(),
                &crate::edge::client::ClientResolver::default(),
                &crate::auth::store::KeyStore::default(),
            );
            PolicyName::of(&view)
        };
        for path in [
            "/v1",
            "/v1/",
            "/v1/ping",
            "/v1/pings/x",
            "/v%31/ping",
            "/%76%31/x",
        ] {
            assert_eq!(policy(path), PolicyName::Api, "{path}");
        }
        for path in [
            "/",
            "/v10/ping",
            "/docs/",
            "/openapi/v1.json",
            "/v1ping",
            "/v1%2Fping",
        ] {
            assert_eq!(policy(path), PolicyName::Docs, "{path}");
        }
    }

    #[test]
    fn quota_fields_name_the_policy_and_the_time_to_refill() {
        let policy = Policy::new(
            PolicyName::Api,
            Quota {
                per_second: 10,
                burst: 50,
            },
        );
        let mut headers = HeaderMap::new();
        policy.quota_fields(47).add_to(&mut headers);
        assert_eq!(headers.get(RATELIMIT_POLICY).unwrap(), "\"api\";q=50;w=5");
        assert_eq!(headers.get(RATELIMIT).unwrap(), "\"api\";r=47;t=1");
        policy.quota_fields(0).add_to(&mut headers);
        assert_eq!(headers.get(RATELIMIT).unwrap(), "\"api\";r=0;t=5");
        // The per-thread reuse of the last value never answers a different question.
        for (remaining, expected) in [
            (47, "\"api\";r=47;t=1"),
            (47, "\"api\";r=47;t=1"),
            (35, "\"api\";r=35;t=2"),
            (47, "\"api\";r=47;t=1"),
        ] {
            policy.quota_fields(remaining).add_to(&mut headers);
            assert_eq!(headers.get(RATELIMIT).unwrap(), expected);
        }
        let docs = Policy::new(
            PolicyName::Docs,
            Quota {
                per_second: 1,
                burst: 3,
            },
        );
        docs.quota_fields(2).add_to(&mut headers);
        assert_eq!(headers.get(RATELIMIT).unwrap(), "\"docs\";r=2;t=1");
        policy.quota_fields(47).add_to(&mut headers);
        assert_eq!(headers.get(RATELIMIT).unwrap(), "\"api\";r=47;t=1");
    }
}
