"""A stand-in for the balancer in front of the service, for scripts/check-sdks: it forwards every
request to the service as it came and hands back the service's answer, except while it is told
to be unavailable, when it answers as HAProxy does with no server up: 503, an HTML body, none of
the service's headers. A generated client must survive that answer (an error value it can
retry), not crash parsing it as the error envelope.

    standin_proxy.py PORT UPSTREAM

listens on 127.0.0.1:PORT and forwards to UPSTREAM (http://127.0.0.1:N). Its one control,
outside the API's paths: `POST /standin/unavailable` makes the next request (or the next
`?count=N`, 1 to 100) get the 503; it answers 204. Stopped by its PID."""

import http.client
import http.server
import sys
import threading
import urllib.parse

PORT = int(sys.argv[1])
UPSTREAM = urllib.parse.urlsplit(sys.argv[2])
CONTROL = "/standin/unavailable"
# Hop-by-hop fields (RFC 9110, 7.6.1) are the proxy's own, never forwarded either way.
HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
}
UNAVAILABLE_BODY = (
    b"<html><body><h1>503 Service Unavailable</h1>\n"
    b"No server is available to handle this request.\n</body></html>\n"
)

lock = threading.Lock()
unavailable = 0


class StandIn(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # A client that sends nothing for this long is dropped, so no thread waits forever.
    timeout = 30

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except (ConnectionError, TimeoutError):
            self.close_connection = True

    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        sys.stderr.write(f"standin: {self.command} {self.path} {format % args}\n")

    def answer(self, status, fields, body):
        self.send_response(status)
        for name, value in fields:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def forward(self):
        global unavailable
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        target = urllib.parse.urlsplit(self.path)
        if target.path == CONTROL and self.command == "POST":
            count = urllib.parse.parse_qs(target.query).get("count", ["1"])[0]
            if not count.isdigit() or not 1 <= int(count) <= 100:
                self.answer(400, [("Content-Type", "text/plain")], b"count: 1 to 100\n")
                return
            with lock:
                unavailable = int(count)
            self.answer(204, [], b"")
            return
        with lock:
            refuse = unavailable > 0
            unavailable -= refuse
        if refuse:
            self.answer(503, [("Content-Type", "text/html"), ("Cache-Control", "no-cache")],
                        UNAVAILABLE_BODY)
            return
        upstream = http.client.HTTPConnection(UPSTREAM.hostname, UPSTREAM.port, timeout=30)
        try:
            fields = {
                name: value for name, value in self.headers.items()
                if name.lower() not in HOP_BY_HOP and name.lower() != "content-length"
            }
            upstream.request(self.command, self.path, body=body or None, headers=fields)
            response = upstream.getresponse()
            payload = response.read()
            # A HEAD answer keeps the service's Content-Length: that of the body GET would get.
            kept = [
                (name, value) for name, value in response.getheaders()
                if name.lower() not in HOP_BY_HOP
                and (name.lower() != "content-length" or self.command == "HEAD")
            ]
            self.send_response_only(response.status, response.reason)
            for name, value in kept:
                self.send_header(name, value)
            if self.command != "HEAD":
                self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)
        finally:
            upstream.close()

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = forward


http.server.ThreadingHTTPServer.daemon_threads = True
http.server.ThreadingHTTPServer(("127.0.0.1", PORT), StandIn).serve_forever()
