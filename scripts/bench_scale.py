"""`scripts/bench --scale`: how the cost grows with the work, against bare actix-web and nginx.

Two measurements, side by side in one run, each target pinned to CPU 0 and the load on CPU 1:

The concurrency curve. partner-api (defaults, limits out of reach, `--keep-alive-secs 300`,
access log on, to a file on tmpfs), the same with its access log off (like for like with
nginx), bare actix-web (examples/bare_ping) and Debian's nginx (one worker,
`worker_connections` and `worker_rlimit_nofile` above the largest step, the same keep-alive,
access log off) each serve `GET /v1/ping` over HTTP/1.1 to
`wrk -t1 -c<N> --latency` at every step (16, 256, 1,024 and 10,000 connections by default):
requests per second, p50 and p99, and every error wrk counts (connect, read, write, timeout,
non-2xx). Rounds interleave the targets, reversing their order every other round; the report
gives medians over rounds and, per step, the median of per-round ratios against nginx.

Memory per idle connection. A fresh process of each target takes a few connections and lets
them go (so its first allocations are made), then IDLE connections each send one request,
read the answer and stay open: (RSS after - RSS before) / IDLE is the cost of one idle
connection, for HTTP/1.1, HTTPS (TLS 1.3, HTTP/1.1) and HTTP/2 over TLS. For nginx, the RSS is
its worker's.

Writes the report to target/bench/scale.md as well. Benchmarks are not tests: nothing here
fails on a slow machine; the goals are printed beside the figures.
"""

import os
import resource
import socket
import ssl
import statistics
import struct
import subprocess
import tempfile
import time

NO_LOG = "partner-api, no access log"

SCALE_NGINX_CONF = """
worker_processes 1;
worker_rlimit_nofile {nofile};
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections {connections}; }}
http {{
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 300s;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    ssl_protocols TLSv1.2 TLSv1.3;
    server {{
        listen 127.0.0.1:{port} backlog={backlog};
        listen 127.0.0.1:{tls_port} ssl http2 backlog={backlog};
        ssl_certificate {cert};
        ssl_certificate_key {key};
        location = /v1/ping {{
            default_type application/json;
            add_header Cache-Control no-store always;
            return 200 '{{"object":"ping","pong":true}}';
        }}
    }}
}}
"""


def raise_file_limit(wanted):
    """Raise this process's open-file limit (inherited by wrk and the targets) towards wanted."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def resident_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise SystemExit(f"no VmRSS for pid {pid}")


def serving_pid(process):
    """The process that holds the connections: nginx's one worker, or the process itself."""
    children = f"/proc/{process.pid}/task/{process.pid}/children"
    deadline = time.monotonic() + 5
    while os.path.exists(children):
        with open(children) as listing:
            kids = listing.read().split()
        if kids:
            return int(kids[0])
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    return process.pid


def frame(kind, flags, stream, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


# An HTTP/2 GET /v1/ping in HPACK from the static table (:method GET, :scheme https, :path and
# :authority as literals without indexing), after the preface and an empty SETTINGS frame.
H2_REQUEST = (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0, b"")
              + frame(1, 5, 1, bytes([0x82, 0x87, 0x04, 8]) + b"/v1/ping"
                      + bytes([0x01, 5]) + b"bench"))
H1_REQUEST = b"GET /v1/ping HTTP/1.1\r\nHost: bench\r\n\r\n"


