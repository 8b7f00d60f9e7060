// Calls the service through the typescript-axios client openapi-generator generated from the
// 3.0.3 document a server serves, through the stand-in balancer that document names as its
// server (scripts/check-sdks), so the client's default base path is the balancer; tsc
// type-checks it (strict), then node runs it: ping is a ping object with pong true; an unknown
// path (the base path <origin>/nowhere/v1, given to that one call) is a 404 read as the
// generated ErrorEnvelope, code resource_missing; on a server with a tiny quota, pings until
// one is refused (at most 20) give a 429 read the same way, code rate_limited, with a
// Retry-After of whole seconds, at least 1; the balancer's HTML 503 is an AxiosError with
// status 503 and the HTML as its data, a value to retry; and after Retry-After seconds the
// retried ping answers again. Each error's request id has the documented form and is the one
// the Service-Request-Id header carries.
// PARTNER_API_ORIGIN: the stand-in's origin, the one the served document names.
import { isAxiosError, type AxiosResponse } from "axios";
import { BASE_PATH } from "./generated/base.js";
import {
  PingObject,
  UtilityApi,
  UtilityApiFp,
  type ErrorEnvelope,
  type Ping,
} from "./generated/index.js";

const REQUEST_ID = /^req_[0-9a-f]{32}$/;

function fail(message: string): never {
  console.error(`FAIL: typescript-axios client: ${message}`);
  process.exit(1);
}

const origin = process.env.PARTNER_API_ORIGIN;
if (!origin) fail("PARTNER_API_ORIGIN is not set");
if (BASE_PATH !== `${origin}/v1`) {
  fail(`the generated base path is ${BASE_PATH}, expected ${origin}/v1: not generated from this server's document?`);
}

// A refused call: the status must be `status`, and the body, as the generated ErrorEnvelope,
// must have `code` and a request id of the documented form that the header repeats.
function refusal(what: string, caught: unknown, status: number, code: string): [ErrorEnvelope, AxiosResponse<ErrorEnvelope>] {
  if (!isAxiosError<ErrorEnvelope>(caught) || caught.response === undefined) {
    fail(`${what}: no error answer: ${describe(caught)}`);
  }
  const response = caught.response;
  const envelope: ErrorEnvelope = response.data;
  if (response.status !== status) {
    fail(`${what}: status ${response.status}, expected ${status}: ${JSON.stringify(envelope)}`);
  }
  if (envelope.error.code !== code) {
    fail(`${what}: code ${envelope.error.code}, expected ${code}`);
  }
  const requestId: string = envelope.error.request_id;
  if (!REQUEST_ID.test(requestId)) {
    fail(`${what}: request_id ${requestId} does not match ${REQUEST_ID}`);
  }
  if (response.headers["service-request-id"] !== requestId) {
    fail(`${what}: request_id ${requestId}, but the Service-Request-Id header is ${response.headers["service-request-id"]}`);
  }
  return [envelope, response];
}

// What went wrong, in one line: axios errors print the whole request otherwise.
function describe(caught: unknown): string {
  if (isAxiosError(caught)) {
    return caught.response === undefined
      ? `${caught.code ?? "error"}: ${caught.message}`
      : `${caught.response.status} ${JSON.stringify(caught.response.data)}`;
  }
  return String(caught);
}

const api = new UtilityApi();

const answer = await api.ping().catch((caught: unknown) => fail(`ping: ${describe(caught)}`));
const ping: Ping = answer.data;
if (answer.status !== 200 || ping.object !== PingObject.Ping || ping.pong !== true) {
  fail(`unexpected ping answer: ${answer.status} ${JSON.stringify(ping)}`);
}
console.log(`ok: typescript-axios: ping answered pong ${ping.pong}`);

// The base path for this one call only: <origin>/nowhere/v1/ping is no path.
try {
  const request = await UtilityApiFp().ping();
  await request(undefined, `${origin}/nowhere/v1`);
  fail("unknown path: answered without an error");
} catch (caught) {
  const [envelope] = refusal("unknown path", caught, 404, "resource_missing");
  console.log(`ok: typescript-axios: 404 read: code ${envelope.error.code}, request id ${envelope.error.request_id}`);
}

let retryAfterSeconds = NaN;
for (let attempt = 1; ; attempt++) {
  try {
    await api.ping();
  } catch (caught) {
    const [envelope, response] = refusal("refused ping", caught, 429, "rate_limited");
    const header: unknown = response.headers["retry-after"];
    const retryAfter = typeof header === "string" && /^[0-9]+$/.test(header) ? Number(header) : NaN;
    if (!(retryAfter >= 1)) {
      fail(`refused ping: Retry-After ${String(header)} is not a whole number of seconds >= 1`);
    }
    console.log(
      `ok: typescript-axios: 429 read after ${attempt} pings: code ${envelope.error.code}, ` +
        `request id ${envelope.error.request_id}, Retry-After ${retryAfter}`,
    );
    retryAfterSeconds = retryAfter;
    break;
  }
  if (attempt === 20) fail("20 pings in a row were answered: is the server's quota tiny?");
}

await fetch(`${origin}/standin/unavailable`, { method: "POST" });
try {
  await api.ping();
  fail("the balancer's 503 was answered as a ping");
} catch (caught) {
  const status = isAxiosError(caught) ? caught.response?.status : undefined;
  const data: unknown = isAxiosError(caught) ? caught.response?.data : undefined;
  if (status !== 503 || typeof data !== "string" || !data.startsWith("<html>")) {
    fail(`the balancer's 503: ${describe(caught)}`);
  }
}
console.log("ok: typescript-axios: the balancer's HTML 503 is an AxiosError to retry, its body left as text");

await new Promise((resolve) => setTimeout(resolve, retryAfterSeconds * 1000));
const again = await api.ping().catch((caught: unknown) => fail(`retried ping: ${describe(caught)}`));
if (again.data.pong !== true) fail(`retried ping: ${JSON.stringify(again.data)}`);
console.log("ok: typescript-axios: the retried ping answered");
