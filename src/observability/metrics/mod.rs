//! The service's Prometheus metrics, served by the admin listener at `/metrics` in OpenMetrics
//! to a scraper that asks for it (as Prometheus does) and in the classic text format to
//! everyone else (`exposition`). The client library is the Prometheus project's own
//! `prometheus-client`: it writes OpenMetrics natively, and its `Collector` trait lets a scrape
//! read values kept wherever the hot path keeps them. This module writes the requests' series;
//! every other part writes its own through a collector of its own, handed over where the
//! server is built (`Application::build_with`, with [`Metrics::with`]): after the requests'
//! series come the log sink's, the limiter's (`rate_limit::metrics`), the watchdog's, the
//! certificate's (`edge::tls::metrics`), the build's and the process's.
//!
//! What one request pays, and why it is shared-nothing: each worker records its requests in
//! cells of its own (a counter, a sum and the histogram's buckets, all relaxed atomics that only
//! that worker writes), found through a small map that only that worker reads; a new series
//! (route, method, status) is announced once per worker under a lock that scrapes also take.
//! The in-flight gauge and the refusal counters are per-worker atomics too. A scrape adds the
//! workers' cells up. Label values come from small fixed sets: the route template (from the
//! route table, so a flood of random paths all counts as `unmatched`), one of eight method
//! names (anything else is `other`), and the status code the service sent.
//!
//! Two durations, because they answer two questions. The request duration runs until the
//! response's last byte is handed to the connection (`conventions::Recorded`): a slow reader
//! shows in it, as does an HTTP/2 client that opens no flow-control window, so a client can
//! stretch it at will. The response-head duration runs until the response head is ready: the
//! service's own time, which no client can move, and so what the latency objective reads
//! (monitoring/partner-api.rules.yaml).
//!
//! How many series that makes, and why each earns its place. The counter has one series per
//! (route, method, status) answered, one line each: an operator tells a 404 from a 405 from a
//! 429 by it. A histogram series costs 19 lines (16 buckets, `+Inf`, sum, count), so the
//! request duration is labelled by the status's class (`2xx`, `3xx`, `4xx`, `5xx`), not the
//! status: how long a 404 took against a 405 says nothing its class does not; and the head
//! duration only by route and method, for the methods a route serves. The ceiling is fixed by
//! the code, never by clients: routes are the table's templates plus `/docs/{file}` and
//! `unmatched` (16 today), methods 8, statuses those the service sends (the catalogue's and
//! 200, 304 and the reference's redirect), classes 4. Every method on every route and two
//! unknown paths, plain, conditional and over the limit, make the most series today's routes
//! allow (docs/operations/monitoring.md counts them); ordinary traffic makes a handful.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use actix_web::http::Method;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};

use super::cgroup::CgroupCollector;
use super::log_sink::LogSinkCollector;
use super::process::ProcessCollector;
use crate::edge::routes::RouteIndex as TableIndex;
use crate::rate_limit::PolicyName;

pub mod exposition;

pub use exposition::Exposition;

/// Upper bounds of the request-duration histogram, in microseconds: 100 µs to 10 s, where a
/// ping answers at the bottom and a stuck request would show at the top.
const BUCKETS_MICROS: [u64; 16] = [
    100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
    1_000_000, 2_500_000, 5_000_000, 10_000_000,
];

/// The route label of a request whose path matches no route.
pub const UNMATCHED: &str = "unmatched";

/// Method label values; any other method is counted as `other`.
const METHODS: [&str; 8] = [
    "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other",
];

fn method_index(method: &Method) -> u8 {
    match *method {
        Method::GET => 0,
        Method::HEAD => 1,
        Method::POST => 2,
        Method::PUT => 3,
        Method::PATCH => 4,
        Method::DELETE => 5,
        Method::OPTIONS => 6,
        _ => 7,
    }
}

/// The metrics of one server: cloned into every worker, read by the admin listener.
#[derive(Clone, Debug)]
pub struct Metrics {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    /// Every (worker, series) cell ever created, with its labels.
    series: Mutex<Vec<RegisteredSeries>>,
    /// Every (worker, route, method) cell of the response-head histogram.
    head_series: Mutex<Vec<HeadSeries>>,
    /// Every worker's gauges.
    workers: Mutex<Vec<Arc<WorkerGauges>>>,
    /// The HTTP layer's own rejections (a malformed, too large or too slow head), by status:
    /// counted as `unmatched` and `other`, since no route or method could be read.
    rejections: Mutex<HashMap<u16, Arc<SeriesCells>>>,
    /// The series other parts keep for themselves (the log sink, the limiter, the watchdog,
    /// the certificate), written after the requests', in this order, at each scrape.
    collectors: Vec<Arc<dyn Collector>>,
}

