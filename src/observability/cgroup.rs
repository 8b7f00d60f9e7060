//! What the kernel's control group holds the process to, read at each scrape: the memory
//! limit and the working set measured against it (usage less the inactive file cache the
//! kernel reclaims before it kills anything, as the kubelet counts it), and the CPU quota's
//! periods and throttling. On a Kubernetes node cAdvisor exports the same, but a host running
//! the systemd unit has no cAdvisor: the service reports its own, so one alert works on both.
//!
//! cgroup v2 (`memory.max`, `memory.current`, `memory.stat`, `cpu.stat`) and v1
//! (`memory.limit_in_bytes`, `memory.usage_in_bytes`, `memory.stat`, `cpu.stat`) are both
//! read (v2's `memory.high` too, where the kernel starts throttling). The group's folder is the one `/proc/self/cgroup` names under the mount point, or
//! the mount point itself where a cgroup namespace makes that path meaningless inside (as in
//! a container). A reading that is missing is left out, never an error; a limit of "max"
//! (none) is left out too. The machine's own memory (`MemTotal` of `/proc/meminfo`) is written
//! beside them: where no group sets a limit it is the one that holds, and the memory alert
//! measures the process's resident memory against it instead.

use std::fs;
use std::path::{Path, PathBuf};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Unit;

const ROOT: &str = "/sys/fs/cgroup";

/// v1 writes "no limit" as the largest page-aligned i64; anything above 2^62 means none.
const V1_UNLIMITED_ABOVE: u64 = 1 << 62;

#[derive(Debug)]
pub struct CgroupCollector;

/// One reading of the group, in base units.
#[derive(Debug, Default, PartialEq)]
struct Reading {
    memory_limit_bytes: Option<u64>,
    /// cgroup v2's `memory.high` (systemd's `MemoryHigh=`): above it the kernel throttles the
    /// group and reclaims hard, long before the limit kills it.
    memory_high_bytes: Option<u64>,
    memory_working_set_bytes: Option<u64>,
    cpu_periods: Option<u64>,
    cpu_throttled_periods: Option<u64>,
    cpu_throttled_seconds: Option<f64>,
}

/// The folder of `controller` (v1) or of the unified hierarchy (`controller` empty) for this
/// process, from `/proc/self/cgroup`'s lines `ID:CONTROLLERS:PATH`.
fn group_folder(root: &Path, proc_cgroup: &str, controller: &str) -> Option<PathBuf> {
    let (mount, path) = if controller.is_empty() {
        let path = proc_cgroup
            .lines()
            .find_map(|line| line.strip_prefix("0::"))?;
        (root.to_path_buf(), path)
    } else {
        let path = proc_cgroup.lines().find_map(|line| {
            let mut fields = line.splitn(3, ':');
            let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
            controllers
                .split(',')
                .any(|name| name == controller)
                .then_some(path)
        })?;
        (root.join(controller), path)
    };
    let nested = mount.join(path.trim_start_matches('/'));
    if nested.is_dir() {
        Some(nested)
    } else if mount.is_dir() {
        Some(mount)
    } else {
        None
    }
}

fn read_number(folder: &Path, file: &str) -> Option<u64> {
    fs::read_to_string(folder.join(file))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The value of `key` in a flat-keyed file such as `memory.stat` or `cpu.stat`.
fn keyed(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (name, value) = line.split_once(' ')?;
        (name == key).then(|| value.trim().parse().ok())?
    })
}

fn read_v2(folder: &Path) -> Reading {
    let limit = fs::read_to_string(folder.join("memory.max"))
        .ok()
        .and_then(|text| text.trim().parse().ok());
    let memory_stat = fs::read_to_string(folder.join("memory.stat")).unwrap_or_default();
    let cpu_stat = fs::read_to_string(folder.join("cpu.stat")).unwrap_or_default();
    Reading {
        memory_limit_bytes: limit,
        memory_high_bytes: fs::read_to_string(folder.join("memory.high"))
            .ok()
            .and_then(|text| text.trim().parse().ok()),
        memory_working_set_bytes: read_number(folder, "memory.current")
            .map(|usage| usage.saturating_sub(keyed(&memory_stat, "inactive_file").unwrap_or(0))),
        cpu_periods: keyed(&cpu_stat, "nr_periods"),
        cpu_throttled_periods: keyed(&cpu_stat, "nr_throttled"),
        cpu_throttled_seconds: keyed(&cpu_stat, "throttled_usec").map(|us| us as f64 / 1e6),
    }
}

