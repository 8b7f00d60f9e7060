"""HTTP/2 abuse against a running partner-api over TLS, spoken frame by frame (hyperframe and
hpack, so nothing in a client library holds back what an attacker would send):

  streams      2,000 half-open streams on one connection (the limit announced is 128)
  headers      a 300 KB header block (3,000 fields) in HEADERS and CONTINUATION frames
  continuation a HEADERS frame followed by CONTINUATION frames that never end the block
  rapid-reset  HEADERS then RST_STREAM, 20,000 times
  settings     100,000 SETTINGS frames whose ACKs are never read
  ping         100,000 PING frames whose ACKs are never read
  zero-window  a reader that opens a zero window and 128 streams for a 1.4 MB file, never reads
  small-data   a body of 4,200 one-byte DATA frames in one burst (GOAWAY(ENHANCE_YOUR_CALM) or
               read as it came), one of 150 empty frames (GOAWAY(ENHANCE_YOUR_CALM)); each
               frame cost the server about 60 bytes for the connection's life (4.5 MB on the
               wire held 30 MB); and a 64 KiB body in 100-byte frames, which must be answered
  reset-waiting 100 responses left waiting for a connection window the client never opens,
               then reset by the server for the client's WINDOW_UPDATE that overflows theirs;
               the connection must still close when idle (each such response stayed in flight
               for the connection's life)

For each: the abusive connection must be refused or closed (RST_STREAM, GOAWAY, or the
connection ended), and a well-behaved client on its own connection must be answered within
100 ms meanwhile (`GET /v1/ping`, several times during each attack). All attacks run twice;
the server's RSS, read from /proc before and after the second pass, must end within 10% of
where it started (the first pass takes the heap to the size this traffic needs).
Usage: h2_abuse.py PORT PID KEEP_ALIVE_SECS
"""

import socket
import ssl
import sys
import time

import hpack
from hyperframe.frame import (
    ContinuationFrame,
    DataFrame,
    Frame,
    GoAwayFrame,
    HeadersFrame,
    PingFrame,
    RstStreamFrame,
    SettingsFrame,
    WindowUpdateFrame,
)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
REFUSED_STREAM = 0x7
CANCEL = 0x8
ENHANCE_YOUR_CALM = 0xb
FLOW_CONTROL_ERROR = 0x3
PROBE_BUDGET_SECONDS = 0.100