#[derive(Debug)]
struct RegisteredSeries {
    route: Arc<str>,
    method: &'static str,
    status: u16,
    cells: Arc<SeriesCells>,
}

#[derive(Debug)]
struct HeadSeries {
    route: Arc<str>,
    method: &'static str,
    cells: Arc<SeriesCells>,
}

/// One worker's share of one series.
#[derive(Debug, Default)]
struct SeriesCells {
    sum_micros: AtomicU64,
    /// Requests per bucket, not cumulative; the last one is `+Inf`.
    buckets: [AtomicU64; BUCKETS_MICROS.len() + 1],
}

/// One worker's gauges and refusal counters.
#[derive(Debug, Default)]
struct WorkerGauges {
    in_flight: AtomicI64,
    refusals: [AtomicU64; 2],
    in_flight_refusals: AtomicU64,
    aborted: AtomicU64,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// The requests' metrics, with the log sink's and the process's.
    pub fn new() -> Self {
        Metrics {
            shared: Arc::new(Shared {
                series: Mutex::new(Vec::new()),
                head_series: Mutex::new(Vec::new()),
                workers: Mutex::new(Vec::new()),
                rejections: Mutex::new(HashMap::new()),
                collectors: vec![Arc::new(LogSinkCollector)],
            }),
        }
    }

    /// The same metrics, with the series `collector` writes at each scrape: how a part of the
    /// service (the limiter, the certificate, the watchdog) reports what it keeps, without
    /// this module reaching into it. Call before cloning.
    pub fn with(self, collector: impl Collector) -> Self {
        let mut shared =
            Arc::try_unwrap(self.shared).expect("called before the metrics are shared");
        shared.collectors.push(Arc::new(collector));
        Metrics {
            shared: Arc::new(shared),
        }
    }

    /// A recorder for the calling worker, labelling routes by `routes`.
    pub fn for_worker(&self, routes: RouteLabels) -> WorkerMetrics {
        let gauges = Arc::new(WorkerGauges::default());
        lock(&self.shared.workers).push(Arc::clone(&gauges));
        WorkerMetrics {
            shared: Arc::clone(&self.shared),
            gauges,
            cells: RefCell::new(HashMap::default()),
            head_cells: RefCell::new(HashMap::default()),
            routes,
        }
    }

    /// A request the HTTP layer rejected itself with `status`, before any route could be
    /// read: counted in the requests' series as `unmatched` and `other`. Rare (each ends its
    /// connection), so one lock is fine.
    pub fn record_rejection(&self, status: u16, micros: u64) {
        let mut rejections = lock(&self.shared.rejections);
        let cells = rejections.entry(status).or_insert_with(|| {
            let cells = Arc::new(SeriesCells::default());
            lock(&self.shared.series).push(RegisteredSeries {
                route: Arc::from(UNMATCHED),
                method: METHODS[7],
                status,
                cells: Arc::clone(&cells),
            });
            cells
        });
        cells.observe(micros);
    }

