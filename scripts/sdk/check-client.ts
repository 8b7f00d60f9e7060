// Calls ping through openapi-fetch with the types openapi-typescript generated from
// openapi/v1.yaml; tsc type-checks it (strict), then node runs it against a server.
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
