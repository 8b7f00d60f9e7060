//! The code samples every operation carries, as `x-codeSamples` (the extension Redocly and
//! other references read; `/docs/` renders it with a small plugin of its own): the request in
//! curl, in Python with its standard library only, and in TypeScript with `fetch` (Node 20 and
//! later; a sample without a key runs in browsers too), each a whole program that runs as
//! pasted (the TypeScript in any `.ts` file, module or not: no top-level `await`). They are
//! written from the document itself, the operation's method, path, path parameters'
//! examples, body example ([`super::body_examples`]) and security, and the document's server,
//! so a sample never disagrees with the operation it shows, and a served document's samples
//! name the origin it was served for. An operation behind a partner key sends
//! `Authorization: Bearer` with the key from the environment variable `PARTNER_API_KEY`
//! (never a key written into a page); one that takes an `Idempotency-Key` sends a new UUID.
//! CI runs every sample of a served document against a release build
//! (`scripts/check-code-samples`), the keyed ones with a key of their own.

use serde_json::{Value, json};
use utoipa::openapi::path::{Operation, ParameterIn};
use utoipa::openapi::{OpenApi, RefOr};

/// The extension's name, as Redocly reads it.
pub const EXTENSION: &str = "x-codeSamples";

/// Seconds each sample waits for an answer: a sample a partner copies has a deadline too.
const TIMEOUT_SECS: u32 = 10;

/// Writes the samples of every operation of `document`, whose paths are relative to
/// `base_url` (the server's URL), replacing any it had.
pub fn add_to(document: &mut OpenApi, base_url: &str) {
    for (path, item) in &mut document.paths.paths {
        let operations = [
            ("GET", &mut item.get),
            ("PUT", &mut item.put),
            ("POST", &mut item.post),
            ("DELETE", &mut item.delete),
            ("OPTIONS", &mut item.options),
            ("HEAD", &mut item.head),
            ("PATCH", &mut item.patch),
            ("TRACE", &mut item.trace),
        ];
        for (method, operation) in operations {
            if let Some(operation) = operation {
                let request = Request::of(method, base_url, path, operation);
                operation
                    .extensions
                    .get_or_insert_with(Default::default)
                    .insert(EXTENSION.to_owned(), request.samples());
            }
        }
    }
}

/// The environment variable a sample reads the partner key from.
const KEY_VARIABLE: &str = "PARTNER_API_KEY";

/// What a sample sends: the method, the URL with its path parameters filled in, the JSON
/// body, if the operation takes one, the key if it needs one, and an `Idempotency-Key` if it
/// takes one.
struct Request {
    method: &'static str,
    url: String,
    body: Option<String>,
    keyed: bool,
    idempotent: bool,
}

impl Request {
    fn of(method: &'static str, base_url: &str, path: &str, operation: &Operation) -> Request {
        let mut url = format!("{base_url}{path}");
        for parameter in operation.parameters.iter().flatten() {
            let RefOr::T(parameter) = parameter else {
                continue;
            };
            if parameter.parameter_in == ParameterIn::Path
                && let Some(example) = parameter_example(parameter)
            {
                url = url.replace(
                    &format!("{{{}}}", parameter.name),
                    &percent_encoded(&example),
                );
            }
        }
        let body = operation
            .request_body
            .as_ref()
            .and_then(|body| match body {
                RefOr::T(body) => body.content.get("application/json"),
                RefOr::Ref(_) => None,
            })
            .and_then(|content| match content {
                RefOr::T(content) => content.example.clone(),
                RefOr::Ref(_) => None,
            })
            .map(|example| example.to_string());
        let keyed = super::needs_key(operation);
        let idempotent = operation.parameters.iter().flatten().any(|parameter| {
            matches!(parameter, RefOr::T(parameter)
                if parameter.parameter_in == ParameterIn::Header
                    && parameter.name == crate::edge::header::IDEMPOTENCY_KEY)
        });
        Request {
            method,
            url,
            body,
            keyed,
            idempotent,
        }
    }

    fn samples(&self) -> Value {
        json!([
            {"lang": "Shell", "label": "curl", "source": self.curl()},
            {"lang": "Python", "label": "Python", "source": self.python()},
            {"lang": "TypeScript", "label": "TypeScript", "source": self.typescript()},
        ])
    }

