"""Uses the Python client openapi-generator (`-g python`) generated from the 3.0.3 rendition
against a running server: ping returns a ping object with pong true, and a method ping does not
answer (405) and an unknown path (404) raise the generated ApiException carrying the error
object, with its code and the request id of the Service-Request-Id header.
Usage: check_generator_python.py <generated package's parent dir> <server origin>."""

import sys

sys.path.insert(0, sys.argv[1])
origin = sys.argv[2]

import partner_api_client as sdk  # noqa: E402
from partner_api_client.models import ErrorEnvelope, Ping, PingObject  # noqa: E402

with sdk.ApiClient(sdk.Configuration(host=f"{origin}/v1")) as client:
    ping = sdk.UtilityApi(client).ping()
    assert isinstance(ping, Ping), ping
    assert ping.pong is True and ping.object == PingObject.PING, ping
    print(f"ok: ping answered pong {ping.pong}")

    for method, path, code, status in [
        ("DELETE", "/ping", "method_not_allowed", 405),
        ("GET", "/pings", "resource_missing", 404),
    ]:
        response = client.call_api(method, f"{origin}/v1{path}")
        response.read()
        try:
            client.response_deserialize(response, {str(status): "ErrorEnvelope"})
            raise AssertionError(f"{method} {path} did not raise")
        except sdk.ApiException as refused:
            assert refused.status == status, refused
            envelope = refused.data
            assert isinstance(envelope, ErrorEnvelope), envelope
            assert envelope.error.code == code, envelope.error
            assert envelope.error.request_id == response.getheader("service-request-id")
            print(f"ok: {status} parsed: code {code}, request id {envelope.error.request_id}")