    /// The exposition of every metric in `format`.
    pub fn render(&self, format: Exposition) -> String {
        let mut registry = Registry::default();
        registry.register_collector(Box::new(RequestCollector(Arc::clone(&self.shared))));
        for collector in &self.shared.collectors {
            registry.register_collector(Box::new(SharedCollector(Arc::clone(collector))));
        }
        registry.register_collector(Box::new(BuildCollector));
        registry.register_collector(Box::new(ProcessCollector));
        registry.register_collector(Box::new(CgroupCollector));
        let mut text = String::with_capacity(16 * 1024);
        prometheus_client::encoding::text::encode(&mut text, &registry)
            .expect("writing to a String does not fail");
        match format {
            Exposition::OpenMetrics => text,
            Exposition::Classic => exposition::to_classic(&text),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding it leaves counters, never a broken invariant.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Route templates for the `route` label: the route table's patterns, in its order (the
/// documentation's files among them), then any other path under `/docs/` as one label; anything
/// else is [`UNMATCHED`]. Which route a request took is the request view's answer: nothing
/// here matches a path again.
#[derive(Clone, Debug)]
pub struct RouteLabels {
    routes: Rc<[Arc<str>]>,
}

/// Index into [`RouteLabels`], or one of the two labels below.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteIndex(u8);

const UNMATCHED_INDEX: u8 = u8::MAX;
const REFERENCE_FILES_INDEX: u8 = u8::MAX - 1;

/// Label of the paths under `/docs/` that no route serves: one label, however many are tried.
const REFERENCE_FILES: &str = "/docs/{file}";

impl RouteLabels {
    /// The labels of the routes in `table`, in its order.
    pub fn new<'a>(templates: impl IntoIterator<Item = &'a str>) -> Self {
        let routes: Vec<Arc<str>> = templates
            .into_iter()
            .take(usize::from(REFERENCE_FILES_INDEX))
            .map(Arc::from)
            .collect();
        RouteLabels {
            routes: routes.into(),
        }
    }

    /// The label of a request that matched `route` (as the request view decided) at `path`
    /// (the path as the router decoded it).
    pub fn index(&self, route: Option<TableIndex>, path: &str) -> RouteIndex {
        match route {
            Some(route) if route.get() < self.routes.len() => RouteIndex(route.get() as u8),
            _ if path.starts_with("/docs/") => RouteIndex(REFERENCE_FILES_INDEX),
            _ => RouteIndex(UNMATCHED_INDEX),
        }
    }

    fn label(&self, index: RouteIndex) -> Arc<str> {
        match index.0 {
            UNMATCHED_INDEX => Arc::from(UNMATCHED),
            REFERENCE_FILES_INDEX => Arc::from(REFERENCE_FILES),
            index => Arc::clone(&self.routes[usize::from(index)]),
        }
    }
}

/// One worker's recorder; see the module documentation for what it costs.
pub struct WorkerMetrics {
    shared: Arc<Shared>,
    gauges: Arc<WorkerGauges>,
    /// Keyed by what the service chose (route, method, status), never by what a client sent.
    cells: RefCell<HashMap<u32, Arc<SeriesCells>>>,
    head_cells: RefCell<HashMap<u16, Arc<SeriesCells>>>,
    routes: RouteLabels,
}

/// Counts a request as in flight until dropped.
pub struct InFlight(Rc<WorkerMetrics>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.gauges.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

impl WorkerMetrics {
    /// The route label of a request the view matched to `route` at `path`.
    pub fn route(&self, route: Option<TableIndex>, path: &str) -> RouteIndex {
        self.routes.index(route, path)
    }

    /// A request goes in flight until the returned guard is dropped.
    pub fn in_flight(self: &Rc<Self>) -> InFlight {
        self.gauges.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(Rc::clone(self))
    }

    /// A request refused by the rate limiter of `policy`.
    pub fn refused(&self, policy: PolicyName) {
        self.gauges.refusals[policy as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// A request refused because its client had as many requests in flight as it may.
    pub fn refused_in_flight(&self) {
        self.gauges
            .in_flight_refusals
            .fetch_add(1, Ordering::Relaxed);
    }

    /// A response whose connection let go of it before its last byte.
    pub fn aborted(&self) {
        self.gauges.aborted.fetch_add(1, Ordering::Relaxed);
    }

    /// One answered request.
    pub fn record(&self, route: RouteIndex, method: &Method, status: u16, micros: u64) {
        let method = method_index(method);
        let key = u32::from(route.0) << 24 | u32::from(method) << 16 | u32::from(status);
        let mut cells = self.cells.borrow_mut();
        let cells = cells.entry(key).or_insert_with(|| {
            let cells = Arc::new(SeriesCells::default());
            lock(&self.shared.series).push(RegisteredSeries {
                route: self.routes.label(route),
                method: METHODS[usize::from(method)],
                status,
                cells: Arc::clone(&cells),
            });
            cells
        });
        cells.observe(micros);
    }

    /// The response head of a request is ready, `micros` after its head arrived: the time the
    /// service took, which no client can stretch (see the module documentation).
    pub fn record_head(&self, route: RouteIndex, method: &Method, micros: u64) {
        let method = method_index(method);
        let key = u16::from(route.0) << 8 | u16::from(method);
        let mut cells = self.head_cells.borrow_mut();
        let cells = cells.entry(key).or_insert_with(|| {
            let cells = Arc::new(SeriesCells::default());
            lock(&self.shared.head_series).push(HeadSeries {
                route: self.routes.label(route),
                method: METHODS[usize::from(method)],
                cells: Arc::clone(&cells),
            });
            cells
        });
        cells.observe(micros);
    }
}

impl SeriesCells {
    fn observe(&self, micros: u64) {
        let bucket = BUCKETS_MICROS
            .iter()
            .position(|bound| micros <= *bound)
            .unwrap_or(BUCKETS_MICROS.len());
        self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        self.sum_micros.fetch_add(micros, Ordering::Relaxed);
    }
}

/// A series summed over the workers.
#[derive(Default)]
struct SeriesTotal {
    sum_micros: u64,
    buckets: [u64; BUCKETS_MICROS.len() + 1],
}

impl SeriesTotal {
    fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }

    /// Adds one worker's cells.
    fn add(&mut self, cells: &SeriesCells) {
        self.sum_micros += cells.sum_micros.load(Ordering::Relaxed);
        for (sum, cell) in self.buckets.iter_mut().zip(&cells.buckets) {
            *sum += cell.load(Ordering::Relaxed);
        }
    }

    /// Adds another total's counts: a status class's total is its statuses' summed.
    fn merge(&mut self, other: &SeriesTotal) {
        self.sum_micros += other.sum_micros;
        for (sum, bucket) in self.buckets.iter_mut().zip(&other.buckets) {
            *sum += bucket;
        }
    }

    /// The buckets with their upper `bounds`, each counted on its own (the encoder adds them
    /// up).
    fn with_bounds(&self, bounds: &[f64]) -> Vec<(f64, u64)> {
        bounds
            .iter()
            .copied()
            .zip(self.buckets.iter().copied())
            .collect()
    }
}

/// The class label of `status`: `2xx` for 200 to 299, and so on.
fn status_class(status: u16) -> &'static str {
    match status {
        ..200 => "1xx",
        200..300 => "2xx",
        300..400 => "3xx",
        400..500 => "4xx",
        _ => "5xx",
    }
}

/// Encodes the service's own metrics at each scrape.
#[derive(Debug)]
struct RequestCollector(Arc<Shared>);

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

impl Collector for RequestCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        let shared = &self.0;
        let mut totals: BTreeMap<(Arc<str>, &'static str, u16), SeriesTotal> = BTreeMap::new();
        for series in lock(&shared.series).iter() {
            let total = totals
                .entry((Arc::clone(&series.route), series.method, series.status))
                .or_default();
            total.add(&series.cells);
        }

        let mut family = encoder.encode_descriptor(
            "partner_api_http_requests",
            "Requests answered, by route template, method and status code.",
            None,
            MetricType::Counter,
        )?;
        for ((route, method, status), total) in &totals {
            let labels = [
                ("route", route.to_string()),
                ("method", (*method).to_owned()),
                ("status", status.to_string()),
            ];
            family
                .encode_family(&labels)?
                .encode_counter::<NoLabelSet, _, u64>(&total.count(), None)?;
        }

        // The histogram by status class: see the module documentation.
        let mut by_class: BTreeMap<(Arc<str>, &'static str, &'static str), SeriesTotal> =
            BTreeMap::new();
        for ((route, method, status), total) in &totals {
            by_class
                .entry((Arc::clone(route), method, status_class(*status)))
                .or_default()
                .merge(total);
        }
        encode_histograms(
            &mut encoder,
            "partner_api_http_request_duration",
            "Time from receiving a request's head to handing the last byte of its response to \
             the connection, by route template, method and status class.",
            by_class.iter().map(|((route, method, class), total)| {
                let labels = vec![
                    ("route", route.to_string()),
                    ("method", (*method).to_owned()),
                    ("status_class", (*class).to_owned()),
                ];
                (labels, total)
            }),
        )?;

        let mut heads: BTreeMap<(Arc<str>, &'static str), SeriesTotal> = BTreeMap::new();
        for series in lock(&shared.head_series).iter() {
            heads
                .entry((Arc::clone(&series.route), series.method))
                .or_default()
                .add(&series.cells);
        }
        encode_histograms(
            &mut encoder,
            "partner_api_http_response_head_duration",
            "Time from receiving a request's head to its response head being ready, by route \
             template and method, for the methods a route serves and not for refusals (429): \
             the service's own time, which a slow reader cannot stretch (the latency \
             objective's measure).",
            heads.iter().map(|((route, method), total)| {
                let labels = vec![
                    ("route", route.to_string()),
                    ("method", (*method).to_owned()),
                ];
                (labels, total)
            }),
        )?;

        let workers = lock(&shared.workers);
        let in_flight: i64 = workers
            .iter()
            .map(|worker| worker.in_flight.load(Ordering::Relaxed))
            .sum();
        encoder
            .encode_descriptor(
                "partner_api_http_requests_in_flight",
                "Requests received whose response has not yet been handed to the connection to \
             its last byte.",
                None,
                MetricType::Gauge,
            )?
            .encode_gauge(&in_flight)?;

        let mut refusals = encoder.encode_descriptor(
            "partner_api_rate_limit_refusals",
            "Requests refused with 429 rate_limited, by limiter policy.",
            None,
            MetricType::Counter,
        )?;
        for policy in PolicyName::ALL {
            let count: u64 = workers
                .iter()
                .map(|worker| worker.refusals[policy as usize].load(Ordering::Relaxed))
                .sum();
            refusals
                .encode_family(&[("policy", policy.as_str())])?
                .encode_counter::<NoLabelSet, _, u64>(&count, None)?;
        }
        let in_flight_refusals: u64 = workers
            .iter()
            .map(|worker| worker.in_flight_refusals.load(Ordering::Relaxed))
            .sum();
        encoder
            .encode_descriptor(
                "partner_api_in_flight_refusals",
                "Requests refused with 429 rate_limited because their client already had \
                 --max-in-flight-per-client requests in flight.",
                None,
                MetricType::Counter,
            )?
            .encode_counter::<NoLabelSet, _, u64>(&in_flight_refusals, None)?;
        let aborted: u64 = workers
            .iter()
            .map(|worker| worker.aborted.load(Ordering::Relaxed))
            .sum();
        encoder
            .encode_descriptor(
                "partner_api_http_responses_aborted",
                "Responses whose connection ended before their last byte was handed to it: the \
                 client went away, or read nothing within --send-timeout-secs. Each is also \
                 counted in partner_api_http_requests_total with its status.",
                None,
                MetricType::Counter,
            )?
            .encode_counter::<NoLabelSet, _, u64>(&aborted, None)?;
        Ok(())
    }
}

/// One histogram family, `name`, in seconds, with a series per labelled total.
fn encode_histograms<'a>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    series: impl Iterator<Item = (Vec<(&'static str, String)>, &'a SeriesTotal)>,
) -> std::fmt::Result {
    let bounds: Vec<f64> = BUCKETS_MICROS
        .iter()
        .map(|micros| *micros as f64 / 1e6)
        .chain([f64::INFINITY])
        .collect();
    let mut family =
        encoder.encode_descriptor(name, help, Some(&Unit::Seconds), MetricType::Histogram)?;
    for (labels, total) in series {
        family
            .encode_family(&labels)?
            .encode_histogram::<NoLabelSet>(
                total.sum_micros as f64 / 1e6,
                total.count(),
                &total.with_bounds(&bounds),
                None,
            )?;
    }
    Ok(())
}

/// A collector kept by [`Metrics`] and lent to each scrape's registry.
#[derive(Debug)]
struct SharedCollector(Arc<dyn Collector>);

impl Collector for SharedCollector {
    fn encode(&self, encoder: DescriptorEncoder) -> std::fmt::Result {
        self.0.encode(encoder)
    }
}

/// The running build and the scrape's time, written last.
#[derive(Debug)]
struct BuildCollector;

impl Collector for BuildCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        encoder
            .encode_descriptor(
                "partner_api_build",
                "The running build: version and commit.",
                None,
                MetricType::Info,
            )?
            .encode_info(&[
                ("version", env!("CARGO_PKG_VERSION")),
                ("commit", env!("PARTNER_API_COMMIT")),
            ])?;
        encoder
            .encode_descriptor(
                "partner_api_scrape_timestamp",
                "When this exposition was written, as a Unix time.",
                Some(&Unit::Seconds),
                MetricType::Gauge,
            )?
            .encode_gauge(&unix_now())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edge::routes::RouteTable;

