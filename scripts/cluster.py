"""Shared by scripts/check-cluster and scripts/check-drills: release instances of
partner-api on fixed loopback ports (restartable), Debian's HAProxy in front of them
health-checking each one's /readyz, a Redis server, and steady client traffic through the
balancer. Every process is stopped by its PID; every wait is bounded."""

import csv
import http.client
import io
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET_DIR = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
SERVICE = os.path.join(TARGET_DIR, "release", "partner-api")
PING_BODY = b'{"object":"ping","pong":true}'


class Script:
    """Names the messages of one check script."""

    name = "check"

    @classmethod
    def say(cls, message):
        print(f"{cls.name}: {message}", flush=True)

    @classmethod
    def fail(cls, message):
        print(f"{cls.name}: FAILED: {message}", file=sys.stderr, flush=True)
        sys.exit(1)


say = Script.say


def fail(message):
    Script.fail(message)


# Every port free_port has handed out in this process. The kernel may give a port just
# closed to the next bind(0), and the processes are started after all their ports are
# chosen: once, two replicas were given the same admin port, and the second one's readiness
# was answered by the first.
_HANDED_OUT = set()


def free_port():
    """A loopback port no process listens on now, never one handed out before in this run."""
    for _ in range(100):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port
    fail("no free loopback port that was not handed out already")


def ensure_packages(commands_to_packages):
    """Installs the Debian packages whose commands are missing."""
    missing = [package for command, package in commands_to_packages.items()
               if not shutil.which(command)]
    if not missing:
        return
    say(f"installing {' '.join(missing)} (Debian packages)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing],
                   check=True, env=env)


def build_release(*targets):
    """Builds the release binary (and `targets`, such as `--example`, `soak_server`), unless
    PARTNER_API_PREBUILT=1 says the release build is there already (CI builds it once)."""
    if os.environ.get("PARTNER_API_PREBUILT") == "1":
        say("using the release build already made (PARTNER_API_PREBUILT=1)")
        return
    say("building the release binary")
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet", *targets], cwd=ROOT,
                   check=True)