fn read_v1(memory: Option<&Path>, cpu: Option<&Path>) -> Reading {
    let mut reading = Reading::default();
    if let Some(folder) = memory {
        reading.memory_limit_bytes = read_number(folder, "memory.limit_in_bytes")
            .filter(|&limit| limit < V1_UNLIMITED_ABOVE);
        let memory_stat = fs::read_to_string(folder.join("memory.stat")).unwrap_or_default();
        let inactive = keyed(&memory_stat, "total_inactive_file").unwrap_or(0);
        reading.memory_working_set_bytes = read_number(folder, "memory.usage_in_bytes")
            .map(|usage| usage.saturating_sub(inactive));
    }
    if let Some(folder) = cpu {
        let cpu_stat = fs::read_to_string(folder.join("cpu.stat")).unwrap_or_default();
        reading.cpu_periods = keyed(&cpu_stat, "nr_periods");
        reading.cpu_throttled_periods = keyed(&cpu_stat, "nr_throttled");
        reading.cpu_throttled_seconds =
            keyed(&cpu_stat, "throttled_time").map(|ns| ns as f64 / 1e9);
    }
    reading
}

/// Reads the group under `root` that `proc_cgroup` names: v1 where a memory or cpu controller
/// is mounted apart, else v2.
fn read(root: &Path, proc_cgroup: &str) -> Reading {
    let memory = group_folder(root, proc_cgroup, "memory");
    let cpu = group_folder(root, proc_cgroup, "cpu");
    if memory.is_some() || cpu.is_some() {
        return read_v1(memory.as_deref(), cpu.as_deref());
    }
    group_folder(root, proc_cgroup, "")
        .map(|folder| read_v2(&folder))
        .unwrap_or_default()
}