    fn table() -> RouteTable {
        RouteTable::default().with_paths(&["/v1/ping", "/v1/things/{thing}", "/docs/errors"], "GET")
    }

    fn routes() -> RouteLabels {
        RouteLabels::new(table().templates())
    }

    #[test]
    fn routes_are_labelled_by_template_and_everything_else_is_unmatched() {
        let routes = routes();
        for (path, label) in [
            ("/v1/ping", "/v1/ping"),
            ("/v1/things/th_123", "/v1/things/{thing}"),
            ("/docs/errors", "/docs/errors"),
            ("/docs/swagger-ui.css", REFERENCE_FILES),
            ("/v1/pings", UNMATCHED),
            ("/", UNMATCHED),
            ("/docs", UNMATCHED),
        ] {
            let route = table().find(path);
            assert_eq!(&*routes.label(routes.index(route, path)), label, "{path}");
        }
    }

    /// The label sets stay fixed whatever paths and methods a client invents.
    #[test]
    fn a_hundred_thousand_distinct_paths_make_one_series() {
        let metrics = Metrics::new();
        let worker = Rc::new(metrics.for_worker(routes()));
        let brew = Method::from_bytes(b"BREW").unwrap();
        for n in 0..100_000u32 {
            let path = format!("/random/{n:x}/{}", n.wrapping_mul(2_654_435_761));
            let method = if n % 2 == 0 { &Method::GET } else { &brew };
            worker.record(worker.route(None, &path), method, 404, 50);
        }
        worker.record(
            worker.route(table().find("/v1/ping"), "/v1/ping"),
            &Method::GET,
            200,
            150,
        );
        let text = metrics.render(Exposition::OpenMetrics);
        let series: Vec<&str> = text
            .lines()
            .filter(|line| line.starts_with("partner_api_http_requests_total{"))
            .collect();
        assert_eq!(
            series,
            [
                "partner_api_http_requests_total{route=\"/v1/ping\",method=\"GET\",status=\"200\"} 1",
                "partner_api_http_requests_total{route=\"unmatched\",method=\"GET\",status=\"404\"} 50000",
                "partner_api_http_requests_total{route=\"unmatched\",method=\"other\",status=\"404\"} 50000",
            ]
        );
        assert_eq!(lock(&metrics.shared.series).len(), 3);
    }

