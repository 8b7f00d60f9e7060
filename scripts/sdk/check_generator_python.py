"""Uses the Python client openapi-generator (`-g python`) generated from the 3.0.3 document a
server serves, through the stand-in balancer that document names as its server
(scripts/check-sdks):

- the generated Configuration's host is the document's server, and the client is made with a
  default Configuration, no host given;
- ping answers a ping object with pong true;
- an unknown path (a second Configuration whose host is <origin>/nowhere/v1) raises the
  generated NotFoundException carrying the ErrorEnvelope: code resource_missing, the request id
  of the Service-Request-Id header;
- five pings in a row are answered although the quota is 2: the client's HTTP library
  (urllib3, whose default the generated client keeps) waits out a 429's Retry-After and sends
  the request again, up to 3 times;
- with those retries off (`retries=False`), pings until one is refused (at most 20) raise the
  generated ApiException carrying the ErrorEnvelope: status 429, code rate_limited, the request
  id of the header, a Retry-After of whole seconds, at least 1;
- the balancer's HTML 503 raises the generated ServiceException with status 503 and no data:
  a value to retry, caught like any refusal, its body never parsed;
- after Retry-After seconds the retried ping answers again.
Usage: check_generator_python.py <generated package's parent dir> <origin>."""

import re
import sys
import time
import urllib.request

sys.path.insert(0, sys.argv[1])
origin = sys.argv[2]

import partner_api_client as sdk  # noqa: E402
from partner_api_client.models import ErrorEnvelope, Ping, PingObject  # noqa: E402

REQUEST_ID = re.compile(r"^req_[0-9a-f]{32}$")

configuration = sdk.Configuration()
assert configuration.host == f"{origin}/v1", configuration.host
with sdk.ApiClient(configuration) as client:
    api = sdk.UtilityApi(client)
    ping = api.ping()
    assert isinstance(ping, Ping), ping
    assert ping.pong is True and ping.object == PingObject.PING, ping
    print(f"ok: openapi-generator python: ping answered pong {ping.pong} (host {configuration.host}, none given)")

    elsewhere = sdk.Configuration(host=f"{origin}/nowhere/v1")
    with sdk.ApiClient(elsewhere) as lost:
        try:
            sdk.UtilityApi(lost).ping()
            raise AssertionError("the unknown path was answered")
        except sdk.exceptions.NotFoundException as missing:
            envelope = missing.data  # checked here: the name `missing` ends with the handler
            assert isinstance(envelope, ErrorEnvelope), envelope
            assert envelope.error.code == "resource_missing", envelope.error
            assert REQUEST_ID.match(envelope.error.request_id), envelope.error
            assert envelope.error.request_id == missing.headers["service-request-id"]
    print(f"ok: openapi-generator python: 404 read: code {envelope.error.code}, request id {envelope.error.request_id}")

    for _ in range(5):
        assert api.ping().pong is True
    print("ok: openapi-generator python: 5 pings answered on a quota of 2: urllib3 waited out each 429's Retry-After")

    strict = sdk.Configuration()
    strict.retries = False
    with sdk.ApiClient(strict) as once:
        for attempt in range(1, 21):
            try:
                sdk.UtilityApi(once).ping()
            except sdk.ApiException as error:
                refused = error  # the name `error` is unbound when the handler ends
                break
        else:
            raise AssertionError("20 pings in a row were answered: is the server's quota tiny?")
    assert refused.status == 429, refused
    envelope = refused.data
    assert isinstance(envelope, ErrorEnvelope), envelope
    assert envelope.error.code == "rate_limited", envelope.error
    assert REQUEST_ID.match(envelope.error.request_id), envelope.error
    assert envelope.error.request_id == refused.headers["service-request-id"], envelope.error
    retry_after = refused.headers["retry-after"]
    assert retry_after.isdigit() and int(retry_after) >= 1, retry_after
    print(
        f"ok: openapi-generator python: 429 read after {attempt} pings: code {envelope.error.code}, "
        f"request id {envelope.error.request_id}, Retry-After {retry_after}"
    )

    urllib.request.urlopen(urllib.request.Request(f"{origin}/standin/unavailable", method="POST"))
    try:
        api.ping()
        raise AssertionError("the balancer's 503 was answered as a ping")
    except sdk.exceptions.ServiceException as unavailable:
        assert unavailable.status == 503, unavailable
        assert unavailable.data is None, unavailable.data
        assert unavailable.body.startswith("<html>"), unavailable.body
    print("ok: openapi-generator python: the balancer's HTML 503 is a ServiceException to retry, nothing parsed")

    time.sleep(int(retry_after))
    again = api.ping()
    assert isinstance(again, Ping) and again.pong is True, again
    print("ok: openapi-generator python: the retried ping answered")