class Peer:
    """One raw HTTP/2 connection over TLS."""

    def __init__(self, port, settings=None):
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        context.set_alpn_protocols(["h2"])
        raw = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock = context.wrap_socket(raw, server_hostname="localhost")
        if self.sock.selected_alpn_protocol() != "h2":
            raise SystemExit(f"FAIL: ALPN chose {self.sock.selected_alpn_protocol()!r}, not h2")
        self.encoder = hpack.Encoder()
        self.decoder = hpack.Decoder()
        self.buffer = b""
        self.next_stream = 1
        self.server_settings = {}
        self.closed = False
        self.send_raw(PREFACE + SettingsFrame(0, settings=settings or {}).serialize())

    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, *frames):
        self.send_raw(b"".join(frame.serialize() for frame in frames))

    def stream_id(self):
        stream = self.next_stream
        self.next_stream += 2
        return stream

    def request_block(self, path, extra=()):
        fields = [(":method", "GET"), (":scheme", "https"), (":authority", "localhost"),
                  (":path", path), *extra]
        return self.encoder.encode(fields)

    def read_frame(self, timeout):
        """The next frame, or None when the connection ended; raises TimeoutError."""
        self.sock.settimeout(timeout)
        while len(self.buffer) < 9 or len(self.buffer) < 9 + int.from_bytes(self.buffer[:3], "big"):
            try:
                chunk = self.sock.recv(65536)
            except (ConnectionResetError, ssl.SSLError, BrokenPipeError):
                chunk = b""
            if not chunk:
                self.closed = True
                return None
            self.buffer += chunk
        frame, length = Frame.parse_frame_header(memoryview(self.buffer[:9]))
        frame.parse_body(memoryview(self.buffer[9:9 + length]))
        self.buffer = self.buffer[9 + length:]
        if isinstance(frame, SettingsFrame) and "ACK" not in frame.flags:
            self.server_settings.update(frame.settings)
            self.acknowledge(SettingsFrame(0, flags=["ACK"]))
        if isinstance(frame, PingFrame) and "ACK" not in frame.flags:
            self.acknowledge(PingFrame(0, opaque_data=frame.opaque_data, flags=["ACK"]))
        return frame

    def acknowledge(self, frame):
        """Sends an ACK as a well-behaved peer does; a server that has closed the connection
        meanwhile makes it the end of the connection, not an error."""
        try:
            self.send(frame)
        except OSError:
            self.closed = True

    def frames_until(self, done, timeout):
        """Reads frames until done(frame) is true, the connection ends or timeout passes."""
        deadline = time.monotonic() + timeout
        seen = []
        while time.monotonic() < deadline:
            try:
                frame = self.read_frame(max(0.01, deadline - time.monotonic()))
            except TimeoutError:
                break
            if frame is None:
                break
            seen.append(frame)
            if done(frame):
                break
        return seen

    def ended_within(self, seconds):
        """Whether the server ends the connection within `seconds`, reading what it sends."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                if self.read_frame(max(0.01, deadline - time.monotonic())) is None:
                    return True
            except TimeoutError:
                return False
        return self.closed

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Probe:
    """The well-behaved client: GET /v1/ping on a connection of its own, timed."""

    def __init__(self, port):
        self.port = port
        self.peer = None
        self.slowest = 0.0
        self.count = 0

    def ping(self):
        for _ in range(2):
            if self.peer is None or self.peer.closed:
                # Idle connections are closed after the keep-alive time: open a new one, and
                # time requests only on an open connection, as a client with a pool would.
                self.peer = Peer(self.port)
                self.peer.frames_until(lambda f: isinstance(f, SettingsFrame), 5)
            stream = self.peer.stream_id()
            started = time.monotonic()
            self.peer.send(HeadersFrame(stream, self.peer.request_block("/v1/ping"),
                                        flags=["END_HEADERS", "END_STREAM"]))
            frames = self.peer.frames_until(
                lambda f, stream=stream: f.stream_id == stream and "END_STREAM" in f.flags, 5)
            elapsed = time.monotonic() - started
            answered = [f for f in frames if f.stream_id == stream]
            if answered and "END_STREAM" in answered[-1].flags:
                status = dict(self.peer.decoder.decode(answered[0].data)).get(":status")
                if status != "200":
                    raise SystemExit(f"FAIL: the well-behaved client got {status}")
                self.slowest = max(self.slowest, elapsed)
                self.count += 1
                return elapsed
            self.peer.closed = True
        raise SystemExit("FAIL: the well-behaved client was not answered")


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise SystemExit(f"FAIL: no VmRSS for {pid}")


def attack_streams(port, probe, keep_alive):
    peer = Peer(port)
    peer.frames_until(lambda f: isinstance(f, SettingsFrame), 5)
    announced = peer.server_settings.get(SettingsFrame.MAX_CONCURRENT_STREAMS)
    if announced != 128:
        raise SystemExit(f"FAIL: SETTINGS_MAX_CONCURRENT_STREAMS is {announced}, not 128")
    for batch in range(20):
        frames = []
        for _ in range(100):
            frames.append(HeadersFrame(peer.stream_id(), peer.request_block("/v1/ping"),
                                       flags=["END_HEADERS"]))
        try:
            peer.send(*frames)
        except OSError:
            break
        if batch % 5 == 0:
            probe.ping()
    seen = peer.frames_until(lambda f: isinstance(f, GoAwayFrame), 5)
    refused = sum(1 for f in seen if isinstance(f, RstStreamFrame) and f.error_code == REFUSED_STREAM)
    goaway = any(isinstance(f, GoAwayFrame) for f in seen)
    peer.close()
    if refused < 2000 - 128 and not goaway:
        raise SystemExit(f"FAIL: streams: {refused} of 2,000 refused and no GOAWAY")
    return f"128 announced; {refused} streams refused{', GOAWAY' if goaway else ''}"


def attack_headers(port, probe, keep_alive):
    peer = Peer(port)
    peer.frames_until(lambda f: isinstance(f, SettingsFrame), 5)
    stream = peer.stream_id()
    block = peer.request_block("/v1/ping", [(f"x-field-{i:04}", "v" * 90) for i in range(3000)])
    chunks = [block[i:i + 16384] for i in range(0, len(block), 16384)]
    frames = [HeadersFrame(stream, chunks[0], flags=["END_STREAM"])]
    frames += [ContinuationFrame(stream, chunk) for chunk in chunks[1:]]
    frames[-1].flags.add("END_HEADERS")
    try:
        peer.send(*frames)
    except OSError:
        pass
    probe.ping()
    seen = peer.frames_until(
        lambda f: f.stream_id == stream and isinstance(f, RstStreamFrame) or isinstance(f, GoAwayFrame), 5)
    answer = [f for f in seen if f.stream_id == stream]
    outcome = None
    for frame in answer:
        if isinstance(frame, HeadersFrame):
            status = dict(peer.decoder.decode(frame.data)).get(":status")
            if status != "431":
                raise SystemExit(f"FAIL: a {len(block)}-byte header block was answered {status}")
            outcome = "431"
        if isinstance(frame, RstStreamFrame):
            outcome = f"{outcome or ''} RST_STREAM".strip()
    if outcome is None and not any(isinstance(f, GoAwayFrame) for f in seen) and not peer.closed:
        raise SystemExit("FAIL: a 300 KB header block was neither refused nor reset")
    peer.close()
    return f"{len(block)} bytes of headers: {outcome or 'connection closed'}"


def attack_continuation(port, probe, keep_alive):
    peer = Peer(port)
    peer.frames_until(lambda f: isinstance(f, SettingsFrame), 5)
    stream = peer.stream_id()
    peer.send(HeadersFrame(stream, peer.request_block("/v1/ping")))
    junk = peer.encoder.encode([("x-flood", "z" * 16000)])
    sent = 0
    started = time.monotonic()
    try:
        while sent < 50_000_000 and time.monotonic() - started < 20:
            peer.send_raw(ContinuationFrame(stream, junk).serialize() * 16)
            sent += 16 * len(junk)
            if sent % (64 * len(junk) * 16) == 0:
                probe.ping()
    except OSError:
        pass
    ended = peer.ended_within(2 * keep_alive + 5)
    peer.close()
    if not ended:
        raise SystemExit(f"FAIL: CONTINUATION flood: the connection is open after {sent} bytes")
    return f"closed after {sent // 1024} KiB of CONTINUATION"


def attack_rapid_reset(port, probe, keep_alive):
    peer = Peer(port)
    peer.frames_until(lambda f: isinstance(f, SettingsFrame), 5)
    sent = 0
    try:
        for batch in range(200):
            frames = []
            for _ in range(100):
                stream = peer.stream_id()
                frames.append(HeadersFrame(stream, peer.request_block("/v1/ping"),
                                           flags=["END_HEADERS", "END_STREAM"]))
                frames.append(RstStreamFrame(stream, error_code=CANCEL))
            peer.send(*frames)
            sent += 100
            if batch % 40 == 0:
                probe.ping()
    except OSError:
        pass
    seen = peer.frames_until(lambda f: isinstance(f, GoAwayFrame), 2 * keep_alive + 5)
    goaway = [f for f in seen if isinstance(f, GoAwayFrame)]
    ended = bool(goaway) or peer.closed
    peer.close()
    if not ended:
        raise SystemExit(f"FAIL: rapid reset: {sent} resets and the connection is still open")
    return f"{sent} resets sent; {'GOAWAY' if goaway else 'connection ended'}"


def closed_while_silent(peer, probe, keep_alive):
    """Reads nothing for two keep-alive periods (the server's PING goes unanswered), probing
    meanwhile; then whether the server ends the connection."""
    probe.ping()
    time.sleep(2 * keep_alive + 1)
    probe.ping()
    ended = peer.ended_within(keep_alive + 5)
    peer.close()
    return ended


def flood(port, probe, keep_alive, make_frame, name):
    peer = Peer(port)
    peer.frames_until(lambda f: isinstance(f, SettingsFrame), 5)
    sent = 0
    started = time.monotonic()
    try:
        peer.sock.settimeout(2)
        while sent < 100_000 and time.monotonic() - started < 20:
            peer.send_raw(make_frame().serialize() * 500)
            sent += 500
            if sent % 20_000 == 0:
                probe.ping()
    except (OSError, TimeoutError):
        pass  # the server stopped reading: its buffers are full, not growing
    if not closed_while_silent(peer, probe, keep_alive):
        raise SystemExit(f"FAIL: {name} flood: the connection is open after {sent} frames")
    return f"{sent} frames sent, ACKs never read; connection closed"


def attack_settings(port, probe, keep_alive):
    return flood(port, probe, keep_alive,
                 lambda: SettingsFrame(0, settings={SettingsFrame.ENABLE_PUSH: 0}), "SETTINGS")


def attack_ping(port, probe, keep_alive):
    return flood(port, probe, keep_alive, lambda: PingFrame(0, opaque_data=b"12345678"), "PING")


def attack_zero_window(port, probe, keep_alive):
    peer = Peer(port, settings={SettingsFrame.INITIAL_WINDOW_SIZE: 0})
    peer.frames_until(lambda f: isinstance(f, SettingsFrame), 5)
    for _ in range(128):
        peer.send(HeadersFrame(peer.stream_id(), peer.request_block("/docs/swagger-ui-bundle.js"),
                               flags=["END_HEADERS", "END_STREAM"]))
    # Never read again: the server can neither send data nor get its PING answered.
    if not closed_while_silent(peer, probe, keep_alive):
        raise SystemExit("FAIL: zero-window reader: the connection is still open")
    return "128 streams at a zero window; connection closed"


def small_frames(port, frames_after_headers):
    """A `GET /v1/ping` whose HEADERS and body frames go in one write, so that none of the body
    is read before all of it is queued; then every frame the server sends until its GOAWAY,
    or for 3 s."""
    peer = Peer(port)
    peer.frames_until(lambda f: isinstance(f, SettingsFrame), 5)
    stream = peer.stream_id()
    head = HeadersFrame(stream, peer.request_block("/v1/ping"), flags=["END_HEADERS"])
    try:
        peer.send_raw(head.serialize() + b"".join(frames_after_headers(stream)))
    except OSError:
        pass  # the server ended the connection; what it sent first is read below
    seen = peer.frames_until(lambda f: isinstance(f, GoAwayFrame), 3)
    peer.close()
    return stream, seen


def calmed(seen):
    """Whether the server ended the connection for too many small DATA frames."""
    return any(isinstance(f, GoAwayFrame) and f.error_code == ENHANCE_YOUR_CALM
               and f.additional_data == b"too_many_data_frames" for f in seen)


def attack_small_data(port, probe, keep_alive):
    # Each queued DATA frame costs the server about 60 bytes whatever its size, so frames
    # under 256 bytes draw on a budget of half the connection's window (1 MiB), given back as
    # the body is read: 4,200 one-byte frames exceed it if they all arrive before the handler
    # reads any. Whether they do depends on how the burst is split on its way, so either end
    # is right: GOAWAY, or the body read as it came (and refused as not JSON).
    stream, seen = small_frames(
        port, lambda stream: [DataFrame(stream, b"x").serialize()] * 4_200
        + [DataFrame(stream, b"", flags=["END_STREAM"]).serialize()])
    answered = any(isinstance(f, HeadersFrame) and f.stream_id == stream for f in seen)
    if not calmed(seen) and not answered:
        raise SystemExit("FAIL: small-data: 4,200 one-byte DATA frames were neither answered "
                         "nor ended with GOAWAY(ENHANCE_YOUR_CALM, too_many_data_frames)")
    one_byte = "GOAWAY(ENHANCE_YOUR_CALM)" if calmed(seen) else "read as they came"
    probe.ping()
    # Empty frames are not queued, but are limited to 100 a stream.
    _, seen = small_frames(port, lambda stream: [DataFrame(stream, b"").serialize()] * 150)
    if not calmed(seen):
        raise SystemExit("FAIL: small-data: 150 empty DATA frames on a stream did not end the "
                         "connection with GOAWAY(ENHANCE_YOUR_CALM, too_many_data_frames)")
    probe.ping()
    # A partner's client streaming a 64 KiB body in 100-byte frames, all at once, and then an
    # empty frame as some relays send at the end of a body, is answered like any other
    # request: the budget is for what a burst holds, not for how a body is cut.
    def upload(stream):
        body = [DataFrame(stream, b"x" * 100).serialize()] * 655 + [
            DataFrame(stream, b"").serialize()]
        return body + [DataFrame(stream, b"", flags=["END_STREAM"]).serialize()]

    stream, seen = small_frames(port, upload)
    answered = [f for f in seen if isinstance(f, HeadersFrame) and f.stream_id == stream]
    if not answered or any(isinstance(f, GoAwayFrame) for f in seen):
        raise SystemExit("FAIL: small-data: a 64 KiB body in 100-byte frames was not answered "
                         "on an open connection")
    return (f"4,200 one-byte frames: {one_byte}; 150 empty ones: GOAWAY(ENHANCE_YOUR_CALM); "
            "a 64 KiB body in 100-byte frames: answered")


def attack_reset_waiting(port, probe, keep_alive):
    # The client sends no WINDOW_UPDATE, so the connection's window (65,535 bytes) is spent by
    # the first 64 KB of a large file, and every later response waits for window.
    peer = Peer(port)
    peer.frames_until(lambda f: isinstance(f, SettingsFrame), 5)
    large = peer.stream_id()
    peer.send(HeadersFrame(large, peer.request_block("/docs/swagger-ui-bundle.js"),
                           flags=["END_HEADERS", "END_STREAM"]))
    received = 0

    def window_spent(frame):
        nonlocal received
        if isinstance(frame, DataFrame):
            received += len(frame.data)
        return received >= 65_535

    peer.frames_until(window_spent, 5)
    waiting = [peer.stream_id() for _ in range(100)]
    peer.send(*[HeadersFrame(stream, peer.request_block("/v1/ping"),
                             flags=["END_HEADERS", "END_STREAM"]) for stream in waiting])
    peer.frames_until(lambda f: False, 0.5)  # their HEADERS; their bodies wait
    # A WINDOW_UPDATE that takes each stream's window past 2^31-1: the server resets the stream
    # itself (FLOW_CONTROL_ERROR), and the response waiting on it must end with it.
    peer.send(*[WindowUpdateFrame(stream, window_increment=2**31 - 1) for stream in waiting])
    seen = peer.frames_until(lambda f: False, 1)
    resets = sum(1 for f in seen
                 if isinstance(f, RstStreamFrame) and f.error_code == FLOW_CONTROL_ERROR)
    peer.send(RstStreamFrame(large, error_code=CANCEL))
    probe.ping()
    # Nothing is open now: the server must send GOAWAY within two keep-alive periods (and end
    # the connection a period later), though this client answers every PING.
    seen = peer.frames_until(lambda f: isinstance(f, GoAwayFrame), 3 * keep_alive + 2)
    goaway = any(isinstance(f, GoAwayFrame) for f in seen)
    peer.close()
    if resets != len(waiting):
        raise SystemExit(f"FAIL: reset-waiting: {resets} of {len(waiting)} streams reset")
    if not goaway and not peer.closed:
        raise SystemExit("FAIL: reset-waiting: the idle connection stayed open: the responses "
                         "reset while they waited for window are still in flight")
    return f"{resets} waiting responses reset; the idle connection then closed"


ATTACKS = {
    "streams": attack_streams,
    "headers": attack_headers,
    "continuation": attack_continuation,
    "rapid-reset": attack_rapid_reset,
    "settings": attack_settings,
    "ping": attack_ping,
    "zero-window": attack_zero_window,
    "small-data": attack_small_data,
    "reset-waiting": attack_reset_waiting,
}


def run_attacks(port, pid, keep_alive, probe):
    for name, attack in ATTACKS.items():
        probe.slowest = 0.0
        outcome = attack(port, probe, keep_alive)
        if probe.slowest > PROBE_BUDGET_SECONDS:
            raise SystemExit(f"FAIL: {name}: the well-behaved client waited "
                             f"{probe.slowest * 1000:.0f} ms")
        print(f"ok: {name}: {outcome}; well-behaved client's slowest answer "
              f"{probe.slowest * 1000:.1f} ms; RSS {rss_kib(pid)} KiB", flush=True)


def main(argv):
    port, pid, keep_alive = int(argv[1]), int(argv[2]), float(argv[3])
    probe = Probe(port)
    for _ in range(20):
        probe.ping()  # warm up: workers, TLS
    # The documentation is rendered on its first request: make that a client's, not an attack's.
    warm = Peer(port)
    warm.frames_until(lambda f: isinstance(f, SettingsFrame), 5)
    stream = warm.stream_id()
    warm.send(HeadersFrame(stream, warm.request_block("/docs/swagger-ui-bundle.js"),
                           flags=["END_HEADERS", "END_STREAM"]))
    warm.frames_until(lambda f: isinstance(f, HeadersFrame) and f.stream_id == stream, 10)
    warm.close()
    # Two passes: the first takes the allocator to the size this traffic needs (a process's
    # heap does not shrink back), the second must leave RSS where it found it: what a pass
    # kept would show as growth.
    print("pass 1", flush=True)
    run_attacks(port, pid, keep_alive, probe)
    time.sleep(1)
    before = rss_kib(pid)
    print(f"pass 2; RSS before it: {before} KiB", flush=True)
    run_attacks(port, pid, keep_alive, probe)
    time.sleep(1)
    after = rss_kib(pid)
    print(f"RSS after pass 2: {after} KiB ({after / before:.2f} of before)")
    if after > before * 1.10:
        raise SystemExit(f"FAIL: RSS grew from {before} KiB to {after} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
