// Starts Swagger UI on /docs/ (served by partner-api): the service's own document, no
// "Explore" bar (the base layout), "Try it out" open from the first load, no request
// snippets of its own (each operation has one block of code samples, its x-codeSamples, which
// the plugin below shows), and no validator badge (it would send the document to another
// origin).
// The document's server is `<origin>/v1`, one absolute URL: the public URL the operator
// configured, or the listener's own. This page is always served by the API itself, so
// "Execute" calls the origin (and path prefix) the page came from, whatever name reached it
// (the page may only talk to its own origin).
// The page has one title, its own heading: Swagger UI's (the document's title and version
// badges) is hidden by docs.css, and the contract version is written under the heading.
// Swagger UI leaves a few controls without an accessible name and puts the operation's
// deep link inside the button that expands it; the observer below names them and takes the
// link's href away (the address bar still follows the open operation: deepLinking).
// Each operation shows its code samples (the document's x-codeSamples: curl, Python,
// TypeScript) above its responses, one language at a time, and lists the shared error
// responses compactly (sharedErrorsPlugin below) instead of a full block with header tables
// for each of them.
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

// The error responses each operation shares with every other (a `$ref` to
// components/responses), read from the document before Swagger UI resolves the references:
// shared[path][method] lists {status, name}. The operation's own responses (its success) keep
// Swagger UI's full rendering.
function sharedResponses(document) {
  var shared = {};
  var prefix = "#/components/responses/";
  Object.keys(document.paths || {}).forEach(function (path) {
    shared[path] = {};
    var item = document.paths[path];
    Object.keys(item).forEach(function (method) {
      var responses = item[method] && item[method].responses;
      if (!responses) return;
      shared[path][method] = Object.keys(responses).filter(function (status) {
        var ref = responses[status].$ref;
        return typeof ref === "string" && ref.indexOf(prefix) === 0;
      }).map(function (status) {
        return { status: status, name: responses[status].$ref.slice(prefix.length) };
      });
    });
  });
  return shared;
}

// One line per shared error status: the codes it carries, each linking to its entry on
// /docs/errors, and the headers it adds to those every answer carries. A headers-only twin
// (HEAD) reads the codes of its full form. A response without content is a balancer's (502,
// 503, 504): those are one line, pointing to the guide's retries.
function sharedErrorLines(document, entries) {
  var components = (document.components && document.components.responses) || {};
  var common = ["Cache-Control", "RateLimit", "RateLimit-Policy", "Service-Request-Id"];
  var lines = [];
  var balancer = [];
  entries.forEach(function (entry) {
    var full = components[entry.name.replace(/HeadersOnly$/, "")] || components[entry.name] || {};
    var content = full.content && full.content["application/json"];
    if (!content) {
      balancer.push(entry.status);
      return;
    }
    if (entry.status === "default") {
      lines.push({ status: "any other status", codes: [], headers: [], text: "the error envelope; act on its type and code" });
      return;
    }
    var codes = Object.keys(content.examples || {});
    var extra = Object.keys(full.headers || {}).filter(function (name) {
      return common.indexOf(name) < 0;
    });
    lines.push({ status: entry.status, codes: codes, headers: extra });
  });
  return { lines: lines, balancer: balancer };
}

function sharedErrorsPlugin(document, shared) {
  return function (system) {
    var React = system.React;
    var h = React.createElement;
    var codeLink = function (code) {
      return h("a", { key: code, href: "errors#" + code }, h("code", null, code));
    };
    var join = function (items) {
      var out = [];
      items.forEach(function (item, index) {
        if (index > 0) out.push(", ");
        out.push(item);
      });
      return out;
    };
    function CodeSamples(props) {
      var samples = props.samples;
      var state = React.useState(0);
      var chosen = samples[state[0]] || samples[0];
      return h("section", { className: "code-samples" },
        h("h4", null, "Code samples"),
        h("div", { className: "code-sample-languages", role: "group", "aria-label": "Language" },
          samples.map(function (sample, index) {
            return h("button", {
              key: sample.label,
              type: "button",
              className: "btn code-sample-language",
              "aria-pressed": index === state[0] ? "true" : "false",
              onClick: function () { state[1](index); },
            }, sample.label);
          })),
        h("pre", { className: "code-sample", tabIndex: 0, "aria-label": chosen.label + " sample" },
          h("code", null, chosen.source)));
    }
    function SharedErrors(props) {
      var read = sharedErrorLines(document, props.entries);
      var items = read.lines.map(function (line) {
        var parts = [h("strong", { key: "status" }, line.status), " "].concat(join(line.codes.map(codeLink)));
        if (line.text) parts.push(line.text);
        if (line.headers.length > 0) {
          parts.push(" (with ", join(line.headers.map(function (name) {
            return h("code", { key: name }, name);
          })), ")");
        }
        return h("li", { key: line.status }, parts);
      });
      if (read.balancer.length > 0) {
        items.push(h("li", { key: "balancer" },
          h("strong", null, read.balancer.join(", ")),
          " from a balancer in front of the service, not the service: the body, often HTML, is not the envelope; retry with backoff (",
          h("a", { href: "guide#retries-and-backoff" }, "the guide"), ")"));
      }
      return h("section", { className: "shared-errors" },
        h("h4", null, "Errors"),
        h("p", null, "Every error the service answers has the ",
          h("a", { href: "errors" }, "error envelope"),
          " as its body and the headers every answer carries (",
          join(["Service-Request-Id", "Cache-Control", "RateLimit", "RateLimit-Policy"].map(function (name) {
            return h("code", { key: name }, name);
          })),
          "). Each code is explained, with what to do, on ", h("a", { href: "errors" }, "the errors page"), "."),
        h("ul", null, items));
    }
    return {
      wrapComponents: {
        responses: function (Original) {
          return function (props) {
            var entries = (shared[props.path] || {})[props.method] || [];
            var statuses = entries.map(function (entry) { return entry.status; });
            var own = props.responses.filter(function (value, status) {
              return statuses.indexOf(String(status)) < 0;
            });
            var operation = (document.paths[props.path] || {})[props.method] || {};
            var samples = operation["x-codeSamples"] || [];
            return h("div", null,
              samples.length > 0 ? h(CodeSamples, { samples: samples }) : null,
              h(Original, Object.assign({}, props, { responses: own })),
              entries.length > 0 ? h(SharedErrors, { entries: entries }) : null);
          };
        },
      },
    };
  };
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
  name("textarea.body-param__text", "Request body (JSON)");
  // Each operation's documented responses are a live region of their own: one name each, so
  // that no two landmarks read alike once several operations are open.
  name("table.responses-table[role=region]", function (table) {
    return "Responses of " + table.id.replace(/_responses$/, "");
  });
  // A block of code that scrolls (a long answer) is reached with the keyboard too.
  root.querySelectorAll(".highlight-code pre:not([tabindex])").forEach(function (block) {
    if (block.scrollHeight > block.clientHeight || block.scrollWidth > block.clientWidth) {
      block.setAttribute("tabindex", "0");
    }
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
      var shared = sharedResponses(document);
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
        requestSnippetsEnabled: false,
        validatorUrl: null,
        presets: [SwaggerUIBundle.presets.apis],
        plugins: [sharedErrorsPlugin(document, shared)],
      });
    })
    .catch(function (error) {
      var target = window.document.getElementById("swagger-ui");
      target.textContent = "The reference could not load the OpenAPI document (" + error.message +
        "). It is at ../openapi/v1.json.";
    });
});
