// Calls the service through openapi-fetch with the types openapi-typescript generated from
// openapi/v1.yaml; tsc type-checks it (strict), then node runs it against a server: ping is a
// ping object with pong true, and a method ping does not answer (405) and an unknown path (404)
// are read as the error object, with its code and the request id of the response header.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

type ErrorEnvelope = components["schemas"]["ErrorEnvelope"];

const origin = process.env.PARTNER_API_ORIGIN;
if (!origin) throw new Error("PARTNER_API_ORIGIN is not set");
const client = createClient<paths>({ baseUrl: `${origin}/v1` });

const { data, error, response } = await client.GET("/ping");
if (error !== undefined) {
  const envelope: ErrorEnvelope = error;
  throw new Error(`ping failed: ${envelope.error.code} (${envelope.error.request_id})`);
}
const pong: boolean = data.pong;
if (response.status !== 200 || data.object !== "ping" || pong !== true) {
  throw new Error(`unexpected ping answer: ${response.status} ${JSON.stringify(data)}`);
}
console.log(`ok: ping answered pong ${pong} (${response.headers.get("service-request-id")})`);

// Paths and methods outside the document: the error body is the same documented object.
const checks: Array<[string, string, string, number]> = [
  ["DELETE", "/v1/ping", "method_not_allowed", 405],
  ["GET", "/v1/pings", "resource_missing", 404],
];
for (const [method, path, code, status] of checks) {
  const answer = await fetch(`${origin}${path}`, { method });
  const envelope = (await answer.json()) as ErrorEnvelope;
  const requestId = answer.headers.get("service-request-id");
  if (answer.status !== status || envelope.error.code !== code || envelope.error.request_id !== requestId) {
    throw new Error(`unexpected ${method} ${path} answer: ${answer.status} ${JSON.stringify(envelope)}`);
  }
  console.log(`ok: ${status} read: code ${envelope.error.code}, request id ${envelope.error.request_id}`);
}
