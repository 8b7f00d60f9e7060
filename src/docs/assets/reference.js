// Starts Swagger UI on /docs/ (served by partner-api): the service's own document, no
// "Explore" bar (the base layout), "Try it out" open from the first load, curl snippets of
// each request, and no validator badge (it would send the document to another origin).
// The document's server is `<origin>/v1`, one absolute URL: the public URL the operator
// configured, or the listener's own. This page is always served by the API itself, so
// "Execute" calls the origin (and path prefix) the page came from, whatever name reached it
// (the page may only talk to its own origin).
// The page has one title, its own heading: Swagger UI's (the document's title and version
// badges) is hidden by docs.css, and the contract version is written under the heading.
// Swagger UI leaves a few controls without an accessible name and puts the operation's
// deep link inside the button that expands it; the observer below names them and takes the
// link's href away (the address bar still follows the open operation: deepLinking).
// Dark as the reader's system asks (prefers-color-scheme), and following it when it changes:
// Swagger UI's own dark theme is switched by a class on <html>; the service's styles follow the
// media query itself (docs.css). Set before Swagger UI draws, so nothing flashes light first.
(function followColourScheme() {
  if (!window.matchMedia) return;
  var dark = window.matchMedia("(prefers-color-scheme: dark)");
  var apply = function () { window.document.documentElement.classList.toggle("dark-mode", dark.matches); };
  apply();
  if (dark.addEventListener) dark.addEventListener("change", apply);
})();

function showContractVersion(document) {
  var header = window.document.querySelector("header.reference");
  if (!header || !document.info || !document.info.version) return;
  var line = window.document.createElement("p");
  line.className = "contract-version";
  var version = window.document.createElement("strong");
  version.textContent = document.info.version;
  line.append("Contract version ", version,
    document.openapi ? " (OpenAPI " + document.openapi + ")" : "");
  header.querySelector("h1").after(line);
}

// The schemas no operation uses (the list envelope, its parameters and the id, published in
// the document for the endpoints to come) are left out of the page's schema list: a reader
// would look for the operation that returns them. The document itself keeps them.
function withUsedSchemasOnly(document) {
  var schemas = document.components && document.components.schemas;
  if (!schemas) return;
  var prefix = "#/components/schemas/";
  var used = {};
  // Everything but the schemas themselves (paths, webhooks, every other component) may
  // refer to a schema; the schemas found are then searched in turn.
  var rest = Object.assign({}, document, {
    components: Object.assign({}, document.components, { schemas: {} }),
  });
  var pending = [JSON.stringify(rest)];
  while (pending.length > 0) {
    var text = pending.pop();
    var at = text.indexOf(prefix);
    while (at >= 0) {
      var end = text.indexOf('"', at);
      var name = decodeURIComponent(text.slice(at + prefix.length, end));
      if (!used[name] && schemas[name]) {
        used[name] = true;
        pending.push(JSON.stringify(schemas[name]));
      }
      at = text.indexOf(prefix, end);
    }
  }
  Object.keys(schemas).forEach(function (name) {
    if (!used[name]) delete schemas[name];
  });
}

function nameControls(root) {
  function name(selector, label) {
    root.querySelectorAll(selector).forEach(function (element) {
      if (!element.hasAttribute("aria-label")) {
        element.setAttribute("aria-label", typeof label === "function" ? label(element) : label);
      }
    });
  }
  name(".copy-to-clipboard > button", "Copy to clipboard");
  name("select#servers", "Server");
  name("select.examples-select-element", "Example");
  name("input[data-variable]", function (input) {
    return "Server variable " + input.getAttribute("data-variable");
  });
  root.querySelectorAll(".opblock-summary-control a[href]").forEach(function (link) {
    link.removeAttribute("href");
  });
}

window.addEventListener("load", function () {
  var apiBase = new URL("..", window.location.href).href.replace(/\/$/, "");
  fetch("../openapi/v1.json", { credentials: "same-origin" })
    .then(function (answer) {
      if (!answer.ok) throw new Error("the OpenAPI document answered " + answer.status);
      return answer.json();
    })
    .then(function (document) {
      showContractVersion(document);
      var target = window.document.getElementById("swagger-ui");
      nameControls(target);
      new MutationObserver(function () { nameControls(target); })
        .observe(target, { childList: true, subtree: true });
      withUsedSchemasOnly(document);
      // The document names the origin it was served for; links to the guide and to support
      // follow the page's origin like "Execute" does.
      var served = document.servers && document.servers[0] &&
        document.servers[0].url.slice(0, document.servers[0].url.lastIndexOf("/"));
      var here = function (url) {
        return served && url && url.indexOf(served + "/") === 0 ? apiBase + url.slice(served.length) : url;
      };
      if (document.externalDocs) document.externalDocs.url = here(document.externalDocs.url);
      if (document.info && document.info.contact) {
        document.info.contact.url = here(document.info.contact.url);
      }
      (document.servers || []).forEach(function (server) {
        server.url = apiBase + server.url.slice(server.url.lastIndexOf("/"));
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
