"""`scripts/bench --cores`: the full stack against bare actix-web with every core serving, from
one client and from many.

The other recipes pin the server to one core, so they cannot show work that gets dearer as
workers are added: memory that every worker writes on every request (a shared count, a lock, a
reference count) moves between the cores' caches at each write. Here nothing is pinned: each
server sizes its workers from the machine (two on a 2-CPU VM), and the load generator runs on
the same cores, so the figures that count are the ratios within a round.

Targets (release binaries, each on its own loopback port, started once): partner-api with its
defaults except a rate limit the load cannot reach (the limiter and the in-flight ceiling stay
on) and the admin listener on a free port (the metrics are recorded), access log at info to a
file on tmpfs; bare actix-web (examples/bare_ping). For HTTP/2 the same two over TLS (the
certificate of scripts/dev-cert).

Loads, each `GET /v1/ping` for SECONDS:
  h1 one client    wrk -t2 -c64: every connection from 127.0.0.1, so one client to the limiter
                   and the ceiling (a load test, a partner behind one address)
  h1 many clients  the same, each connection from an address of its own (127.1.0.1, 127.1.0.2,
                   ...: scripts/bench_many_clients.c, loaded into wrk with LD_PRELOAD, binds each
                   socket before it connects), so 64 clients, as many as connections
  h2 one client    h2load -t2 -c64 -m10 over TLS
  h2 many clients  the same with each connection from an address of its own

With --log-control, a third target, `quiet`: the full stack with its access log off
(`RUST_LOG=info,access=off`), to tell what the log costs from what the rest does.

With --contract-control, a target `floor`: bare actix-web answering with the same fields as the
full stack (`examples/bare_ping --contract-headers`: `RateLimit-Policy`, `RateLimit`,
`X-Content-Type-Options`, over HTTPS `Strict-Transport-Security`, each with the value the
full stack sends under this recipe's limit), and nothing else. The response on the wire is the
contract's, so floor / bare is the most any implementation of the contract can reach on this
recipe, before it checks, limits, counts or logs anything; the report adds full / floor, per
round like the others.

Each round runs every load against both targets back to back, the pair's order reversed every
other round; each ratio is full / bare within one round, and the median of the per-round ratios
is reported with its range. Writes the report to target/bench/cores.md as well.
"""

import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile

SHIM_SOURCE = "bench_many_clients.c"

LOADS = ("h1 one client", "h1 many clients", "h2 one client", "h2 many clients")


def build_shim(b):
    """The LD_PRELOAD library that gives each connection a loopback address of its own."""
    b.ensure_debian("cc", "gcc")
    out = os.path.join(b.TARGET_DIR, "bench", "many_clients.so")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", out,
                    os.path.join(b.ROOT, "scripts", SHIM_SOURCE), "-ldl"], check=True)
    # Where 127.0.0.0/8 is not all local, the bind fails and every connection would silently
    # come from 127.0.0.1: one client measured as many. A connection made through the shim
    # must come from 127.1.x.y.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        probe = ("import socket; print(socket.create_connection(('127.0.0.1', "
                 f"{listener.getsockname()[1]})).getsockname()[0])")
        source = subprocess.run([sys.executable, "-c", probe], check=True, text=True,
                                capture_output=True,
                                env=dict(os.environ, LD_PRELOAD=out)).stdout.strip()
    if not source.startswith("127.1."):
        raise SystemExit(f"{SHIM_SOURCE}: a connection came from {source}, not 127.1.x.y: "
                         f"this machine cannot tell many loopback clients apart")
    return out


