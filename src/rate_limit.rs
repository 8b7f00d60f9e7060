//! Rate limiting, per client, with actix-governor. Two limiters: one for the API (`/v1`) and a
//! more generous one for everything else (the reference, the documents, unknown paths). Each
//! is built once and shared by all workers (a GCRA bucket per client key in a concurrent map),
//! and pruned of quiet clients by one periodic task, not per request. The request-conventions
//! middleware calls [`RateLimits::check`] first thing, before routing and before it keeps
//! anything for later, so a refused request costs no more than the check and its 429. Every answer
//! carries the IETF quota fields (draft-ietf-httpapi-ratelimit-headers-09): `RateLimit-Policy`
//! (`"api";q=<burst>;w=<seconds to refill it>`) and `RateLimit` (`"api";r=<remaining>;t=<seconds
//! until full>`); a 429 also carries `Retry-After` in whole seconds, rounded up, never 0.
//!
//! The limiters are actix-governor's (its config builder and keyed store), consulted directly
//! rather than through actix-governor's middleware, which cost about 7,000 instructions a
//! request here, mostly for work this service then undid: it stores a result in the request's
//! extensions, and allocates `x-ratelimit-*` headers that had to be parsed and replaced by the
//! IETF fields; its 429 is plain text with a truncated wait. See BENCHMARKS.md for the
//! measurements.

use std::cell::RefCell;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use actix_governor::governor::clock::Clock;
use actix_governor::governor::middleware::StateInformationMiddleware;
use actix_governor::{
    GovernorConfig, GovernorConfigBuilder, KeyExtractor, SimpleKeyExtractionError,
};
use actix_web::dev::ServiceRequest;
use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue};

use crate::routes::API_PREFIX;

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
    fn period(self) -> Duration {
        Duration::from_nanos(1_000_000_000 / u64::from(self.per_second.max(1)))
    }

    /// Whole seconds for an empty bucket to fill again, rounded up.
    fn window_secs(self) -> u64 {
        ceil_secs(self.period() * self.burst)
    }
}

/// The client key: one bucket per IPv4 address, per IPv6 /64 (one host or site usually owns
/// the whole /64, so keying by address would let it multiply its quota), and one shared
/// bucket for requests whose client cannot be determined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClientKey {
    V4(u32),
    V6Prefix64(u64),
    Unknown,
}

impl ClientKey {
    pub fn of(ip: Option<IpAddr>) -> ClientKey {
        match ip.map(|ip| ip.to_canonical()) {
            Some(IpAddr::V4(ip)) => ClientKey::V4(ip.to_bits()),
            Some(IpAddr::V6(ip)) => ClientKey::V6Prefix64((ip.to_bits() >> 64) as u64),
            None => ClientKey::Unknown,
        }
    }
}

/// actix-governor's config builder needs a key extractor to know the key type. This service
/// hands the limiter its keys itself (the client the conventions middleware resolved, see
/// [`RateLimits::check`]); were this ever asked, it would key by the peer.
#[derive(Clone, Copy, Debug)]
pub struct ClientKeyExtractor;

impl KeyExtractor for ClientKeyExtractor {
    type Key = ClientKey;
    type KeyExtractionError = SimpleKeyExtractionError<&'static str>;

    fn extract(&self, request: &ServiceRequest) -> Result<ClientKey, Self::KeyExtractionError> {
        Ok(ClientKey::of(request.peer_addr().map(|peer| peer.ip())))
    }
}

fn ceil_secs(duration: Duration) -> u64 {
    duration.as_secs() + u64::from(duration.subsec_nanos() > 0)
}

type Limiter = GovernorConfig<ClientKeyExtractor, StateInformationMiddleware>;

/// One limiter with its policy name and the `RateLimit-Policy` value it announces.
struct Policy {
    name: &'static str,
    quota: Quota,
    limiter: Limiter,
    policy_header: HeaderValue,
    /// The `RateLimit` value of a client with nothing left, which is what every refusal says:
    /// written once, not once per 429.
    exhausted_header: HeaderValue,
}