/// `MemTotal` of a `/proc/meminfo` text, in bytes.
fn machine_memory_bytes(meminfo: &str) -> Option<u64> {
    let kilobytes = meminfo
        .lines()
        .find_map(|line| line.strip_prefix("MemTotal:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse::<u64>()
        .ok()?;
    kilobytes.checked_mul(1024)
}

impl Collector for CgroupCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        if let Some(bytes) = fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|meminfo| machine_memory_bytes(&meminfo))
        {
            encoder
                .encode_descriptor(
                    "partner_api_machine_memory",
                    "Memory of the machine (MemTotal): the limit where no control group sets one.",
                    Some(&Unit::Bytes),
                    MetricType::Gauge,
                )?
                .encode_gauge(&(bytes as f64))?;
        }
        let Ok(proc_cgroup) = fs::read_to_string("/proc/self/cgroup") else {
            return Ok(());
        };
        let reading = read(Path::new(ROOT), &proc_cgroup);
        for (name, help, value) in [
            (
                "partner_api_cgroup_memory_limit",
                "Memory limit of the process's control group (absent when there is none).",
                reading.memory_limit_bytes,
            ),
            (
                "partner_api_cgroup_memory_high",
                "Memory above which the kernel throttles the control group (cgroup v2 memory.high; absent when there is none).",
                reading.memory_high_bytes,
            ),
            (
                "partner_api_cgroup_memory_working_set",
                "Memory of the control group the kernel cannot simply reclaim: usage less inactive file cache.",
                reading.memory_working_set_bytes,
            ),
        ] {
            if let Some(value) = value {
                encoder
                    .encode_descriptor(name, help, Some(&Unit::Bytes), MetricType::Gauge)?
                    .encode_gauge(&(value as f64))?;
            }
        }
        for (name, help, value) in [
            (
                "partner_api_cgroup_cpu_periods",
                "CPU quota periods the control group ran in (none without a CPU limit).",
                reading.cpu_periods,
            ),
            (
                "partner_api_cgroup_cpu_throttled_periods",
                "CPU quota periods in which the control group used its quota up and waited.",
                reading.cpu_throttled_periods,
            ),
        ] {
            if let Some(value) = value {
                encoder
                    .encode_descriptor(name, help, None, MetricType::Counter)?
                    .encode_counter::<NoLabelSet, _, u64>(&value, None)?;
            }
        }
        if let Some(seconds) = reading.cpu_throttled_seconds {
            encoder
                .encode_descriptor(
                    "partner_api_cgroup_cpu_throttled",
                    "Time the control group's threads waited for the next CPU quota period.",
                    Some(&Unit::Seconds),
                    MetricType::Counter,
                )?
                .encode_counter::<NoLabelSet, _, u64>(&seconds, None)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machines_memory_is_memtotal_in_bytes() {
        let meminfo = "MemTotal:       24522104 kB\nMemFree:         1000 kB\n";
        assert_eq!(machine_memory_bytes(meminfo), Some(24_522_104 * 1024));
        assert_eq!(machine_memory_bytes("MemFree: 1 kB\n"), None);
        assert_eq!(machine_memory_bytes("MemTotal: lots kB\n"), None);
    }

    fn write(folder: &Path, files: &[(&str, &str)]) {
        fs::create_dir_all(folder).unwrap();
        for (name, text) in files {
            fs::write(folder.join(name), text).unwrap();
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let folder =
            std::env::temp_dir().join(format!("partner-api-cgroup-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&folder);
        folder
    }

    #[test]
    fn v2_is_read_from_the_group_the_process_is_in() {
        let root = scratch("v2");
        write(
            &root.join("system.slice/partner-api.service"),
            &[
                ("memory.max", "536870912\n"),
                ("memory.high", "402653184\n"),
                ("memory.current", "300000000\n"),
                (
                    "memory.stat",
                    "anon 1000\ninactive_file 50000000\nactive_file 7\n",
                ),
                (
                    "cpu.stat",
                    "usage_usec 9\nnr_periods 400\nnr_throttled 120\nthrottled_usec 2500000\n",
                ),
            ],
        );
        let reading = read(&root, "0::/system.slice/partner-api.service\n");
        assert_eq!(
            reading,
            Reading {
                memory_limit_bytes: Some(536_870_912),
                memory_high_bytes: Some(402_653_184),
                memory_working_set_bytes: Some(250_000_000),
                cpu_periods: Some(400),
                cpu_throttled_periods: Some(120),
                cpu_throttled_seconds: Some(2.5),
            }
        );
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn v2_without_limits_gives_no_limit_and_a_namespaced_path_reads_the_mount_point() {
        let root = scratch("v2-max");
        write(
            &root,
            &[
                ("memory.max", "max\n"),
                ("memory.high", "max\n"),
                ("memory.current", "1000\n"),
                ("cpu.stat", "usage_usec 9\n"),
            ],
        );
        let reading = read(&root, "0::/kubepods/burstable/pod1/abc\n");
        assert_eq!(
            reading,
            Reading {
                memory_working_set_bytes: Some(1000),
                ..Reading::default()
            }
        );
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn v1_controllers_are_read_apart_and_its_no_limit_is_none() {
        let root = scratch("v1");
        write(
            &root.join("memory/docker/abc"),
            &[
                ("memory.limit_in_bytes", "268435456\n"),
                ("memory.usage_in_bytes", "100000000\n"),
                ("memory.stat", "cache 5\ntotal_inactive_file 1000000\n"),
            ],
        );
        // The cpu controller's group is not under the mount (a namespace): the mount is read.
        write(
            &root.join("cpu"),
            &[(
                "cpu.stat",
                "nr_periods 10\nnr_throttled 4\nthrottled_time 1500000000\n",
            )],
        );
        let proc_cgroup = "4:memory:/docker/abc\n2:cpu,cpuacct:/docker/abc\n0::/\n";
        let reading = read(&root, proc_cgroup);
        assert_eq!(
            reading,
            Reading {
                memory_limit_bytes: Some(268_435_456),
                memory_high_bytes: None,
                memory_working_set_bytes: Some(99_000_000),
                cpu_periods: Some(10),
                cpu_throttled_periods: Some(4),
                cpu_throttled_seconds: Some(1.5),
            }
        );
        write(
            &root.join("memory/docker/abc"),
            &[("memory.limit_in_bytes", "9223372036854771712\n")],
        );
        assert_eq!(read(&root, proc_cgroup).memory_limit_bytes, None);
        fs::remove_dir_all(root).unwrap();
    }
}
