// Calls the service through the typescript-fetch client openapi-generator generated from the
// 3.0.3 rendition; tsc type-checks it (strict), then node runs it against a server: ping is a
// ping object with pong true, and a method ping does not answer (405) and an unknown path (404)
// are read as the generated ErrorEnvelope, with its code and the request id header.
import {
  Configuration,
  ErrorEnvelopeFromJSON,
  PingObject,
  UtilityApi,
  type ErrorEnvelope,
  type Ping,
} from "./generated/index.js";

const origin = process.env.PARTNER_API_ORIGIN;
if (!origin) throw new Error("PARTNER_API_ORIGIN is not set");
const api = new UtilityApi(new Configuration({ basePath: `${origin}/v1` }));

const ping: Ping = await api.ping();
if (ping.pong !== true || ping.object !== PingObject.Ping) {
  throw new Error(`unexpected ping answer: ${JSON.stringify(ping)}`);
}
console.log(`ok: ping answered pong ${ping.pong}`);

const checks: Array<[string, string, string, number]> = [
  ["DELETE", "/v1/ping", "method_not_allowed", 405],
  ["GET", "/v1/pings", "resource_missing", 404],
];
for (const [method, path, code, status] of checks) {
  const answer = await fetch(`${origin}${path}`, { method });
  const envelope: ErrorEnvelope = ErrorEnvelopeFromJSON(await answer.json());
  const requestId = answer.headers.get("service-request-id");
  if (answer.status !== status || envelope.error.code !== code || envelope.error.requestId !== requestId) {
    throw new Error(`unexpected ${method} ${path} answer: ${answer.status} ${JSON.stringify(envelope)}`);
  }
  console.log(`ok: ${status} parsed: code ${envelope.error.code}, request id ${envelope.error.requestId}`);
}