    #[test]
    fn durations_fall_in_their_buckets() {
        let metrics = Metrics::new();
        let worker = Rc::new(metrics.for_worker(routes()));
        let route = worker.route(table().find("/v1/ping"), "/v1/ping");
        for micros in [40, 100, 101, 20_000_000] {
            worker.record(route, &Method::GET, 200, micros);
        }
        let text = metrics.render(Exposition::OpenMetrics);
        let labels = "route=\"/v1/ping\",method=\"GET\",status_class=\"2xx\"";
        for expected in [
            format!("partner_api_http_request_duration_seconds_bucket{{le=\"0.0001\",{labels}}} 2"),
            format!(
                "partner_api_http_request_duration_seconds_bucket{{le=\"0.00025\",{labels}}} 3"
            ),
            format!("partner_api_http_request_duration_seconds_bucket{{le=\"10.0\",{labels}}} 3"),
            format!("partner_api_http_request_duration_seconds_bucket{{le=\"+Inf\",{labels}}} 4"),
            format!("partner_api_http_request_duration_seconds_count{{{labels}}} 4"),
            format!("partner_api_http_request_duration_seconds_sum{{{labels}}} 20.000241"),
        ] {
            assert!(
                text.lines().any(|line| line == expected),
                "{expected}\n{text}"
            );
        }
        assert!(text.ends_with("# EOF\n"));
    }

    #[test]
    fn in_flight_and_refusals_add_up_over_workers() {
        let metrics = Metrics::new();
        let first = Rc::new(metrics.for_worker(routes()));
        let second = Rc::new(metrics.for_worker(routes()));
        let held = [first.in_flight(), second.in_flight(), second.in_flight()];
        first.refused(PolicyName::Api);
        second.refused(PolicyName::Api);
        second.refused(PolicyName::Docs);
        let text = metrics.render(Exposition::OpenMetrics);
        for expected in [
            "partner_api_http_requests_in_flight 3",
            "partner_api_rate_limit_refusals_total{policy=\"api\"} 2",
            "partner_api_rate_limit_refusals_total{policy=\"docs\"} 1",
        ] {
            assert!(
                text.lines().any(|line| line == expected),
                "{expected}\n{text}"
            );
        }
        drop(held);
        assert!(
            metrics
                .render(Exposition::OpenMetrics)
                .lines()
                .any(|line| line == "partner_api_http_requests_in_flight 0")
        );
    }
}
