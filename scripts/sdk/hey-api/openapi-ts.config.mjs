// @hey-api/openapi-ts settings for scripts/check-sdks: its defaults (the fetch client, the SDK
// functions, the types), reading the document PARTNER_API_DOCUMENT names, with one setting of
// the module format, not of the client: imports written with `.js`, which Node's ES modules
// need (the generator's default leaves the extension to a bundler).
export default {
  input: process.env.PARTNER_API_DOCUMENT,
  output: { path: "client", importFileExtension: ".js" },
};
