"""Uses the client openapi-python-client generated from the 3.1 document a server serves, called
through the stand-in balancer that document names as its server (scripts/check-sdks):

- its base URL is the document's server URL as it stands (openapi-python-client's `Client`
  takes no default: the caller passes `servers[0].url`, nothing added by hand);
- ping answers pong true; an unknown path (base URL <origin>/nowhere/v1) is a 404 parsed into
  the generated ErrorEnvelope (`default`), code resource_missing;
- pings until one is refused (at most 20) give a 429 parsed into the generated ErrorEnvelope,
  code rate_limited, the request id of the Service-Request-Id header, a Retry-After of whole
  seconds, at least 1;
- the balancer's HTML 503 is an answer with status 503 and nothing parsed, raised by nothing
  (with raise_on_unexpected_status=True as well): a value to retry;
- after Retry-After seconds the retried ping answers again.
Usage: check_python_client.py <generated package's parent dir> <served document> <origin>."""

import re
import sys
import time
import urllib.request

import yaml

sys.path.insert(0, sys.argv[1])
document = yaml.safe_load(open(sys.argv[2]))
origin = sys.argv[3]

from partner_api_client import Client  # noqa: E402
from partner_api_client.api.utility import ping  # noqa: E402
from partner_api_client.models import ErrorEnvelope, Ping, PingObject  # noqa: E402

REQUEST_ID = re.compile(r"^req_[0-9a-f]{32}$")

base_url = document["servers"][0]["url"]
assert base_url == f"{origin}/v1", base_url
client = Client(base_url=base_url, raise_on_unexpected_status=True)

answer = ping.sync_detailed(client=client)
assert answer.status_code == 200, answer
assert isinstance(answer.parsed, Ping), answer.parsed
assert answer.parsed.pong is True and answer.parsed.object_ == PingObject.PING, answer.parsed
print(f"ok: openapi-python-client: ping answered pong {answer.parsed.pong} (base URL {base_url})")

# An unknown path (a client whose base URL is <origin>/nowhere/v1): ping declares no 404, so
# `default` parses it into the envelope.
lost = Client(base_url=f"{origin}/nowhere/v1", raise_on_unexpected_status=True)
missing = ping.sync_detailed(client=lost)
assert missing.status_code == 404, missing
assert isinstance(missing.parsed, ErrorEnvelope), missing.parsed
assert missing.parsed.error.code == "resource_missing", missing.parsed.error
assert missing.parsed.error.request_id == missing.headers["service-request-id"], missing.parsed
print(f"ok: openapi-python-client: 404 parsed: code resource_missing, request id {missing.parsed.error.request_id}")

for attempt in range(1, 21):
    refused = ping.sync_detailed(client=client)
    if refused.status_code != 200:
        break
else:
    raise AssertionError("20 pings in a row were answered: is the server's quota tiny?")
assert refused.status_code == 429, refused
envelope = refused.parsed
assert isinstance(envelope, ErrorEnvelope), envelope
assert envelope.error.code == "rate_limited", envelope.error
assert REQUEST_ID.match(envelope.error.request_id), envelope.error
assert envelope.error.request_id == refused.headers["service-request-id"], envelope.error
retry_after = refused.headers["retry-after"]
assert retry_after.isdigit() and int(retry_after) >= 1, retry_after
print(
    f"ok: openapi-python-client: 429 parsed after {attempt} pings: code {envelope.error.code}, "
    f"request id {envelope.error.request_id}, Retry-After {retry_after}"
)

control = urllib.request.urlopen(urllib.request.Request(f"{origin}/standin/unavailable", method="POST"))
assert control.status == 204, control.status
unavailable = ping.sync_detailed(client=client)
assert unavailable.status_code == 503, unavailable
assert unavailable.parsed is None, unavailable.parsed
assert unavailable.content.startswith(b"<html>"), unavailable.content
print("ok: openapi-python-client: the balancer's HTML 503 is an answer to retry, nothing parsed")

time.sleep(int(retry_after))
again = ping.sync_detailed(client=client)
assert again.status_code == 200 and isinstance(again.parsed, Ping), again
print("ok: openapi-python-client: the retried ping answered")
