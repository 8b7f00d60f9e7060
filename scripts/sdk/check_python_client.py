"""Uses the Python client generated from openapi/v1.yaml against a running server: ping
returns pong true, and a 405 and a 404 are parsed into the error model with their code and
request id (a code is an open string: new codes are additive). Usage: check_python_client.py <generated package's parent dir> <server origin>."""

import sys

sys.path.insert(0, sys.argv[1])
origin = sys.argv[2]

from partner_api_client import Client  # noqa: E402
from partner_api_client.api.utility import ping  # noqa: E402
from partner_api_client.models import ErrorEnvelope, Ping, PingObject  # noqa: E402

client = Client(base_url=f"{origin}/v1", raise_on_unexpected_status=True)

answer = ping.sync_detailed(client=client)
assert answer.status_code == 200, answer
assert isinstance(answer.parsed, Ping), answer.parsed
assert answer.parsed.pong is True and answer.parsed.object_ == PingObject.PING, answer.parsed
print(f"ok: ping answered pong {answer.parsed.pong}")

# A method ping does not answer: the generated parser maps the documented 405 to the model.
http = client.get_httpx_client()
refused = http.post("/ping")
parsed = ping._parse_response(client=client, response=refused)
assert isinstance(parsed, ErrorEnvelope), parsed
assert parsed.error.code == "method_not_allowed", parsed.error.code
assert parsed.error.request_id == refused.headers["service-request-id"], parsed.error
print(f"ok: 405 parsed: code {parsed.error.code}, request id {parsed.error.request_id}")

# An unknown path: the error body is the same model.
missing = http.get("/pings")
assert missing.status_code == 404, missing
envelope = ErrorEnvelope.from_dict(missing.json())
assert envelope.error.code == "resource_missing", envelope.error.code
assert envelope.error.request_id == missing.headers["service-request-id"], envelope.error
print(f"ok: 404 parsed: code {envelope.error.code}, request id {envelope.error.request_id}")