    fn has_body_answer(&self) -> bool {
        self.method != "HEAD"
    }

    /// `--include` shows the answer's headers (the request id, the quota) above its body.
    fn curl(&self) -> String {
        let mut command = format!("curl --silent --show-error --max-time {TIMEOUT_SECS}");
        match self.method {
            "HEAD" => command.push_str(" --head"),
            "GET" => command.push_str(" --include"),
            method => command.push_str(&format!(" --include --request {method}")),
        }
        if self.keyed {
            // An unset variable stops the shell with the reason, rather than send no key.
            command.push_str(&format!(
                " \\\n  --header \"Authorization: Bearer ${{{KEY_VARIABLE}:?set {KEY_VARIABLE} to your key}}\""
            ));
        }
        if self.idempotent {
            command.push_str(" \\\n  --header \"Idempotency-Key: $(uuidgen)\"");
        }
        if let Some(body) = &self.body {
            command.push_str(&format!(
                " \\\n  --header 'Content-Type: application/json' --data '{}'",
                body.replace('\'', r"'\''")
            ));
        }
        command.push_str(&format!(" \\\n  '{}'\n", self.url.replace('\'', r"'\''")));
        command
    }

    /// The standard library only, so the sample runs wherever Python 3 does; an error answer
    /// (4xx, 5xx) is printed too, not raised, with its request id.
    fn python(&self) -> String {
        let mut imports = Vec::new();
        if self.body.is_some() || self.has_body_answer() {
            imports.push("import json");
        }
        if self.keyed {
            imports.push("import os");
        }
        imports.extend(["import urllib.error", "import urllib.request"]);
        if self.idempotent {
            imports.push("import uuid");
        }
        let mut source = imports.join("\n");
        source.push_str("\n\n");
        let mut headers = Vec::new();
        if self.keyed {
            headers.push(format!(
                "\"Authorization\": \"Bearer \" + os.environ[\"{KEY_VARIABLE}\"]"
            ));
        }
        if self.idempotent {
            headers.push("\"Idempotency-Key\": str(uuid.uuid4())".to_owned());
        }
        if self.body.is_some() {
            headers.push("\"Content-Type\": \"application/json\"".to_owned());
        }
        let url = json!(self.url);
        let method = self.method;
        if headers.is_empty() {
            source.push_str(&format!(
                "request = urllib.request.Request({url}, method=\"{method}\")\n"
            ));
        } else {
            source.push_str(&format!(
                "request = urllib.request.Request(\n    {url},\n    method=\"{method}\",\n"
            ));
            if let Some(body) = &self.body {
                source.push_str(&format!(
                    "    data=json.dumps({}).encode(),\n",
                    python_literal(body)
                ));
            }
            source.push_str("    headers={\n");
            for header in headers {
                source.push_str(&format!("        {header},\n"));
            }
            source.push_str("    },\n)\n");
        }
        // JSON only when it is JSON: a balancer in front may answer HTML, a 204 nothing.
        let read = if self.has_body_answer() {
            "\n    body = answer.read()\n    \
             json_body = answer.headers.get_content_type() == \"application/json\"\n    \
             print(json.loads(body) if json_body else body.decode(errors=\"replace\"))"
        } else {
            ""
        };
        source.push_str(&format!(
            "try:\n    answer = urllib.request.urlopen(request, timeout={TIMEOUT_SECS})\n\
             except urllib.error.HTTPError as refused:  # 4xx and 5xx are answers too\n    \
             answer = refused\n\
             with answer:\n    \
             print(answer.status, answer.headers[\"Service-Request-Id\"]){read}\n"
        ));
        source
    }

