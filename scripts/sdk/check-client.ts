// Calls the service through openapi-fetch with the types openapi-typescript generated from the
// 3.1 document a server serves, through the stand-in balancer that document names as its server
// (scripts/check-sdks); tsc type-checks it (strict), then node runs it:
// - the base URL is the document's server URL as it stands (openapi-typescript generates types
//   only, so openapi-fetch's createClient takes it from the caller: `servers[0].url`, nothing
//   added by hand);
// - ping is a ping object with pong true; an unknown path is a 404 read as the typed
//   ErrorEnvelope (`default`), code resource_missing;
// - pings until one is refused (at most 20) give a 429 whose `error` is the typed ErrorEnvelope,
//   code rate_limited, the request id of the Service-Request-Id header, a Retry-After of whole
//   seconds, at least 1;
// - the balancer's HTML 503 is returned as `error` (its text), not thrown: a value to retry;
// - after Retry-After seconds the retried ping answers again.
// PARTNER_API_ORIGIN: the stand-in's origin; PARTNER_API_DOCUMENT: the served document (JSON).
import { readFileSync } from "node:fs";
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

type ErrorEnvelope = components["schemas"]["ErrorEnvelope"];
const REQUEST_ID = /^req_[0-9a-f]{32}$/;

function fail(message: string): never {
  console.error(`FAIL: openapi-fetch client: ${message}`);
  process.exit(1);
}

const origin = process.env.PARTNER_API_ORIGIN;
const documentPath = process.env.PARTNER_API_DOCUMENT;
if (!origin || !documentPath) fail("PARTNER_API_ORIGIN and PARTNER_API_DOCUMENT must be set");
const document = JSON.parse(readFileSync(documentPath, "utf8")) as { servers: Array<{ url: string }> };
const baseUrl = document.servers[0].url;
if (baseUrl !== `${origin}/v1`) fail(`the document's server is ${baseUrl}, expected ${origin}/v1`);
const client = createClient<paths>({ baseUrl });

const first = await client.GET("/ping");
if (first.error !== undefined || first.data === undefined) fail(`ping: ${first.response.status}`);
if (first.response.status !== 200 || first.data.object !== "ping" || first.data.pong !== true) {
  fail(`unexpected ping answer: ${first.response.status} ${JSON.stringify(first.data)}`);
}
console.log(`ok: openapi-fetch: ping answered pong ${first.data.pong} (base URL ${baseUrl})`);

// An unknown path (a client whose base URL is <origin>/nowhere/v1): the 404 is read as the
// typed ErrorEnvelope (ping declares no 404; `default` types it).
const lost = createClient<paths>({ baseUrl: `${origin}/nowhere/v1` });
const missing = await lost.GET("/ping");
const missingEnvelope: ErrorEnvelope | undefined = missing.error;
if (missing.response.status !== 404 || missingEnvelope?.error.code !== "resource_missing" ||
  missingEnvelope.error.request_id !== missing.response.headers.get("service-request-id")) {
  fail(`unknown path: ${missing.response.status} ${JSON.stringify(missing.error)}`);
}
console.log(`ok: openapi-fetch: 404 read: code resource_missing, request id ${missingEnvelope.error.request_id}`);

let retryAfter = NaN;
for (let attempt = 1; ; attempt++) {
  const { error, response } = await client.GET("/ping");
  if (error !== undefined) {
    const envelope: ErrorEnvelope = error;
    const requestId = response.headers.get("service-request-id");
    if (response.status !== 429 || envelope.error.code !== "rate_limited") {
      fail(`refused ping: ${response.status} ${JSON.stringify(envelope)}`);
    }
    if (!REQUEST_ID.test(envelope.error.request_id) || envelope.error.request_id !== requestId) {
      fail(`refused ping: request_id ${envelope.error.request_id}, header ${requestId}`);
    }
    const header = response.headers.get("retry-after") ?? "";
    retryAfter = /^[0-9]+$/.test(header) ? Number(header) : NaN;
    if (!(retryAfter >= 1)) fail(`refused ping: Retry-After ${header} is not whole seconds >= 1`);
    console.log(
      `ok: openapi-fetch: 429 read after ${attempt} pings: code ${envelope.error.code}, ` +
        `request id ${envelope.error.request_id}, Retry-After ${retryAfter}`,
    );
    break;
  }
  if (attempt === 20) fail("20 pings in a row were answered: is the server's quota tiny?");
}

const control = await fetch(`${origin}/standin/unavailable`, { method: "POST" });
if (control.status !== 204) fail(`the stand-in refused its control: ${control.status}`);
const unavailable = await client.GET("/ping");
const body: unknown = unavailable.error;
if (unavailable.response.status !== 503 || typeof body !== "string" || !body.startsWith("<html>")) {
  fail(`the balancer's 503: ${unavailable.response.status} ${JSON.stringify(body)}`);
}
console.log("ok: openapi-fetch: the balancer's HTML 503 is returned as an error to retry, not thrown");

await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
const again = await client.GET("/ping");
if (again.response.status !== 200 || again.data?.pong !== true) fail(`retried ping: ${again.response.status}`);
console.log("ok: openapi-fetch: the retried ping answered");
