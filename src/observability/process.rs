//! The standard process metrics of the Prometheus client guidelines (`process_cpu_seconds_total`,
//! `process_resident_memory_bytes`, `process_virtual_memory_bytes`, `process_open_fds`,
//! `process_max_fds`, `process_start_time_seconds`, `process_threads`), read from `/proc` at
//! each scrape. `prometheus-client` has no process collector of its own; these few reads are
//! what the Go client's collector does. On a system without `/proc` they are left out, never
//! an error.

use std::fs;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Unit;

#[derive(Debug)]
pub struct ProcessCollector;

/// What `/proc/self/stat` says, in base units.
#[derive(Debug, PartialEq)]
struct Stat {
    cpu_seconds: f64,
    start_time_seconds: f64,
    virtual_memory_bytes: u64,
    resident_memory_bytes: u64,
    threads: i64,
}

/// Parses `/proc/self/stat` (proc(5)): the fields after the command name, which is in
/// parentheses and may itself hold spaces or parentheses.
fn parse_stat(text: &str, ticks_per_second: f64, page_bytes: u64, boot_time: u64) -> Option<Stat> {
    let after_name = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = after_name.split_ascii_whitespace().collect();
    // Field numbers of proc(5), counted from 1 with the pid; `after_name` starts at field 3.
    let field = |number: usize| -> Option<u64> { fields.get(number - 3)?.parse().ok() };
    Some(Stat {
        cpu_seconds: (field(14)? + field(15)?) as f64 / ticks_per_second,
        start_time_seconds: boot_time as f64 + field(22)? as f64 / ticks_per_second,
        virtual_memory_bytes: field(23)?,
        resident_memory_bytes: field(24)? * page_bytes,
        threads: field(20)? as i64,
    })
}

fn boot_time() -> Option<u64> {
    fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|line| line.strip_prefix("btime ")?.trim().parse().ok())
}

fn max_fds() -> Option<i64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes only into the struct it is given.
    let result = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    (result == 0).then(|| i64::try_from(limit.rlim_cur).unwrap_or(i64::MAX))
}

fn stat() -> Option<Stat> {
    // SAFETY: sysconf reads a configuration value; it has no preconditions.
    let (ticks, page) = unsafe {
        (
            libc::sysconf(libc::_SC_CLK_TCK),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if ticks <= 0 || page <= 0 {
        return None;
    }
    let text = fs::read_to_string("/proc/self/stat").ok()?;
    parse_stat(&text, ticks as f64, page as u64, boot_time()?)
}

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        if let Some(stat) = stat() {
            encoder
                .encode_descriptor(
                    "process_cpu",
                    "Total user and system CPU time spent.",
                    Some(&Unit::Seconds),
                    MetricType::Counter,
                )?
                .encode_counter::<NoLabelSet, _, u64>(&stat.cpu_seconds, None)?;
            for (name, help, value) in [
                (
                    "process_resident_memory",
                    "Resident memory size.",
                    stat.resident_memory_bytes,
                ),
                (
                    "process_virtual_memory",
                    "Virtual memory size.",
                    stat.virtual_memory_bytes,
                ),
            ] {
                encoder
                    .encode_descriptor(name, help, Some(&Unit::Bytes), MetricType::Gauge)?
                    .encode_gauge(&value)?;
            }
            encoder
                .encode_descriptor(
                    "process_start_time",
                    "Start time of the process, as a Unix time.",
                    Some(&Unit::Seconds),
                    MetricType::Gauge,
                )?
                .encode_gauge(&stat.start_time_seconds)?;
            encoder
                .encode_descriptor(
                    "process_threads",
                    "Threads of the process.",
                    None,
                    MetricType::Gauge,
                )?
                .encode_gauge(&stat.threads)?;
        }
        if let Ok(entries) = fs::read_dir("/proc/self/fd") {
            // The directory handle being read is one of the entries; it is not counted.
            let open = entries.count().saturating_sub(1) as i64;
            encoder
                .encode_descriptor(
                    "process_open_fds",
                    "Open file descriptors.",
                    None,
                    MetricType::Gauge,
                )?
                .encode_gauge(&open)?;
        }
        if let Some(max) = max_fds() {
            encoder
                .encode_descriptor(
                    "process_max_fds",
                    "Limit of open file descriptors.",
                    None,
                    MetricType::Gauge,
                )?
                .encode_gauge(&max)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_read_after_the_command_name() {
        // A command name with a space and a parenthesis, as proc(5) allows.
        let text = "4242 (partner (api) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 \
                    250 150 0 0 20 0 3 0 12345 104857600 2560 18446744073709551615";
        let stat = parse_stat(text, 100.0, 4096, 1_800_000_000).unwrap();
        assert_eq!(
            stat,
            Stat {
                cpu_seconds: 4.0,
                start_time_seconds: 1_800_000_123.45,
                virtual_memory_bytes: 104_857_600,
                resident_memory_bytes: 2560 * 4096,
                threads: 3,
            }
        );
        assert_eq!(parse_stat("garbage", 100.0, 4096, 0), None);
    }

    #[test]
    fn this_process_has_a_start_time_and_memory() {
        let stat = stat().unwrap();
        assert!(stat.resident_memory_bytes > 0);
        assert!(stat.start_time_seconds > 1_600_000_000.0);
        assert!(max_fds().unwrap() > 0);
    }
}