impl Policy {
    fn new(name: &'static str, quota: Quota) -> Policy {
        let limiter = GovernorConfigBuilder::default()
            .period(quota.period())
            .burst_size(quota.burst.max(1))
            .key_extractor(ClientKeyExtractor)
            .use_headers()
            .finish()
            .expect("period and burst are non-zero");
        let policy_header = HeaderValue::from_str(&format!(
            "\"{name}\";q={};w={}",
            quota.burst,
            quota.window_secs()
        ))
        .expect("the policy is a valid header value");
        let mut policy = Policy {
            name,
            quota,
            limiter,
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
                let slot = &mut last[usize::from(self.name != "api")];
                match slot {
                    Some(last)
                        if last.policy == self.name
                            && last.remaining == remaining
                            && last.refill_secs == refill_secs =>
                    {
                        last.value.clone()
                    }
                    _ => {
                        let value = self.quota_now(remaining, refill_secs);
                        *slot = Some(LastQuota {
                            policy: self.name,
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

    /// `"<name>";r=<remaining>;t=<seconds>`, written on the stack (this runs on every request).
    fn quota_now(&self, remaining: u32, refill_secs: u64) -> HeaderValue {
        let mut text = [0u8; 64];
        let mut length = 0;
        for piece in [b"\"".as_slice(), self.name.as_bytes(), b"\";r="] {
            text[length..length + piece.len()].copy_from_slice(piece);
            length += piece.len();
        }
        let (mut remaining_digits, mut refill_digits) = (itoa::Buffer::new(), itoa::Buffer::new());
        for piece in [
            remaining_digits.format(remaining).as_bytes(),
            b";t=",
            refill_digits.format(refill_secs).as_bytes(),
        ] {
            text[length..length + piece.len()].copy_from_slice(piece);
            length += piece.len();
        }
        HeaderValue::from_bytes(&text[..length]).expect("digits and a token are a header value")
    }

    fn prune(&self) {
        let limiter = self.limiter.limiter();
        limiter.retain_recent();
        limiter.shrink_to_fit();
    }

    fn tracked_clients(&self) -> usize {
        self.limiter.limiter().len()
    }
}

thread_local! {
    /// The last `RateLimit` value this thread wrote, per policy. A client well within its
    /// limit keeps a nearly full bucket, so most answers repeat the previous value: a clone
    /// shares its bytes, where writing it again costs an allocation.
    static LAST_QUOTA: RefCell<[Option<LastQuota>; 2]> = const { RefCell::new([None, None]) };
}

/// A `RateLimit` value and what it says.
struct LastQuota {
    policy: &'static str,
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

/// The limiters of one server: built once, then cloned (cheaply, they are shared) into every
/// worker's middleware. `None` when limiting is switched off.
#[derive(Clone)]
pub struct RateLimits {
    policies: Option<Arc<[Policy; 2]>>,
}

const API: usize = PolicyName::Api as usize;

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
}

impl std::fmt::Debug for RateLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimits")
            .field("on", &self.policies.is_some())
            .finish_non_exhaustive()
    }
}

impl RateLimits {
    pub fn new(settings: Option<RateLimitSettings>) -> Self {
        RateLimits {
            policies: settings.map(|settings| {
                Arc::new([
                    Policy::new(PolicyName::Api.as_str(), settings.api),
                    Policy::new(PolicyName::Docs.as_str(), settings.docs),
                ])
            }),
        }
    }

    /// Drops the state of clients whose buckets are full again (they are indistinguishable
    /// from new ones) and returns the memory. Called periodically by one task.
    pub fn prune(&self) {
        for policy in self.policies.iter().flat_map(|policies| policies.iter()) {
            policy.prune();
        }
        return_free_memory();
    }

    /// Clients with state in the API limiter (for tests and diagnostics).
    pub fn tracked_api_clients(&self) -> usize {
        self.tracked_clients(PolicyName::Api)
    }

    /// Clients with state in the limiter of `policy` (0 when limiting is off).
    pub fn tracked_clients(&self, policy: PolicyName) -> usize {
        self.policies
            .as_ref()
            .map_or(0, |policies| policies[policy as usize].tracked_clients())
    }

    /// Checks `count` requests from distinct IPv4 clients against the API limiter, as if they
    /// had arrived; for memory tests and benchmarks of the limiter alone.
    pub fn check_distinct_clients(&self, count: u32) {
        if let Some(policies) = &self.policies {
            let limiter = policies[API].limiter.limiter();
            for client in 0..count {
                let _ = limiter.check_key(&ClientKey::V4(client));
            }
        }
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

/// `true` for paths under the API prefix, which the API limiter guards.
fn is_api_path(path: &str) -> bool {
    path.strip_prefix(API_PREFIX)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

impl RateLimits {
    /// Counts one request from `client` to `path` against the limiter for that path. The
    /// quota fields to send back (`None` when limiting is off), or the refusal.
    pub fn check(
        &self,
        path: &str,
        client: Option<IpAddr>,
    ) -> Result<Option<QuotaFields>, Refusal> {
        let Some(policies) = &self.policies else {
            return Ok(None);
        };
        let name = if is_api_path(path) {
            PolicyName::Api
        } else {
            PolicyName::Docs
        };
        let policy = &policies[name as usize];
        let limiter = policy.limiter.limiter();
        match limiter.check_key(&ClientKey::of(client)) {
            Ok(snapshot) => Ok(Some(
                policy.quota_fields(snapshot.remaining_burst_capacity()),
            )),
            // Rounded up: a client told to wait "0" seconds retries at once and is refused
            // again. The limiter's own clock: building a new one (as `DefaultClock::default()`
            // does) runs CPUID, which costs a VM exit on virtual machines, per refusal.
            Err(refusal) => Err(Refusal {
                policy: name,
                retry_after_secs: ceil_secs(refusal.wait_time_from(limiter.clock().now())).max(1),
                quota: policy.quota_fields(0),
            }),
        }
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
        for path in ["/v1", "/v1/", "/v1/ping", "/v1/pings/x"] {
            assert!(is_api_path(path), "{path}");
        }
        for path in ["/", "/v10/ping", "/docs/", "/openapi/v1.json", "/v1ping"] {
            assert!(!is_api_path(path), "{path}");
        }
    }

    #[test]
    fn quota_fields_name_the_policy_and_the_time_to_refill() {
        let policy = Policy::new(
            "api",
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
            "docs",
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

    /// A million distinct clients, then quiet: pruning drops their state and frees the map.
    #[test]
    fn pruning_forgets_a_million_quiet_clients() {
        let limits = RateLimits::new(Some(RateLimitSettings {
            api: Quota {
                per_second: 1000,
                burst: 1,
            },
            docs: Quota {
                per_second: 1000,
                burst: 1,
            },
        }));
        limits.check_distinct_clients(1_000_000);
        assert_eq!(limits.tracked_api_clients(), 1_000_000);
        // One request's worth of quota (1 ms) later every bucket is full again.
        std::thread::sleep(Duration::from_millis(20));
        limits.prune();
        assert_eq!(limits.tracked_api_clients(), 0);
    }
}