def wait_until(what, predicate, timeout=20.0, every=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(every)
    fail(f"{what}: not within {timeout:.0f} s")


def http_get(url, timeout=1.0):
    """(status, body) of a GET, or (None, b"") when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
    except OSError:
        return None, b""


def stop_process(process, timeout=20):
    if process is not None and process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()


class Instance:
    """One partner-api process on fixed ports, restartable."""

    def __init__(self, name, work, args, log_filter="info,access=off"):
        self.name, self.work, self.args = name, work, args
        self.log_filter = log_filter
        self.api_port, self.admin_port = free_port(), free_port()
        self.process = None
        self.starts = 0
        # What start() runs, and the descriptors it may hold (None: inherited).
        self.binary = SERVICE
        self.max_fds = None
        # Variables added to its environment (a preloaded library, say).
        self.env = {}

    def start(self, stderr=None):
        """Starts the process; its stderr goes to the run's log file, or to `stderr` (a
        pipe's writing end, say) when given."""
        self.starts += 1
        log = stderr or open(os.path.join(self.work, f"{self.name}-{self.starts}.log"), "wb")
        # A lower descriptor limit through prlimit(1), not a preexec_fn: the scripts run
        # threads, and Python warns that a preexec_fn may deadlock a child forked beside them.
        limit = [] if self.max_fds is None else ["prlimit", f"--nofile={self.max_fds}"]
        self.process = subprocess.Popen(
            [*limit, self.binary, "--bind", f"127.0.0.1:{self.api_port}",
             "--admin-bind", f"127.0.0.1:{self.admin_port}", *self.args],
            stdout=subprocess.DEVNULL, stderr=log, stdin=subprocess.DEVNULL,
            env=dict(os.environ, RUST_LOG=self.log_filter, **self.env))
        wait_until(f"{self.name} is ready", self.ready)
        say(f"{self.name} started (pid {self.process.pid}), API :{self.api_port}, "
            f"admin :{self.admin_port}")

    def log(self):
        """What the current run has written to stderr so far."""
        with open(os.path.join(self.work, f"{self.name}-{self.starts}.log"), "rb") as log:
            return log.read().decode(errors="replace")

    def ready(self):
        # Its own process still running: a readiness answered on its admin port by another
        # process is not its own.
        if self.process.poll() is not None:
            fail(f"{self.name} (pid {self.process.pid}) exited with {self.process.returncode} "
                 "before it was ready")
        return http_get(f"http://127.0.0.1:{self.admin_port}/readyz")[0] == 200

    def metric(self, name):
        """The value of an unlabelled sample, or None."""
        status, body = http_get(f"http://127.0.0.1:{self.admin_port}/metrics")
        if status != 200:
            return None
        for line in body.decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
        return None

    def terminate_and_wait(self, within):
        pid = self.process.pid
        began = time.monotonic()
        os.kill(pid, signal.SIGTERM)
        try:
            code = self.process.wait(timeout=within)
        except subprocess.TimeoutExpired:
            fail(f"{self.name} (pid {pid}) did not exit after SIGTERM")
        if code != 0:
            fail(f"{self.name} exited with {code} after SIGTERM")
        say(f"{self.name} (pid {pid}) exited 0, {time.monotonic() - began:.1f} s after SIGTERM")

    def stop(self):
        if self.process and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()


class Balancer:
    """HAProxy, round-robin over `instances`, health-checking /readyz on their admin ports,
    without retries or redispatching: a request sent to an instance that stopped listening
    fails at the client. `forwardfor` adds X-Forwarded-For with the client's address."""

    def __init__(self, work, instances, forwardfor=False):
        self.port, self.stats_port = free_port(), free_port()
        config = os.path.join(work, "haproxy.cfg")
        servers = "\n".join(
            f"    server {i.name} 127.0.0.1:{i.api_port} check port {i.admin_port}"
            for i in instances)
        forwarding = "    option forwardfor\n" if forwardfor else ""
        with open(config, "w") as out:
            out.write(f"""global
    maxconn 2000
defaults
    mode http
    timeout connect 1s
    timeout client 10s
    timeout server 10s
    retries 0
    option http-keep-alive
{forwarding}frontend api
    bind 127.0.0.1:{self.port}
    default_backend replicas
backend replicas
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    default-server inter 200ms fall 1 rise 2
{servers}
listen stats
    bind 127.0.0.1:{self.stats_port}
    stats enable
    stats uri /stats
""")
        subprocess.run(["haproxy", "-c", "-q", "-f", config], check=True)
        self.process = subprocess.Popen(["haproxy", "-db", "-f", config],
                                        stdout=open(os.path.join(work, "haproxy.log"), "wb"),
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        say(f"haproxy (pid {self.process.pid}) on :{self.port}")

    def status(self, server):
        status, body = http_get(f"http://127.0.0.1:{self.stats_port}/stats;csv")
        if status != 200:
            return None
        text = body.decode().lstrip("# ")
        for row in csv.DictReader(io.StringIO(text)):
            if row["pxname"] == "replicas" and row["svname"] == server:
                return row["status"]
        return None

    def wait_up(self, instance):
        wait_until(f"haproxy sees {instance.name} UP",
                   lambda: self.status(instance.name) == "UP")

    def stop(self):
        stop_process(self.process, timeout=10)


class Redis:
    """A redis-server on a free loopback port; stop() kills it, start() brings it back."""

    def __init__(self, work):
        self.port = free_port()
        self.work = work
        self.process = None

    @property
    def url(self):
        return f"redis://127.0.0.1:{self.port}"

    def start(self):
        self.process = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
             "--appendonly", "no"],
            stdout=open(os.path.join(self.work, "redis.log"), "ab"), stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL)
        wait_until("redis answers", self.answers)
        say(f"redis-server (pid {self.process.pid}) on :{self.port}")

    def answers(self):
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as conn:
                conn.sendall(b"PING\r\n")
                return conn.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def kill(self):
        if self.process and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()
            say(f"redis-server (pid {self.process.pid}) killed")

    stop = kill


class Traffic:
    """Steady GET /v1/ping through the balancer until stopped, from `sources` (loopback
    addresses, one connection each, taken in turn); counts 200s and everything else."""

    def __init__(self, port, sources=("127.0.0.1",), clients=4, pause=0.002,
                 max_requests=2_000_000, context=None, timeout=10):
        self.port, self.sources, self.pause = port, list(sources), pause
        # With an SSL context, HTTPS; `timeout` is each request's.
        self.context, self.timeout = context, timeout
        self.max_requests = max_requests
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.ok = 0
        self.failures = []
        self.threads = [threading.Thread(target=self.client, args=(index,))
                        for index in range(clients)]

    def client(self, index):
        connections = {}
        turn = index
        while not self.stopping.is_set():
            with self.lock:
                if self.ok + len(self.failures) >= self.max_requests:
                    return
            source = self.sources[turn % len(self.sources)]
            turn += len(self.threads)
            connection = connections.get(source)
            try:
                if connection is None and self.context is not None:
                    connection = http.client.HTTPSConnection(
                        "127.0.0.1", self.port, timeout=self.timeout,
                        source_address=(source, 0), context=self.context)
                    connections[source] = connection
                if connection is None:
                    connection = http.client.HTTPConnection(
                        "127.0.0.1", self.port, timeout=self.timeout,
                        source_address=(source, 0))
                    connections[source] = connection
                connection.request("GET", "/v1/ping")
                response = connection.getresponse()
                body = response.read()
                with self.lock:
                    if response.status == 200 and body == PING_BODY:
                        self.ok += 1
                    else:
                        self.failures.append(f"{response.status} {body[:200]!r}")
            except (http.client.HTTPException, OSError) as error:
                with self.lock:
                    self.failures.append(f"{type(error).__name__}: {error}")
                if connection is not None:
                    connection.close()
                connections.pop(source, None)
            time.sleep(self.pause)

    def start(self):
        for thread in self.threads:
            thread.start()

    def stop(self):
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=15)
