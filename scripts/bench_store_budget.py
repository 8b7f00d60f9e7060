"""`scripts/bench --store-budget`: how long the shared store's answers take on a busy host, as
the service waits for them, to set `--rate-limit-store-timeout-ms` with a margin.

The busy host: two replicas and one redis-server sharing this machine's cores, each replica
under `wrk -t1 -c64` at full speed, unpinned (the load generators, the replicas and Redis all
compete for the same CPUs, as on a host where the balancer, other services or a noisy
neighbour take their share). For each budget (2, 5, 10, 20 and 50 ms by default) both
replicas run for SECONDS with that `--rate-limit-store-timeout-ms`, and the report gives, for
both together: the decisions Redis made, the calls that failed (each one a timeout here: Redis
never refuses), their share, and how often a replica declared the store lost (3 failed calls in
a row) per hour. A budget whose failures are rare and whose losses are none under this load
has its margin in the budgets below it that still held: the default is set with that margin,
and under the latency objective's 25 ms (a request waits at most the budget for Redis).

Writes the report to target/bench/store-budget.md as well. A benchmark: nothing fails here.
"""

import os
import re
import subprocess
import tempfile
import time
import urllib.request


def metric(admin_port, name, labels=""):
    with urllib.request.urlopen(f"http://127.0.0.1:{admin_port}/metrics", timeout=5) as answer:
        text = answer.read().decode()
    pattern = rf"^{re.escape(name)}{re.escape(labels)} ([0-9.e+]+)$"
    match = re.search(pattern, text, re.M)
    return float(match.group(1)) if match else 0.0


def run(args, b):
    b.build_release()
    b.ensure_wrk()
    b.ensure_redis()
    budgets = [int(budget) for budget in args.store_budgets.split(",")]
    work = tempfile.mkdtemp(prefix="partner-api-store-budget-")
    redis = b.Redis()
    rows = []
    b.say(f"==> the store's budget on a busy host: 2 replicas, 1 redis-server, 2 wrk -t1 -c64, "
          f"unpinned on {os.cpu_count()} CPUs, {args.seconds} s per budget")
    try:
        for budget in budgets:
            replicas = []
            for index in range(2):
                api, admin = b.free_port(), b.free_port()
                log = os.path.join(work, f"replica-{budget}-{index}.log")
                process = subprocess.Popen(
                    [b.SERVICE, "--bind", f"127.0.0.1:{api}", "--admin-bind",
                     f"127.0.0.1:{admin}", "--rate-limit-store",
                     f"redis://127.0.0.1:{redis.port}", "--rate-limit-store-timeout-ms",
                     str(budget), "--rate-limit-per-second", "1000000",
                     "--rate-limit-burst", "1000000"],
                    stdout=subprocess.DEVNULL, stderr=open(log, "wb"),
                    env=dict(os.environ, RUST_LOG="info,access=off"))
                replicas.append((process, api, admin, log))
            for process, api, _, _ in replicas:
                deadline = time.monotonic() + 10
                while b.ping_status(api) != 200:
                    if time.monotonic() > deadline:
                        raise SystemExit("a replica did not start")
                    time.sleep(0.05)
            loads = [subprocess.Popen(["wrk", "-t1", "-c64", f"-d{args.seconds}s",
                                       f"http://127.0.0.1:{api}/v1/ping"],
                                      stdout=subprocess.PIPE, text=True)
                     for _, api, _, _ in replicas]
            requests = sum(b.parse_wrk(load.communicate()[0])["requests"] for load in loads)
            decisions = sum(metric(admin, "partner_api_rate_limit_decisions_total",
                                   '{store="redis"}') for _, _, admin, _ in replicas)
            failed = sum(metric(admin, "partner_api_rate_limit_store_errors_total")
                         for _, _, admin, _ in replicas)
            for process, _, _, _ in replicas:
                process.terminate()
                process.wait(timeout=40)
            # "rate-limit store <url> lost (<why>): limits are now kept per replica ..."
            lost = sum(open(log, encoding="utf-8", errors="replace").read().count(" lost (")
                       for _, _, _, log in replicas)
            rows.append((budget, requests, decisions, failed, lost))
            b.say(f"    {budget:>3} ms: {requests:,} requests, {decisions:,.0f} decided by Redis, "
                  f"{failed:,.0f} calls failed ({failed / max(decisions + failed, 1):.4%}), "
                  f"store lost {lost} times ({lost * 3600 / args.seconds:,.0f} an hour)")
    finally:
        redis.stop()
    lines = [
        "# The shared store's budget on a busy host",
        "",
        f"`scripts/bench --store-budget --seconds {args.seconds}`: 2 replicas, 1 redis-server "
        f"and 2 `wrk -t1 -c64` unpinned on {os.cpu_count()} CPUs.",
        "",
        "| budget | requests | decided by Redis | calls failed | share | store lost (per hour) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for budget, requests, decisions, failed, lost in rows:
        lines.append(f"| {budget} ms | {requests:,} | {decisions:,.0f} | {failed:,.0f} | "
                     f"{failed / max(decisions + failed, 1):.4%} | {lost} "
                     f"({lost * 3600 / args.seconds:,.0f}) |")
    os.makedirs(os.path.join(b.ROOT, "target", "bench"), exist_ok=True)
    with open(os.path.join(b.ROOT, "target", "bench", "store-budget.md"), "w") as out:
        out.write("\n".join(lines) + "\n")
    b.say("\n".join(lines))