    /// `fetch`, with a deadline, inside an async function called at once: pasted into any
    /// `.ts` file, module or not, it runs (top-level `await` needs a module). The body is
    /// read as JSON only when it is JSON (a balancer in front may answer HTML).
    fn typescript(&self) -> String {
        let mut options = format!("    method: \"{}\",\n", self.method);
        let mut headers = Vec::new();
        if self.keyed {
            headers.push("Authorization: `Bearer ${key}`".to_owned());
        }
        if self.idempotent {
            headers.push("\"Idempotency-Key\": crypto.randomUUID()".to_owned());
        }
        if self.body.is_some() {
            headers.push("\"Content-Type\": \"application/json\"".to_owned());
        }
        if !headers.is_empty() {
            options.push_str("    headers: {\n");
            for header in headers {
                options.push_str(&format!("      {header},\n"));
            }
            options.push_str("    },\n");
        }
        if let Some(body) = &self.body {
            options.push_str(&format!("    body: JSON.stringify({body}),\n"));
        }
        options.push_str(&format!(
            "    signal: AbortSignal.timeout({}),\n",
            TIMEOUT_SECS * 1000
        ));
        let mut source = String::from("void (async () => {\n");
        if self.keyed {
            source.push_str(&format!(
                "  const key = process.env.{KEY_VARIABLE};\n  \
                 if (!key) throw new Error(\"set {KEY_VARIABLE} to your key\");\n"
            ));
        }
        source.push_str(&format!(
            "  const answer = await fetch({url}, {{\n{options}  }});\n  \
             console.log(answer.status, answer.headers.get(\"Service-Request-Id\"));\n",
            url = json!(self.url),
        ));
        if self.has_body_answer() {
            source.push_str(
                "  const json = answer.headers.get(\"Content-Type\")?.startsWith(\"application/json\");\n  \
                 console.log(json ? await answer.json() : await answer.text());\n",
            );
        }
        source.push_str("})();\n");
        source
    }
}

/// A parameter's example (`#[param(example = ...)]`, which utoipa keeps on the parameter and
/// writes only when serialized), else its schema's first; a test holds that every path
/// parameter of the test build's endpoints has one, so no sample keeps a `{name}`.
fn parameter_example(parameter: &utoipa::openapi::path::Parameter) -> Option<String> {
    let parameter = serde_json::to_value(parameter).ok()?;
    let schema = parameter.get("schema");
    let example = parameter
        .get("example")
        .or_else(|| schema.and_then(|schema| schema.get("examples")?.get(0)))
        .or_else(|| schema.and_then(|schema| schema.get("example")))?;
    Some(match example {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    })
}

