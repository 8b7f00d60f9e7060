//! The two text formats `/metrics` speaks, and which one a scraper gets. Prometheus asks for
//! OpenMetrics in its `Accept` and gets it; anything else (curl, Telegraf, Metricbeat, an old
//! scraper) gets the classic text format 0.0.4, as the official Go, Python and Java clients
//! decide: consumers that read only the classic format fail on OpenMetrics' `info` type.
//!
//! The metrics are written once, in OpenMetrics (the client library's only format), and the
//! classic text is derived from it line by line. The two differ only in their metadata: a
//! counter's family is named with its `_total` in the classic format, an `info` family is a
//! gauge named `_info`, and `# UNIT` and `# EOF` do not exist there. Samples (names, labels,
//! escaping, values) are written alike by both, so they pass through as they are.

use std::fmt::Write;

/// The formats a scrape may be answered in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exposition {
    /// OpenMetrics 1.0.0, for a scraper that asks for it.
    OpenMetrics,
    /// The classic Prometheus text format 0.0.4, for everyone else.
    Classic,
}

impl Exposition {
    /// The format to answer a scrape whose `Accept` is `accept`: the acceptable type with the
    /// highest weight (the first of equal ones); the classic format when none is acceptable or
    /// nothing is asked, as a plain HTTP client would expect.
    pub fn for_accept(accept: Option<&[u8]>) -> Exposition {
        let Some(accept) = accept.and_then(|accept| std::str::from_utf8(accept).ok()) else {
            return Exposition::Classic;
        };
        let mut best: Option<(f32, Exposition)> = None;
        for range in accept.split(',') {
            let mut parts = range.split(';').map(str::trim);
            let media_type = parts.next().unwrap_or_default().to_ascii_lowercase();
            let (mut weight, mut version) = (1.0_f32, None);
            for parameter in parts {
                let Some((name, value)) = parameter.split_once('=') else {
                    continue;
                };
                let value = value.trim().trim_matches('"');
                match name.trim().to_ascii_lowercase().as_str() {
                    "q" => weight = value.parse().unwrap_or(0.0),
                    "version" => version = Some(value.to_owned()),
                    _ => {}
                }
            }
            let format = match (media_type.as_str(), version.as_deref()) {
                ("application/openmetrics-text", None | Some("1.0.0" | "0.0.1")) => {
                    Exposition::OpenMetrics
                }
                ("text/plain", None | Some("0.0.4")) | ("text/*" | "*/*", _) => Exposition::Classic,
                _ => continue,
            };
            if weight > 0.0 && best.is_none_or(|(best, _)| weight > best) {
                best = Some((weight, format));
            }
        }
        best.map_or(Exposition::Classic, |(_, format)| format)
    }

    /// The `Content-Type` of an exposition in this format.
    pub fn content_type(self) -> &'static str {
        match self {
            Exposition::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Exposition::Classic => "text/plain; version=0.0.4; charset=utf-8",
        }
    }
}

/// The classic text format of an OpenMetrics exposition; see the module documentation.
pub fn to_classic(openmetrics: &str) -> String {
    let mut classic = String::with_capacity(openmetrics.len());
    // OpenMetrics writes a family's HELP before its TYPE, which decides the classic name.
    let mut help: Option<&str> = None;
    for line in openmetrics.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            help = rest.split_once(' ').map(|(_, text)| text);
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, "unknown"));
            let (suffix, kind) = match kind {
                "counter" => ("_total", "counter"),
                "info" => ("_info", "gauge"),
                "gauge" | "histogram" | "summary" => ("", kind),
                _ => ("", "untyped"),
            };
            if let Some(text) = help.take() {
                let _ = writeln!(classic, "# HELP {name}{suffix} {text}");
            }
            let _ = writeln!(classic, "# TYPE {name}{suffix} {kind}");
        } else if !(line.starts_with("# UNIT ") || line == "# EOF") {
            classic.push_str(line);
            classic.push('\n');
        }
    }
    classic
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What Prometheus 2 and 3 send, and what other clients do.
    #[test]
    fn prometheus_gets_openmetrics_and_everyone_else_the_classic_format() {
        for (accept, expected) in [
            (None, Exposition::Classic),
            (Some("*/*"), Exposition::Classic),
            (Some("text/plain"), Exposition::Classic),
            (
                Some("text/plain;version=0.0.4;q=0.9,*/*;q=0.1"),
                Exposition::Classic,
            ),
            (
                Some(
                    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;\
                     version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
                ),
                Exposition::OpenMetrics,
            ),
            (
                Some(
                    "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;\
                     encoding=delimited;q=0.6,application/openmetrics-text;version=1.0.0;\
                     escaping=allow-utf-8;q=0.5,text/plain;version=1.0.0;q=0.3,*/*;q=0.2",
                ),
                Exposition::OpenMetrics,
            ),
            (
                Some("Application/OpenMetrics-Text"),
                Exposition::OpenMetrics,
            ),
            (
                Some("application/openmetrics-text; q=0"),
                Exposition::Classic,
            ),
            (
                Some("text/plain;q=0.9, application/openmetrics-text;q=0.5"),
                Exposition::Classic,
            ),
            (
                Some("application/openmetrics-text;version=2.0.0"),
                Exposition::Classic,
            ),
            (Some("application/json"), Exposition::Classic),
            (
                Some("application/openmetrics-text;q=nonsense"),
                Exposition::Classic,
            ),
        ] {
            assert_eq!(
                Exposition::for_accept(accept.map(str::as_bytes)),
                expected,
                "{accept:?}"
            );
        }
    }

    #[test]
    fn the_classic_format_renames_counters_and_info_and_drops_units_and_eof() {
        let openmetrics = "\
# HELP requests Requests answered.
# TYPE requests counter
requests_total{route=\"/v1/ping\",note=\"a \\\"quoted\\\" value\"} 3
# HELP duration_seconds Time taken.
# TYPE duration_seconds histogram
# UNIT duration_seconds seconds
duration_seconds_bucket{le=\"0.1\"} 2
duration_seconds_bucket{le=\"+Inf\"} 3
duration_seconds_sum 0.25
duration_seconds_count 3
# HELP build The running build.
# TYPE build info
build_info{version=\"0.1.0\"} 1
# HELP queue_bytes Bytes waiting.
# TYPE queue_bytes gauge
# UNIT queue_bytes bytes
queue_bytes 0
# EOF
";
        assert_eq!(
            to_classic(openmetrics),
            "\
# HELP requests_total Requests answered.
# TYPE requests_total counter
requests_total{route=\"/v1/ping\",note=\"a \\\"quoted\\\" value\"} 3
# HELP duration_seconds Time taken.
# TYPE duration_seconds histogram
duration_seconds_bucket{le=\"0.1\"} 2
duration_seconds_bucket{le=\"+Inf\"} 3
duration_seconds_sum 0.25
duration_seconds_count 3
# HELP build_info The running build.
# TYPE build_info gauge
build_info{version=\"0.1.0\"} 1
# HELP queue_bytes Bytes waiting.
# TYPE queue_bytes gauge
queue_bytes 0
"
        );
    }
}
