// Calls the service through the client @hey-api/openapi-ts generated with its defaults from the
// 3.1 document a server serves, through the stand-in balancer that document names as its server
// (scripts/check-sdks); tsc type-checks it (strict), then node runs it:
// - the generated client's base URL is the document's server, and no call gives one;
// - ping is a ping object with pong true;
// - pings until one is refused (at most 20) give a 429 whose `error` is the generated
//   PingErrors[429], the ErrorEnvelope: code rate_limited, the request id of the
//   Service-Request-Id header, a Retry-After of whole seconds, at least 1;
// - the balancer's HTML 503 is returned as `error` (its text), not thrown: a value to retry;
// - after Retry-After seconds the retried ping answers again.
// PARTNER_API_ORIGIN: the stand-in's origin, the one the served document names.
import { client } from "./client/client.gen.js";
import { ping } from "./client/sdk.gen.js";
import type { Ping, PingErrors } from "./client/types.gen.js";

const REQUEST_ID = /^req_[0-9a-f]{32}$/;

function fail(message: string): never {
  console.error(`FAIL: hey-api client: ${message}`);
  process.exit(1);
}

const origin = process.env.PARTNER_API_ORIGIN;
if (!origin) fail("PARTNER_API_ORIGIN is not set");
const baseUrl = client.getConfig().baseUrl;
if (baseUrl !== `${origin}/v1`) fail(`the generated base URL is ${baseUrl}, expected ${origin}/v1`);

const first = await ping();
const pong: Ping | undefined = first.data;
if (first.response.status !== 200 || pong?.object !== "ping" || pong.pong !== true) {
  fail(`unexpected ping answer: ${first.response.status} ${JSON.stringify(first.data ?? first.error)}`);
}
console.log(`ok: hey-api: ping answered pong ${pong.pong} (base URL ${baseUrl}, none given)`);

let retryAfter = NaN;
for (let attempt = 1; ; attempt++) {
  const { error, response } = await ping();
  if (error !== undefined) {
    if (response.status !== 429) fail(`refused ping: ${response.status} ${JSON.stringify(error)}`);
    const envelope = error as PingErrors[429];
    const requestId = response.headers.get("service-request-id");
    if (envelope.error.code !== "rate_limited") fail(`refused ping: ${JSON.stringify(envelope)}`);
    if (!REQUEST_ID.test(envelope.error.request_id) || envelope.error.request_id !== requestId) {
      fail(`refused ping: request_id ${envelope.error.request_id}, header ${requestId}`);
    }
    const header = response.headers.get("retry-after") ?? "";
    retryAfter = /^[0-9]+$/.test(header) ? Number(header) : NaN;
    if (!(retryAfter >= 1)) fail(`refused ping: Retry-After ${header} is not whole seconds >= 1`);
    console.log(
      `ok: hey-api: 429 read after ${attempt} pings: code ${envelope.error.code}, ` +
        `request id ${envelope.error.request_id}, Retry-After ${retryAfter}`,
    );
    break;
  }
  if (attempt === 20) fail("20 pings in a row were answered: is the server's quota tiny?");
}

const control = await fetch(`${origin}/standin/unavailable`, { method: "POST" });
if (control.status !== 204) fail(`the stand-in refused its control: ${control.status}`);
const unavailable = await ping();
const body: PingErrors[503] = unavailable.error;
if (unavailable.response.status !== 503 || typeof body !== "string" || !body.startsWith("<html>")) {
  fail(`the balancer's 503: ${unavailable.response.status} ${JSON.stringify(body)}`);
}
console.log("ok: hey-api: the balancer's HTML 503 is returned as an error to retry, not thrown");

await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
const again = await ping();
if (again.response.status !== 200 || again.data?.pong !== true) fail(`retried ping: ${again.response.status}`);
console.log("ok: hey-api: the retried ping answered");
