// Calls the service through the typescript-fetch client openapi-generator generated from the
// 3.0.3 document a server serves, through the stand-in balancer that document names as its
// server (scripts/check-sdks); tsc type-checks it (strict), then node runs it:
// - the generated BASE_PATH is the document's server, and the client is made with no
//   configuration;
// - ping is a ping object with pong true;
// - pings until one is refused (at most 20) throw the generated ResponseError, whose response
//   reads into the generated ErrorEnvelope: code rate_limited, the request id of the
//   Service-Request-Id header, a Retry-After of whole seconds, at least 1;
// - the balancer's HTML 503 throws the same ResponseError with status 503: a value to retry,
//   caught like any refusal, its body never parsed;
// - after Retry-After seconds the retried ping answers again.
// PARTNER_API_ORIGIN: the stand-in's origin, the one the served document names.
import {
  BASE_PATH,
  ErrorEnvelopeFromJSON,
  PingObject,
  ResponseError,
  UtilityApi,
  type ErrorEnvelope,
  type Ping,
} from "./generated/index.js";

const REQUEST_ID = /^req_[0-9a-f]{32}$/;

function fail(message: string): never {
  console.error(`FAIL: typescript-fetch client: ${message}`);
  process.exit(1);
}

const origin = process.env.PARTNER_API_ORIGIN;
if (!origin) fail("PARTNER_API_ORIGIN is not set");
if (BASE_PATH !== `${origin}/v1`) fail(`the generated BASE_PATH is ${BASE_PATH}, expected ${origin}/v1`);
const api = new UtilityApi();

// The refusal a call threw: the generated ResponseError, with its response.
async function refusal(call: Promise<unknown>): Promise<Response> {
  try {
    await call;
  } catch (caught) {
    if (caught instanceof ResponseError) return caught.response;
    fail(`a call threw ${String(caught)}, not the generated ResponseError`);
  }
  fail("the call was answered");
}

const ping: Ping = await api.ping();
if (ping.pong !== true || ping.object !== PingObject.Ping) fail(`unexpected ping answer: ${JSON.stringify(ping)}`);
console.log(`ok: typescript-fetch: ping answered pong ${ping.pong} (BASE_PATH ${BASE_PATH}, none given)`);

let retryAfter = NaN;
for (let attempt = 1; ; attempt++) {
  let refused: Response;
  try {
    await api.ping();
    if (attempt === 20) fail("20 pings in a row were answered: is the server's quota tiny?");
    continue;
  } catch (caught) {
    if (!(caught instanceof ResponseError)) fail(`refused ping threw ${String(caught)}`);
    refused = caught.response;
  }
  const envelope: ErrorEnvelope = ErrorEnvelopeFromJSON(await refused.json());
  const requestId = refused.headers.get("service-request-id");
  if (refused.status !== 429 || envelope.error.code !== "rate_limited") {
    fail(`refused ping: ${refused.status} ${JSON.stringify(envelope)}`);
  }
  if (!REQUEST_ID.test(envelope.error.requestId) || envelope.error.requestId !== requestId) {
    fail(`refused ping: request_id ${envelope.error.requestId}, header ${requestId}`);
  }
  const header = refused.headers.get("retry-after") ?? "";
  retryAfter = /^[0-9]+$/.test(header) ? Number(header) : NaN;
  if (!(retryAfter >= 1)) fail(`refused ping: Retry-After ${header} is not whole seconds >= 1`);
  console.log(
    `ok: typescript-fetch: 429 read after ${attempt} pings: code ${envelope.error.code}, ` +
      `request id ${envelope.error.requestId}, Retry-After ${retryAfter}`,
  );
  break;
}

await fetch(`${origin}/standin/unavailable`, { method: "POST" });
const unavailable = await refusal(api.ping());
const body = await unavailable.text();
if (unavailable.status !== 503 || !body.startsWith("<html>")) fail(`the balancer's 503: ${unavailable.status} ${body}`);
console.log("ok: typescript-fetch: the balancer's HTML 503 is a ResponseError to retry, its body not parsed");

await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
const again: Ping = await api.ping();
if (again.pong !== true) fail(`retried ping: ${JSON.stringify(again)}`);
console.log("ok: typescript-fetch: the retried ping answered");