/// `value` as one path segment: every byte but RFC 3986's unreserved characters
/// percent-encoded, so that the three languages send the same bytes.
fn percent_encoded(value: &str) -> String {
    value
        .bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(byte).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// A JSON text as the Python literal `json.loads` would give: the same text but for `true`,
/// `false` and `null`, which Python spells `True`, `False` and `None`.
fn python_literal(json_text: &str) -> String {
    let value: Value = serde_json::from_str(json_text).expect("the body example is JSON");
    fn write(value: &Value) -> String {
        match value {
            Value::Null => "None".to_owned(),
            Value::Bool(true) => "True".to_owned(),
            Value::Bool(false) => "False".to_owned(),
            Value::Number(number) => number.to_string(),
            Value::String(_) => value.to_string(),
            Value::Array(items) => {
                format!(
                    "[{}]",
                    items.iter().map(write).collect::<Vec<_>>().join(", ")
                )
            }
            Value::Object(fields) => format!(
                "{{{}}}",
                fields
                    .iter()
                    .map(|(key, value)| format!("{}: {}", Value::from(key.as_str()), write(value)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
    write(&value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: &'static str, body: Option<&str>) -> Request {
        Request {
            method,
            url: "https://api.example.com/v1/things/th_1".to_owned(),
            body: body.map(str::to_owned),
            keyed: false,
            idempotent: false,
        }
    }

    #[test]
    fn a_get_is_shown_with_its_headers_in_every_language() {
        let get = request("GET", None);
        assert_eq!(
            get.curl(),
            "curl --silent --show-error --max-time 10 --include \\\n  'https://api.example.com/v1/things/th_1'\n"
        );
        assert_eq!(
            get.python(),
            "import json\nimport urllib.error\nimport urllib.request\n\n\
             request = urllib.request.Request(\"https://api.example.com/v1/things/th_1\", method=\"GET\")\n\
             try:\n    answer = urllib.request.urlopen(request, timeout=10)\n\
             except urllib.error.HTTPError as refused:  # 4xx and 5xx are answers too\n    answer = refused\n\
             with answer:\n    print(answer.status, answer.headers[\"Service-Request-Id\"])\n    \
             body = answer.read()\n    json_body = answer.headers.get_content_type() == \"application/json\"\n    \
             print(json.loads(body) if json_body else body.decode(errors=\"replace\"))\n"
        );
        assert_eq!(
            get.typescript(),
            "void (async () => {\n  \
             const answer = await fetch(\"https://api.example.com/v1/things/th_1\", {\n    \
             method: \"GET\",\n    signal: AbortSignal.timeout(10000),\n  });\n  \
             console.log(answer.status, answer.headers.get(\"Service-Request-Id\"));\n  \
             const json = answer.headers.get(\"Content-Type\")?.startsWith(\"application/json\");\n  \
             console.log(json ? await answer.json() : await answer.text());\n})();\n"
        );
    }

    #[test]
    fn path_values_are_percent_encoded_and_quotes_escaped() {
        assert_eq!(percent_encoded("th_0001"), "th_0001");
        assert_eq!(percent_encoded("a b/é'"), "a%20b%2F%C3%A9%27");
        let quoted = Request {
            url: "https://api.example.com/v1/it's".to_owned(),
            ..request("GET", None)
        };
        assert!(quoted.curl().ends_with(
            r"'https://api.example.com/v1/it'\''s'
"
        ));
    }

    #[test]
    fn a_head_reads_no_body() {
        let head = request("HEAD", None);
        assert!(head.curl().contains(" --head \\\n"));
        assert!(!head.python().contains("json"));
        assert!(!head.typescript().contains("answer.json()"));
    }

    #[test]
    fn a_body_is_sent_as_json_and_quoted_for_each_language() {
        let post = request("POST", Some(r#"{"note":"it's","active":true,"ends":null}"#));
        assert!(post.curl().contains(
            r#"--include --request POST \
  --header 'Content-Type: application/json' --data '{"note":"it'\''s","active":true,"ends":null}'"#
        ));
        assert!(post.python().contains(
            r#"data=json.dumps({"note": "it's", "active": True, "ends": None}).encode(),"#
        ));
        assert!(
            post.typescript()
                .contains(r#"body: JSON.stringify({"note":"it's","active":true,"ends":null}),"#)
        );
    }

    /// A keyed create: the key from the environment, a new `Idempotency-Key`, the body.
    #[test]
    fn a_keyed_operation_sends_the_key_from_the_environment_and_a_new_idempotency_key() {
        let create = Request {
            keyed: true,
            idempotent: true,
            ..request("POST", Some(r#"{"label":"Morning walks"}"#))
        };
        assert_eq!(
            create.curl(),
            "curl --silent --show-error --max-time 10 --include --request POST \\\n  \
             --header \"Authorization: Bearer ${PARTNER_API_KEY:?set PARTNER_API_KEY to your key}\" \\\n  \
             --header \"Idempotency-Key: $(uuidgen)\" \\\n  \
             --header 'Content-Type: application/json' --data '{\"label\":\"Morning walks\"}' \\\n  \
             'https://api.example.com/v1/things/th_1'\n"
        );
        assert!(create.python().starts_with(
            "import json\nimport os\nimport urllib.error\nimport urllib.request\nimport uuid\n\n\
             request = urllib.request.Request(\n    \"https://api.example.com/v1/things/th_1\",\n    \
             method=\"POST\",\n    data=json.dumps({\"label\": \"Morning walks\"}).encode(),\n    \
             headers={\n        \"Authorization\": \"Bearer \" + os.environ[\"PARTNER_API_KEY\"],\n        \
             \"Idempotency-Key\": str(uuid.uuid4()),\n        \"Content-Type\": \"application/json\",\n    },\n)\n"
        ));
        assert!(create.typescript().starts_with(
            "void (async () => {\n  const key = process.env.PARTNER_API_KEY;\n  \
             if (!key) throw new Error(\"set PARTNER_API_KEY to your key\");\n"
        ));
        assert!(create.typescript().contains(
            "    headers: {\n      Authorization: `Bearer ${key}`,\n      \
             \"Idempotency-Key\": crypto.randomUUID(),\n      \"Content-Type\": \"application/json\",\n    },\n"
        ));
    }
}
