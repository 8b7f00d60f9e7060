//! Whether the service takes new work, decided in one place for `/readyz` and for the metrics:
//! not while a shutdown drains it, nor while the certificate it serves has expired (every
//! client refuses the handshake), nor while an API worker makes no progress. `/readyz` names
//! the first reason that holds; the metrics say which hold (`partner_api_ready` and
//! `partner_api_not_ready{reason}`), so a replica that leaves a balancer's rotation is seen
//! leaving it, and why, without reading its probe.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::MetricType;

use crate::edge::tls::CertificateStore;
use crate::observability::watchdog::Watchdog;

/// Whether a shutdown has begun: true from start until then.
#[derive(Clone, Debug)]
pub struct Readiness(Arc<AtomicBool>);

impl Default for Readiness {
    fn default() -> Self {
        Readiness(Arc::new(AtomicBool::new(true)))
    }
}

impl Readiness {
    pub fn is_ready(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// From now on `/readyz` answers 503.
    pub fn shutting_down(&self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

/// Why the service takes no new work, in the order `/readyz` names them.
#[derive(Debug, PartialEq, Eq)]
pub enum NotReady {
    /// The API workers that make no progress, as the watchdog names them.
    WorkerStalled(Vec<String>),
    /// The `notAfter` of the certificate in use, as a Unix time.
    CertificateExpired(i64),
    ShuttingDown,
}

impl NotReady {
    /// Every reason's label value, for the metric.
    pub const REASONS: [&'static str; 3] =
        ["worker_stalled", "certificate_expired", "shutting_down"];

    pub fn reason(&self) -> &'static str {
        match self {
            NotReady::WorkerStalled(_) => Self::REASONS[0],
            NotReady::CertificateExpired(_) => Self::REASONS[1],
            NotReady::ShuttingDown => Self::REASONS[2],
        }
    }
}

/// What readiness is decided from.
#[derive(Clone)]
pub struct ReadinessChecks {
    pub readiness: Readiness,
    pub watchdog: Watchdog,
    /// The certificate the API serves, when it speaks HTTPS.
    pub certificates: Option<Arc<CertificateStore>>,
}

impl ReadinessChecks {
    /// Every reason that holds now, in `/readyz`'s order; empty while the service is ready.
    pub fn not_ready(&self) -> Vec<NotReady> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_secs() as i64);
        let stalled = self.watchdog.stalled();
        let expired = self
            .certificates
            .as_ref()
            .and_then(|store| store.status().expired_at(now));
        let mut reasons = Vec::new();
        if !stalled.is_empty() {
            reasons.push(NotReady::WorkerStalled(stalled));
        }
        if let Some(not_after) = expired {
            reasons.push(NotReady::CertificateExpired(not_after));
        }
        if !self.readiness.is_ready() {
            reasons.push(NotReady::ShuttingDown);
        }
        reasons
    }
}

/// `partner_api_ready` and `partner_api_not_ready{reason}`, written at each scrape.
pub struct ReadinessCollector(pub ReadinessChecks);

impl std::fmt::Debug for ReadinessCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReadinessCollector")
    }
}

impl Collector for ReadinessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        let reasons = self.0.not_ready();
        encoder
            .encode_descriptor(
                "partner_api_ready",
                "1 while /readyz answers 200 (the replica takes new work), else 0.",
                None,
                MetricType::Gauge,
            )?
            .encode_gauge(&i64::from(reasons.is_empty()))?;
        let mut family = encoder.encode_descriptor(
            "partner_api_not_ready",
            "1 for each reason that keeps the replica out of rotation now (worker_stalled, \
             certificate_expired, shutting_down), else 0.",
            None,
            MetricType::Gauge,
        )?;
        for reason in NotReady::REASONS {
            let holds = reasons.iter().any(|held| held.reason() == reason);
            family
                .encode_family(&[("reason", reason)])?
                .encode_gauge(&i64::from(holds))?;
        }
        Ok(())
    }
}
