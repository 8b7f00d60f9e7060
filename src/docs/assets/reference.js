// Starts Swagger UI on /docs/ (served by partner-api): the service's own document, no
// "Explore" bar (the base layout), "Try it out" open from the first load, curl snippets of
// each request, and no validator badge (it would send the document to another origin).
// The document's server is `{origin}/v1`; its default origin is the public URL the operator
// configured, or an example one. This page is always served by the API itself, so "Execute"
// calls the origin (and path prefix) the page came from.
window.addEventListener("load", function () {
  var apiBase = new URL("..", window.location.href).href.replace(/\/$/, "");
  fetch("../openapi/v1.json", { credentials: "same-origin" })
    .then(function (answer) {
      if (!answer.ok) throw new Error("the OpenAPI document answered " + answer.status);
      return answer.json();
    })
    .then(function (document) {
      (document.servers || []).forEach(function (server) {
        if (server.variables && server.variables.origin) {
          server.variables.origin["default"] = apiBase;
        }
      });
      window.ui = SwaggerUIBundle({
        spec: document,
        dom_id: "#swagger-ui",
        layout: "BaseLayout",
        deepLinking: true,
        displayOperationId: true,
        defaultModelsExpandDepth: 1,
        tryItOutEnabled: true,
        requestSnippetsEnabled: true,
        validatorUrl: null,
        presets: [SwaggerUIBundle.presets.apis],
      });
    })
    .catch(function (error) {
      var target = window.document.getElementById("swagger-ui");
      target.textContent = "The reference could not load the OpenAPI document (" + error.message +
        "). It is at ../openapi/v1.json.";
    });
});