def client_context(kind):
    """TLS 1.3, no verification (the certificate is the development one), ALPN for kind. One
    per run: a context loads the system's roots, which cost the client more than a handshake."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.set_alpn_protocols(["h2"] if kind == "h2" else ["http/1.1"])
    return context


CONTEXTS = {}


def open_idle(port, kind, deadline):
    """One connection that has sent one request and read its answer, left open."""
    conn = socket.create_connection(("127.0.0.1", port), timeout=10)
    if kind != "h1":
        context = CONTEXTS.setdefault(kind, client_context(kind))
        conn = context.wrap_socket(conn, server_hostname="localhost")
    conn.sendall(H2_REQUEST if kind == "h2" else H1_REQUEST)
    answer, acknowledged = b"", False
    while b"pong" not in answer:
        if time.monotonic() > deadline:
            raise SystemExit("idle connections: no answer in time")
        chunk = conn.recv(65536)
        if not chunk:
            raise SystemExit(f"idle connections ({kind}): the server closed a connection")
        answer += chunk
        if kind == "h2" and not acknowledged:
            conn.sendall(frame(4, 1, 0, b""))  # SETTINGS ACK
            acknowledged = True
    return conn


def idle_cost(start, kind, count):
    """Bytes of RSS per idle connection of a freshly started target."""
    process, port = start()
    try:
        pid = serving_pid(process)
        deadline = time.monotonic() + 300
        for conn in [open_idle(port, kind, deadline) for _ in range(50)]:
            conn.close()
        time.sleep(0.5)
        before = resident_kib(pid)
        held = [open_idle(port, kind, deadline) for _ in range(count)]
        time.sleep(1)
        after = resident_kib(pid)
        for conn in held:
            conn.close()
        return (after - before) * 1024 / count
    finally:
        stop(process)


def stop(process):
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=35)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_for(b, process, port, tls):
    deadline = time.monotonic() + 10
    probe = (lambda: b.tls_ping_status(port)[0]) if tls else (lambda: b.ping_status(port))
    while probe() != 200:
        if time.monotonic() > deadline or process.poll() is not None:
            raise SystemExit(f"a target did not start on port {port}")
        time.sleep(0.01)


def run(args, b):
    if args.scale_idle_only:
        args.scale_steps = "16"
    steps = tuple(int(step) for step in args.scale_steps.split(","))
    idle = args.scale_idle
    largest = max(steps + (idle,))
    nofile = raise_file_limit(2 * largest + 1024)
    # Each side of a connection is a descriptor in its own process (wrk's, the target's, or the
    # idle client's), so a step needs the limit above it, plus room for the rest.
    fits = tuple(step for step in steps if step + 64 <= nofile)
    if fits != steps:
        b.say(f"==> the open-file limit is {nofile}: leaving out "
              f"{', '.join(str(step) for step in steps if step not in fits)} connections")
    steps = fits
    if idle + 64 > nofile:
        b.say(f"==> the open-file limit is {nofile}: {nofile - 64} idle connections, "
              f"not {idle}")
        idle = nofile - 64
    if not steps:
        raise SystemExit(f"the open-file limit ({nofile}) leaves no step to run")
    largest = max(steps + (idle,))
    b.ensure_wrk()
    b.ensure_debian("nginx", "nginx")
    b.build_release()
    subprocess.run([os.path.join(b.ROOT, "scripts", "dev-cert")], check=True,
                   stdout=subprocess.DEVNULL)
    certs = os.path.join(b.ROOT, "target", "dev-cert")
    cert, key = os.path.join(certs, "cert.pem"), os.path.join(certs, "key.pem")
    out_dir = os.path.join(b.TARGET_DIR, "bench")
    os.makedirs(out_dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="partner-api-bench-scale-",
                            dir="/dev/shm" if os.path.isdir("/dev/shm") else out_dir)
    for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        os.makedirs(os.path.join(work, name), exist_ok=True)
    backlog = 65535

    def spawn(name, tls=False):
        """Starts a target on free ports; returns (process, port), its API port."""
        port, tls_port = b.free_port(), b.free_port()
        log = subprocess.DEVNULL
        if name.startswith("partner-api"):
            log_filter = "info,access=off" if name == NO_LOG else "info"
            argv = ["env", f"RUST_LOG={log_filter}", b.SERVICE, "--bind", f"127.0.0.1:{port}",
                    "--admin-bind", "127.0.0.1:0", "--shutdown-delay-secs", "0",
                    "--keep-alive-secs", "300", "--rate-limit-per-second", "1000000",
                    "--rate-limit-burst", "1000000"]
            if tls:
                argv += ["--tls-cert", cert, "--tls-key", key]
            log = open(os.path.join(work, "access.log"), "wb")
        elif name == "bare":
            argv = [b.BARE, f"127.0.0.1:{port}"] + ([cert, key] if tls else [])
        else:
            conf = os.path.join(work, "nginx.conf")
            with open(conf, "w") as out:
                out.write(SCALE_NGINX_CONF.format(
                    dir=work, cert=cert, key=key, port=port, tls_port=tls_port,
                    connections=largest + 1024, nofile=nofile, backlog=backlog))
            argv = ["nginx", "-c", conf, "-p", work + "/"]
            if tls:
                port = tls_port
        process = subprocess.Popen(["taskset", "-c", b.SERVER_CPU] + argv,
                                   stdout=subprocess.DEVNULL, stderr=log)
        wait_for(b, process, port, tls)
        return process, port

    names = ("partner-api", NO_LOG, "bare", "nginx")
    idle_names = ("partner-api", "bare", "nginx")
    facts = b.machine_facts()
    rounds = max(args.rounds, 1)
    recipe = (f"servers on CPU {b.SERVER_CPU}, wrk -t1 on CPU {b.LOAD_CPU}; steps "
              f"{', '.join(f'{step:,}' for step in steps)} connections; {args.seconds} s per "
              f"run after {args.warmup} s of warm-up at each step; {rounds} rounds, targets "
              f"interleaved, the order reversed every other round; open-file limit {nofile}")
    b.say(f"==> recipe: {recipe}")
    b.say(f"==> machine: {facts['cpus']} CPUs, {facts['model']}; commit {facts['commit']}")

    results = {(name, step): [] for name in names for step in steps}
    running = {}
    if args.scale_idle_only:
        names = ()
    try:
        for name in names:
            running[name] = spawn(name)
        for step in steps:
            for name in names:
                b.wrk(running[name][1], args.warmup, latency=False, connections=step)
        for index in range(rounds):
            order = names if index % 2 == 0 else tuple(reversed(names))
            for step in steps:
                for name in order:
                    result = b.wrk(running[name][1], args.seconds, connections=step)
                    results[(name, step)].append(result)
                    b.say(f"    round {index + 1} {name:<11} c={step:<6} {result['rps']:>10,.0f} "
                          f"req/s  p50 {result['p50']:.2f} ms  p99 {result['p99']:.2f} ms  "
                          f"errors {result['socket_errors']}, non-2xx {result['non_2xx']}")
    finally:
        for process, _ in running.values():
            stop(process)

    b.say(f"==> memory per idle connection: {idle:,} connections, one request each")
    idle_bytes = {}
    for kind, tls in (("h1", False), ("https", True), ("h2", True)):
        for name in idle_names:
            idle_bytes[(name, kind)] = idle_cost(lambda: spawn(name, tls), kind, idle)
            b.say(f"    {name:<11} {kind:<5} {idle_bytes[(name, kind)] / 1000:.2f} KB")

    def median(name, step, key):
        return statistics.median(r[key] for r in results[(name, step)])

    def errors(name, step):
        runs = results[(name, step)]
        failed = [r["socket_errors"] for r in runs if r["socket_errors"] != "none"]
        non_2xx = sum(r["non_2xx"] for r in runs)
        parts = failed + ([f"{non_2xx:,} non-2xx"] if non_2xx else [])
        return "; ".join(parts) if parts else "0"

    def per_round(name, step, key):
        values = [ours[key] / theirs[key] for ours, theirs in
                  zip(results[(name, step)], results[("nginx", step)])]
        return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})", values

    rows, goal_rows = [], []
    for step in steps if names else ():
        for name in names:
            ratio = (per_round(name, step, "rps")[0] + " / " + per_round(name, step, "p99")[0]
                     if name != "nginx" else "")
            rows.append(f"| {step:,} | {name} | {median(name, step, 'rps'):,.0f} | "
                        f"{median(name, step, 'p50'):.2f} | {median(name, step, 'p99'):.2f} | "
                        f"{errors(name, step)} | {ratio} |")
        rps_text, rps_values = per_round("partner-api", step, "rps")
        p99_text, p99_values = per_round("partner-api", step, "p99")
        met = (statistics.median(rps_values) >= 1.0 and statistics.median(p99_values) <= 1.0
               and errors("partner-api", step) == "0")
        goal_rows.append(f"| {step:,} | {rps_text} | {p99_text} | {errors('partner-api', step)} | "
                         f"{'met' if met else 'MISSED'} |")
    kinds = (("h1", "HTTP/1.1"), ("https", "HTTPS (TLS 1.3, HTTP/1.1)"), ("h2", "HTTP/2 over TLS"))
    memory_rows = [f"| {label} | " + " | ".join(f"{idle_bytes[(name, kind)] / 1000:.2f} KB"
                                               for name in idle_names) + " |"
                   for kind, label in kinds]
    memory = [
        f"Memory per idle connection ({idle:,} connections, one request each, RSS of a fresh "
        f"process; nginx: its worker):",
        "",
        "| protocol | partner-api | bare actix-web | nginx |",
        "| --- | ---: | ---: | ---: |",
        *memory_rows,
    ]
    if not names:
        report = "\n".join([
            f"Run of {facts['date']} on commit {facts['commit']}: {facts['cpus']} CPUs, "
            f"{facts['model']}, Linux {facts['kernel']}. Command: `scripts/bench --scale "
            f"--scale-idle-only --scale-idle {idle}`.",
            "",
            *memory,
        ])
        b.say("")
        b.say(report)
        with open(os.path.join(out_dir, "scale-idle.md"), "w") as latest:
            latest.write(report + "\n")
        return 0
    report = "\n".join([
        f"Run of {facts['date']} on commit {facts['commit']}: {facts['cpus']} CPUs, "
        f"{facts['model']}, Linux {facts['kernel']}.",
        "",
        f"Recipe: {recipe}. Command: `scripts/bench --scale --seconds {args.seconds} "
        f"--warmup {args.warmup} --rounds {rounds}`.",
        "",
        "| connections | target | req/s | p50 ms | p99 ms | errors | req/s / nginx, p99 / nginx (per-round medians, min–max) |",
        "| --- | --- | ---: | ---: | ---: | --- | --- |",
        *rows,
        "",
        "| connections | req/s, partner-api / nginx (per-round median, min–max) | p99, partner-api / nginx | partner-api errors | goal: ≥ 1, ≤ 1, none |",
        "| --- | --- | --- | --- | --- |",
        *goal_rows,
        "",
        *memory,
    ])
    b.say("")
    b.say(report)
    with open(os.path.join(out_dir, "scale.md"), "w") as latest:
        latest.write(report + "\n")
    b.say(f"\n(written to {os.path.join(out_dir, 'scale.md')})")
