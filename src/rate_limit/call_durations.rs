//! How long the shared store's calls take, as a histogram: a Redis that answers within the
//! budget but slowly costs every request its wait and, past the budget, turns decisions local;
//! the request histograms show neither which part was slow nor how close to the budget it ran.
//! Every call is counted, those that failed or ran out of the budget included (at the time they
//! took). Relaxed atomics: a scrape may read a call's bucket before its sum, never a torn value.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Unit;

/// Upper bounds, in microseconds: fine around the default 20 ms budget and its half, where the
/// slow-store alert reads the 99th percentile, and up to the largest budget the setting allows
/// (10 s), so that half of any budget falls inside the histogram.
const BOUNDS_MICROS: [u64; 19] = [
    250, 500, 1_000, 2_500, 5_000, 7_500, 10_000, 12_500, 15_000, 20_000, 25_000, 50_000, 100_000,
    250_000, 500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000,
];

/// The store's calls by duration.
#[derive(Debug, Default)]
pub struct CallDurations {
    /// Calls per bucket, not cumulative; the last one is `+Inf`.
    buckets: [AtomicU64; BOUNDS_MICROS.len() + 1],
    sum_micros: AtomicU64,
}

impl CallDurations {
    /// One call that took `took`.
    pub fn observe(&self, took: Duration) {
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        let bucket = BOUNDS_MICROS
            .iter()
            .position(|bound| micros <= *bound)
            .unwrap_or(BOUNDS_MICROS.len());
        self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        self.sum_micros.fetch_add(micros, Ordering::Relaxed);
    }

    /// Writes the histogram as `name`, in seconds.
    pub fn encode(
        &self,
        encoder: &mut DescriptorEncoder,
        name: &str,
        help: &str,
    ) -> std::fmt::Result {
        let counts: Vec<u64> = self
            .buckets
            .iter()
            .map(|bucket| bucket.load(Ordering::Relaxed))
            .collect();
        let buckets: Vec<(f64, u64)> = BOUNDS_MICROS
            .iter()
            .map(|micros| *micros as f64 / 1e6)
            .chain([f64::INFINITY])
            .zip(counts.iter().copied())
            .collect();
        encoder
            .encode_descriptor(name, help, Some(&Unit::Seconds), MetricType::Histogram)?
            .encode_histogram::<NoLabelSet>(
                self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6,
                counts.iter().sum(),
                &buckets,
                None,
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_fall_in_their_buckets_and_the_slowest_in_the_last() {
        let durations = CallDurations::default();
        for micros in [250, 251, 14_000, 20_000, 2_000_000, 20_000_000] {
            durations.observe(Duration::from_micros(micros));
        }
        let counts: Vec<u64> = durations
            .buckets
            .iter()
            .map(|bucket| bucket.load(Ordering::Relaxed))
            .collect();
        assert_eq!(
            counts,
            [1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1]
        );
        assert_eq!(
            durations.sum_micros.load(Ordering::Relaxed),
            250 + 251 + 14_000 + 20_000 + 2_000_000 + 20_000_000
        );
    }
}
