"""Shared by scripts/check-database-drills and scripts/bench-database: a PostgreSQL cluster of
the run's own (Debian's package), on a free loopback port, with the database `partner_api`,
its owner and the service's role; restartable, stopped by its PID, its folder removed. As
root, PostgreSQL's programs run as the package's `postgres` user (it refuses root)."""

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile

from cluster import fail, free_port, wait_until

OWNER, OWNER_PASSWORD = "owner", "check-owner-password"
SERVICE_ROLE, SERVICE_PASSWORD = "partner_api", "check-service-password"


def postgres_bin():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"),
                   key=lambda path: int(path.split("/")[4]))
    if not found:
        fail("PostgreSQL's server is not installed (Debian's postgresql package)")
    return os.path.dirname(found[-1])


def as_postgres(argv):
    """PostgreSQL refuses to run as root: as root, its programs run as `postgres`."""
    if os.geteuid() == 0:
        return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--", *argv]
    return argv


class Postgres:
    """A cluster of this run's own on a free port, restartable, stopped by its PID."""

    def __init__(self, cpus=None):
        """`cpus` (taskset's list, "0"): the cores the server and its backends run on."""
        self.bin = postgres_bin()
        self.cpus = cpus
        self.dir = tempfile.mkdtemp(prefix="partner-api-drills-pg-")
        self.port = free_port()
        self.process = None
        password_file = os.path.join(self.dir, "owner-password")
        with open(password_file, "w") as out:
            out.write(OWNER_PASSWORD)
        if os.geteuid() == 0:
            subprocess.run(["chown", "-R", "postgres:postgres", self.dir], check=True)
        subprocess.run(as_postgres([
            os.path.join(self.bin, "initdb"), "-D", os.path.join(self.dir, "cluster"),
            "-U", OWNER, "-E", "UTF8", "--auth-local=trust", "--auth-host=scram-sha-256",
            "--no-instructions", f"--pwfile={password_file}"]),
            check=True, stdout=subprocess.DEVNULL)
        try:
            self.start()
            self.create_roles()
        except BaseException:
            self.stop()
            raise

    def create_roles(self):
        self.sql("postgres", f"CREATE ROLE {SERVICE_ROLE} LOGIN PASSWORD '{SERVICE_PASSWORD}'")
        self.sql("postgres", f"CREATE DATABASE partner_api OWNER {OWNER}")

    def start(self):
        log = open(os.path.join(self.dir, "postgres.log"), "ab")
        pinned = ["taskset", "-c", self.cpus] if self.cpus else []
        self.process = subprocess.Popen(pinned + as_postgres([
            os.path.join(self.bin, "postgres"), "-D", os.path.join(self.dir, "cluster"),
            "-p", str(self.port), "-c", "listen_addresses=127.0.0.1",
            "-c", f"unix_socket_directories={self.dir}"]),
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)
        wait_until("PostgreSQL answers", lambda: self.try_sql("postgres", "SELECT 1") is not None,
                   timeout=30, every=0.1)

    def url(self, role, password=None, database="partner_api"):
        secret = f":{password}" if password else ""
        return (f"postgres://{role}{secret}@127.0.0.1:{self.port}/{database}"
                "?sslmode=disable")

    def try_sql(self, database, sql):
        """The rows of `sql` as the owner (tab-separated lines), or None on failure."""
        try:
            done = self.psql(database, sql)
        except subprocess.TimeoutExpired:
            return None
        if done.returncode != 0:
            return None
        return [line.split("\t") for line in done.stdout.splitlines() if line]

    def psql(self, database, sql):
        return subprocess.run(
            ["psql", "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1",
             "-d", self.url(OWNER, OWNER_PASSWORD, database).replace("?sslmode=disable", ""),
             "-c", sql],
            capture_output=True, text=True, timeout=30,
            env=dict(os.environ, PGSSLMODE="disable", PGCONNECT_TIMEOUT="2"))

    def sql(self, database, sql):
        rows = self.try_sql(database, sql)
        if rows is None:
            fail(f"PostgreSQL refused: {sql}")
        return rows

    def family(self):
        """The server's process and its children (each backend is a session of its own, so
        a signal to the server's group reaches none of them)."""
        children = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    # The fields after the command's closing parenthesis: state, ppid, ...
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == self.process.pid:
                children.append(int(entry))
        return [self.process.pid, *children]

    def signal_all(self, number):
        for pid in self.family():
            try:
                os.kill(pid, number)
            except ProcessLookupError:
                pass

    def kill(self):
        self.signal_all(signal.SIGKILL)
        self.process.wait()
        # Its backends notice the postmaster is gone; wait until the port is free.
        wait_until("PostgreSQL's port is free", lambda: not listening(self.port), timeout=15)

    def stop_fast(self):
        os.kill(self.process.pid, signal.SIGINT)
        self.process.wait(timeout=30)

    def pause(self):
        self.signal_all(signal.SIGSTOP)

    def resume(self):
        self.signal_all(signal.SIGCONT)

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.signal_all(signal.SIGCONT)
            os.kill(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.signal_all(signal.SIGKILL)
                self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def listening(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False
