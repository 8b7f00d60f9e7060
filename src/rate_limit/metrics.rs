//! The limiter's own series, written at each scrape from what it keeps: how many clients the
//! in-process limiter tracks and, with the shared store, whether the store is up, who decided,
//! how often it failed, was lost and came back, how long its calls take, and its budget. The refusals are counted where they are answered (the request
//! metrics), since every refusal is a response.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Unit;

use super::in_flight::InFlightCeiling;
use super::{PolicyName, RateLimits};

/// The limiter's series; see the module documentation.
#[derive(Debug)]
pub struct RateLimitCollector(pub RateLimits);

impl Collector for RateLimitCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        let limits = &self.0;
        let mut tracked = encoder.encode_descriptor(
            "partner_api_rate_limit_tracked_clients",
            "Clients the in-process limiter keeps state for, by policy (with the Redis store: its fallback).",
            None,
            MetricType::Gauge,
        )?;
        for policy in PolicyName::ALL {
            let clients = limits.tracked_clients(policy) as i64;
            tracked
                .encode_family(&[("policy", policy.as_str())])?
                .encode_gauge(&clients)?;
        }

        let Some(store) = limits.store_counts() else {
            return Ok(());
        };
        encoder
            .encode_descriptor(
                "partner_api_rate_limit_store_up",
                "1 while decisions go to the shared store, 0 while the in-process limiter \
                 decides instead.",
                None,
                MetricType::Gauge,
            )?
            .encode_gauge(&i64::from(store.up))?;
        let mut decisions = encoder.encode_descriptor(
            "partner_api_rate_limit_decisions",
            "Rate-limit decisions by the store that made them: redis (shared), memory \
             (the fallback, per replica).",
            None,
            MetricType::Counter,
        )?;
        for (name, count) in [
            ("redis", store.decided_shared),
            ("memory", store.decided_locally),
        ] {
            decisions
                .encode_family(&[("store", name)])?
                .encode_counter::<NoLabelSet, _, u64>(&count, None)?;
        }
        encoder
            .encode_descriptor(
                "partner_api_rate_limit_store_errors",
                "Calls to the shared store that failed or timed out (each decided in-process).",
                None,
                MetricType::Counter,
            )?
            .encode_counter::<NoLabelSet, _, u64>(&store.errors, None)?;
        let mut changes = encoder.encode_descriptor(
            "partner_api_rate_limit_store_changes",
            "Times the shared store was declared lost (decisions turned in-process) and found \
             again (decisions shared once more).",
            None,
            MetricType::Counter,
        )?;
        for (to, count) in [("lost", store.times_lost), ("back", store.times_back)] {
            changes
                .encode_family(&[("to", to)])?
                .encode_counter::<NoLabelSet, _, u64>(&count, None)?;
        }
        encoder
            .encode_descriptor(
                "partner_api_rate_limit_store_budget",
                "How long a call to the shared store may take (--rate-limit-store-timeout-ms) \
                 before the decision is made in-process.",
                Some(&Unit::Seconds),
                MetricType::Gauge,
            )?
            .encode_gauge(&store.budget.as_secs_f64())?;
        if let Some(durations) = limits.store_call_durations() {
            durations.encode(
                &mut encoder,
                "partner_api_rate_limit_store_call_duration",
                "How long the shared store's decision calls took, failed and timed-out ones \
                 included.",
            )?;
        }
        Ok(())
    }
}

/// The per-peer connection ceiling's refusals: a refused connection is closed before any
/// request is read, so no request metric counts it.
#[derive(Debug)]
pub struct ConnectionCeilingCollector(pub InFlightCeiling);

impl Collector for ConnectionCeilingCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        encoder
            .encode_descriptor(
                "partner_api_connections_refused",
                "Connections closed as soon as accepted because their peer address already held \
                 --max-connections-per-client.",
                None,
                MetricType::Counter,
            )?
            .encode_counter::<NoLabelSet, _, u64>(&self.0.refused(), None)
    }
}
