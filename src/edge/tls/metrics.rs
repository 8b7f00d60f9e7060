//! The certificate's series, written at each scrape from the store's status: when the
//! certificate in use became valid and expires (what the expiry alerts read: the lifetime sets
//! how early a renewal is overdue) and was loaded, and how its reloads went.

use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Unit;

use super::CertificateStore;

/// The certificate's series; see the module documentation.
#[derive(Debug)]
pub struct CertificateCollector(pub Arc<CertificateStore>);

impl Collector for CertificateCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        let status = self.0.status();
        if let Some(valid_from) = status.valid_from {
            encoder
                .encode_descriptor(
                    "partner_api_tls_certificate_not_before_timestamp",
                    "When the certificate in use became valid (its notBefore), as a Unix time.",
                    Some(&Unit::Seconds),
                    MetricType::Gauge,
                )?
                .encode_gauge(&valid_from)?;
        }
        if let Some(expires) = status.expires_at {
            encoder
                .encode_descriptor(
                    "partner_api_tls_certificate_expiry_timestamp",
                    "When the certificate in use expires (its notAfter), as a Unix time.",
                    Some(&Unit::Seconds),
                    MetricType::Gauge,
                )?
                .encode_gauge(&expires)?;
        }
        encoder
            .encode_descriptor(
                "partner_api_tls_certificate_loaded_timestamp",
                "When the certificate in use was loaded (at start or by a reload), as a \
                 Unix time.",
                Some(&Unit::Seconds),
                MetricType::Gauge,
            )?
            .encode_gauge(&status.loaded_at)?;
        encoder
            .encode_descriptor(
                "partner_api_tls_certificate_reload_refused_timestamp",
                "When a reload was last refused (the old certificate stayed), as a Unix \
                 time; 0 if never.",
                Some(&Unit::Seconds),
                MetricType::Gauge,
            )?
            .encode_gauge(&status.refused_at.unwrap_or(0))?;
        encoder
            .encode_descriptor(
                "partner_api_tls_certificate_files_refused",
                "1 while the certificate files on disk are the ones the last reload refused \
                 (the certificate in use is older, and a restart would refuse them and exit); \
                 else 0.",
                None,
                MetricType::Gauge,
            )?
            .encode_gauge(&i64::from(status.files_refused))?;
        let mut reloads = encoder.encode_descriptor(
            "partner_api_tls_certificate_reloads",
            "Certificate reloads since start, by outcome.",
            None,
            MetricType::Counter,
        )?;
        for (outcome, count) in [("loaded", status.reloaded), ("refused", status.refused)] {
            reloads
                .encode_family(&[("outcome", outcome)])?
                .encode_counter::<NoLabelSet, _, u64>(&count, None)?;
        }
        Ok(())
    }
}