def run_load(b, load, port, seconds, shim):
    env = dict(os.environ)
    if "many" in load:
        env["LD_PRELOAD"] = shim
    if load.startswith("h1"):
        argv = ["wrk", "-t2", "-c64", f"-d{seconds}s", f"http://127.0.0.1:{port}/v1/ping"]
        output = subprocess.run(argv, check=True, capture_output=True, text=True,
                                env=env).stdout
        result = b.parse_wrk(output)
        result["failed"] = result["non_2xx"] + (result["socket_errors"] != "none")
        return result
    argv = ["h2load", "-t2", "-c64", "-m10", f"-D{seconds}", f"https://127.0.0.1:{port}/v1/ping"]
    output = subprocess.run(argv, check=True, capture_output=True, text=True, env=env).stdout
    rate = float(re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", output).group(1))
    done = re.search(r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed",
                     output)
    ok = int(re.search(r"status codes: (\d+) 2xx", output).group(1))
    return {"rps": rate, "requests": int(done.group(1)), "failed": int(done.group(3)) +
            int(done.group(1)) - ok}


def run(args, b):
    rounds = 1 if args.smoke else max(args.rounds, 3)
    b.ensure_wrk()
    b.ensure_debian("h2load", "nghttp2-client")
    b.build_release()
    shim = build_shim(b)
    subprocess.run([os.path.join(b.ROOT, "scripts", "dev-cert")], check=True,
                   stdout=subprocess.DEVNULL)
    certs = os.path.join(b.ROOT, "target", "dev-cert")
    cert, key = os.path.join(certs, "cert.pem"), os.path.join(certs, "key.pem")
    out_dir = os.path.join(b.TARGET_DIR, "bench")
    work = tempfile.mkdtemp(prefix="partner-api-bench-cores-",
                            dir="/dev/shm" if os.path.isdir("/dev/shm") else out_dir)
    service = ["env", "RUST_LOG=info", b.SERVICE, "--bind", "127.0.0.1:{port}",
               "--admin-bind", "127.0.0.1:0", "--shutdown-delay-secs", "0",
               "--rate-limit-per-second", "1000000", "--rate-limit-burst", "1000000"]
    tls = ["--tls-cert", cert, "--tls-key", key]

    class Unpinned(b.Target):
        def argv(self):
            return [part.replace("{port}", str(self.port)) for part in self.command]

    class UnpinnedTls(b.TlsTarget):
        def argv(self):
            return [part.replace("{port}", str(self.port)) for part in self.command]

    quiet = ["env", "RUST_LOG=info,access=off"] + service[2:]
    servers = {
        ("full", "h1"): Unpinned("full", service, log_path=os.path.join(work, "h1.log")),
        ("bare", "h1"): Unpinned("bare", [b.BARE, "127.0.0.1:{port}"]),
        ("full", "h2"): UnpinnedTls("full", service + tls,
                                    log_path=os.path.join(work, "h2.log")),
        ("bare", "h2"): UnpinnedTls("bare", [b.BARE, "127.0.0.1:{port}", cert, key]),
    }
    names = ("full", "bare")
    if args.log_control:
        names += ("quiet",)
        servers[("quiet", "h1")] = Unpinned("quiet", quiet)
        servers[("quiet", "h2")] = UnpinnedTls("quiet", quiet + tls)
    if args.contract_control:
        names += ("floor",)
        floor = [b.BARE, "--contract-headers", "127.0.0.1:{port}"]
        servers[("floor", "h1")] = Unpinned("floor", floor)
        servers[("floor", "h2")] = UnpinnedTls("floor", floor + [cert, key])
    facts = b.machine_facts()
    recipe = (f"nothing pinned: each server's workers from the machine ({os.cpu_count()}), the "
              f"load generator on the same cores; HTTP/1.1: wrk -t2 -c64 -d{args.seconds}s; "
              f"HTTP/2 over TLS: h2load -t2 -c64 -m10 -D{args.seconds}; many clients: each "
              f"connection from a loopback address of its own (scripts/{SHIM_SOURCE}); "
              f"{args.warmup}s warm-up per server; {rounds} rounds, each load against both "
              f"targets back to back, the order reversed every other round; ratios are medians "
              f"of per-round ratios")
    b.say(f"==> recipe: {recipe}")
    b.say(f"==> machine: {facts['cpus']} CPUs, {facts['model']}; commit {facts['commit']}")
    results = {(name, load): [] for name in names for load in LOADS}
    try:
        for (name, protocol), server in servers.items():
            server.start()
            run_load(b, f"{protocol} one client", server.port, args.warmup, shim)
        for round_number in range(1, rounds + 1):
            for load in LOADS:
                protocol = load[:2]
                for name in names if round_number % 2 else names[::-1]:
                    result = run_load(b, load, servers[(name, protocol)].port, args.seconds,
                                      shim)
                    results[(name, load)].append(result)
                    b.say(f"    round {round_number} {load:<16} {name:<5} "
                          f"{result['rps']:>10.0f} req/s  failed {result['failed']}")
        log_lines = {protocol: b.count_lines(servers[("full", protocol)].log_path)
                     for protocol in ("h1", "h2")}
    finally:
        for server in servers.values():
            server.stop()
        shutil.rmtree(work, ignore_errors=True)

    def ratios(load, name="full", against="bare"):
        return [numerator["rps"] / denominator["rps"]
                for numerator, denominator in zip(results[(name, load)],
                                                  results[(against, load)])]

    def rates(name, load):
        return b.spread([r["rps"] for r in results[(name, load)]], lambda v: f"{v:,.0f}")

    def summary(values):
        return (f"{statistics.median(values):.2f} "
                f"({min(values):.2f}–{max(values):.2f})")

    controls = {"quiet": "full stack without its access log (`quiet`)",
                "floor": "bare actix-web with the contract's fields (`floor`)"}
    rows = []
    for load in LOADS:
        values = ratios(load)
        met = statistics.median(values) >= 0.95
        rows.append(f"| {load} | {rates('full', load)} | {rates('bare', load)} "
                    f"| {summary(values)} | ≥ 0.95 | {'met' if met else 'MISSED'} |")
        for name, label in controls.items():
            if name in names:
                rows.append(f"| {load}, {label} | {rates(name, load)} "
                            f"| | {summary(ratios(load, name))} | | |")
        if "floor" in names:
            rows.append(f"| {load}, the full stack against the floor (full / floor, not / bare) "
                        f"| | | {summary(ratios(load, 'full', 'floor'))} | | |")
    failed = sum(r["failed"] for runs in results.values() for r in runs)
    report = "\n".join([
        f"Cores run of {facts['date']} on commit {facts['commit']}: {facts['cpus']} CPUs, "
        f"{facts['model']}, Linux {facts['kernel']}.",
        "",
        f"Recipe: {recipe}.",
        "",
        "| load | full requests/s median (min–max) | bare requests/s | full / bare, median of per-round ratios (min–max) | target | |",
        "| --- | --- | --- | --- | --- | --- |",
        *rows,
        "",
        f"Answers other than 200 or failed requests, over every run: {failed:,}. Access log "
        f"lines written by the full stack: HTTP/1.1 {log_lines['h1']:,}, HTTP/2 "
        f"{log_lines['h2']:,}.",
    ])
    b.say("")
    b.say(report)
    with open(os.path.join(out_dir, "cores.md"), "w") as latest:
        latest.write(report + "\n")
    b.say(f"\n(written to {os.path.join(out_dir, 'cores.md')})")
