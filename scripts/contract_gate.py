"""The breaking-change gate: compares two OpenAPI documents and says whether the newer one keeps
every promise of the older (PARTNERS.md, "What v1 promises").

Optic (`optic diff --check`, its standard breaking-changes ruleset) decides most classes:
removed operations, properties and status codes, new required parameters, a parameter or
property becoming required or optional, type changes, request enums narrowed, response enums
widened. Four classes Optic does not check are checked here, each because generated SDKs break
on it: a renamed `operationId` (the generated method is renamed), a removed or renamed component
schema (the generated type disappears), a changed `format` (the generated type changes, e.g.
date-time to date), and a removed response header.

    contract_gate.py check BEFORE AFTER     report; exit 1 on a breaking change
    contract_gate.py changes BEFORE AFTER   the change record as a JSON list of lines, and the
                                            part of it that is no edit of wording
    contract_gate.py fixtures DIR           DIR/breaking/* must fail, DIR/additive/* must pass
    contract_gate.py release DATE NOTE...   record a release: gate both documents against
                                            openapi/released/, append the notes (one sentence
                                            a change, for partners) and the changes to
                                            openapi/changelog.json, regenerate both documents
                                            (their info.version is 1.YYYYMMDD.0) and make them the
                                            new baseline
"""

import datetime
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
OPTIC = os.environ.get("OPTIC", str(ROOT / "scripts/node/node_modules/.bin/optic"))
OPTIC_ENV = dict(os.environ, OPTIC_TELEMETRY_LEVEL="off", NO_COLOR="1", FORCE_COLOR="0")
print = functools.partial(print, flush=True)  # noqa: A001 (in order with optic's output)
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def optic(*args):
    return subprocess.run(
        [OPTIC, "diff", *args], capture_output=True, text=True, env=OPTIC_ENV, timeout=120
    )


def operations(document):
    for path, item in (document.get("paths") or {}).items():
        for method in METHODS:
            if isinstance(item.get(method), dict):
                yield path, method, item[method]


def operation_id_renamed(before, after):
    now = {(path, method): op.get("operationId") for path, method, op in operations(after)}
    for path, method, op in operations(before):
        new_id = now.get((path, method))
        if (path, method) in now and op.get("operationId") != new_id:
            yield (
                f"{method.upper()} {path}: operationId {op.get('operationId')!r} became "
                f"{new_id!r}; generated SDKs name the method after it, so callers stop compiling"
            )


def schema_removed(before, after):
    kept = set(((after.get("components") or {}).get("schemas") or {}))
    for name in (before.get("components") or {}).get("schemas") or {}:
        if name not in kept:
            yield (
                f"components/schemas/{name}: removed or renamed; generated SDKs have a type "
                f"{name} that client code names"
            )


# Keys whose values are data (examples, defaults, enum values): never read as a schema, and a
# `$ref` inside them is data too.
LITERAL_KEYS = {"example", "examples", "default", "const", "enum"}


def pointer(document, location):
    """What `location` (`#/a/b/0`) points to within `document`: JSON Pointer, percent-encoded
    as a URI fragment (RFC 6901, sections 4 and 6)."""
    if not location.startswith("#"):
        raise SystemExit(f"FAIL: {location}: references to other files are not supported")
    target = document
    for part in filter(None, location[1:].split("/")):
        part = urllib.parse.unquote(part).replace("~1", "/").replace("~0", "~")
        if isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        elif isinstance(target, dict) and part in target:
            target = target[part]
        else:
            raise SystemExit(f"FAIL: {location} points at nothing")
    return target


def expand(document, node):
    """`node` with its `$ref` followed (again while the target is one), the keywords beside
    the reference kept over the target's (OpenAPI 3.1 reads them), and the first reference
    followed, or `None` when `node` is none."""
    first = None
    seen = set()
    while isinstance(node, dict) and isinstance(node.get("$ref"), str):
        location = node["$ref"]
        if location in seen:
            break
        seen.add(location)
        first = first or location
        siblings = {key: value for key, value in node.items() if key != "$ref"}
        target = pointer(document, location)
        node = {**target, **siblings} if isinstance(target, dict) else target
    return node, first


def format_changed(before, after, where="#", context=None):
    """Every place both documents have, where the older one gives a `format` the newer one
    drops or changes. References are followed as the walk meets them, so a part moved into
    `components` (or out of it) is still compared with what it was; each pair of places is
    compared once, which bounds the walk however often parts are shared, and ends it on
    recursive schemas."""
    if context is None:
        context = (before, after, set())
    old_document, new_document, compared = context
    original = (before, after)
    before, before_ref = expand(old_document, before)
    after, after_ref = expand(new_document, after)
    if before_ref or after_ref:
        pair = (before_ref or id(original[0]), after_ref or id(original[1]))
        if pair in compared:
            return
        compared.add(pair)
    if isinstance(before, dict) and isinstance(after, dict):
        if "format" in before and not isinstance(before["format"], dict):
            if before["format"] != after.get("format"):
                yield (
                    f"{where}: format {before['format']!r} became {after.get('format')!r}; "
                    f"generated SDKs map a format to a type (date-time, int64, uuid), which changes"
                )
        for key in sorted(before.keys() & after.keys()):
            if key not in LITERAL_KEYS:
                yield from format_changed(before[key], after[key], f"{where}/{key}", context)
    elif isinstance(before, list) and isinstance(after, list):
        for index, (old, new) in enumerate(zip(before, after)):
            yield from format_changed(old, new, f"{where}/{index}", context)


def header_removed(before, after):
    now = {(path, method): op for path, method, op in operations(after)}
    for path, method, op in operations(before):
        new_op = now.get((path, method))
        if new_op is None:
            continue
        for status, response in (op.get("responses") or {}).items():
            response, _ = expand(before, response)
            new_response, _ = expand(after, (new_op.get("responses") or {}).get(status))
            if not isinstance(new_response, dict) or not isinstance(response, dict):
                continue
            kept = {name.lower() for name in (new_response.get("headers") or {})}
            for name in response.get("headers") or {}:
                if name.lower() not in kept:
                    yield (
                        f"{method.upper()} {path} {status}: response header {name} removed; "
                        f"clients read it"
                    )


PROJECT_RULES = {
    "operation id renamed": operation_id_renamed,
    "schema removed or renamed": schema_removed,
    "format changed": format_changed,
    "response header removed": header_removed,
}


def load(path):
    with open(path) as file:
        return yaml.safe_load(file)


def flatten(node, trail=()):
    """Optic's JSON change record as one line per change."""
    name = node.get("name")
    trail = (*trail, name) if name else trail
    where = " > ".join(trail)
    if name and node.get("change") in ("added", "removed"):
        return [f"{where}: {node['change']}"]
    lines = []
    for value in node.values():
        if not isinstance(value, list):
            continue
        for item in value:
            if not isinstance(item, dict):
                continue
            if "key" in item:
                lines.append(f"{where}: {item['key'] or 'itself'} {item['change']}")
            else:
                lines.extend(flatten(item, trail))
    return lines


# Keys that document rather than define: what a client sends and receives is the same
# whatever they say. Removed before a second comparison (a description or summary, which a
# response must have, made the same everywhere instead), so that a release can tell a change
# of the contract from an edit of its wording.
WORDING_KEYS = {"description", "summary", "example", "examples", "x-codeSamples", "externalDocs"}
REQUIRED_WORDING = {"description", "summary"}
# Kept whole: their members are names or values, never wording (security requirements name
# schemes, a discriminator's mapping and dependentRequired name properties).
KEPT_WHOLE = {"security", "mapping", "dependentRequired", "required"}
# Keys whose values map names (a property, a path, a header...) to objects: a member called
# `description` there is a name, not wording, and is kept.
NAME_MAPS = {
    "properties", "patternProperties", "paths", "headers", "responses", "schemas",
    "parameters", "links", "callbacks", "variables", "securitySchemes", "content",
    "encoding", "requestBodies", "$defs", "definitions", "dependentSchemas", "webhooks",
}


def without_wording(node, names=False):
    """`node` without its wording (WORDING_KEYS), literal values (LITERAL_KEYS) left whole."""
    if isinstance(node, list):
        return [without_wording(item) for item in node]
    if not isinstance(node, dict):
        return node
    kept = {}
    for key, value in node.items():
        if not names and key in REQUIRED_WORDING and isinstance(value, str):
            kept[key] = "-"
            continue
        # A schema's `examples` is a list of values it takes; for an open set (the error
        # codes) it is the list of the known ones, and a value added there is a change of the
        # contract. OpenAPI's own `examples` (a map of named examples) is wording.
        if not names and key == "examples" and isinstance(value, list):
            kept[key] = value
            continue
        if not names and key in WORDING_KEYS:
            continue
        if not names and (key in LITERAL_KEYS or key in KEPT_WHOLE):
            kept[key] = value
        else:
            kept[key] = without_wording(value, names=not names and key in NAME_MAPS)
    return kept


def contract_changes(before, after):
    """The changes that are not edits of wording: those still found once both documents have
    lost their descriptions, summaries and examples."""
    with tempfile.TemporaryDirectory() as scratch:
        stripped = []
        for name, document in (("before.yaml", before), ("after.yaml", after)):
            target = Path(scratch, name)
            target.write_text(yaml.safe_dump(without_wording(load(document)), sort_keys=False))
            stripped.append(target)
        return changes(*stripped)


def changes(before, after):
    result = optic(before, after, "--json")
    if result.returncode not in (0, 1):
        raise SystemExit(f"optic could not compare {before} and {after}:\n{result.stderr}")
    # Optic compares operations; a schema published on its own (the list envelope, before any
    # endpoint lists) is a type generated SDKs gain, so it is listed too.
    schemas = [
        set(((load(document).get("components") or {}).get("schemas") or {}))
        for document in (before, after)
    ]
    added = [f"components/schemas/{name}: added" for name in sorted(schemas[1] - schemas[0])]
    return flatten(json.loads(result.stdout)) + added


def check(before, after, quiet=False):
    """Prints the report; returns the rules that found a breaking change."""
    broken = []
    result = optic(before, after, "--check")
    if result.returncode != 0:
        broken.append("optic breaking-changes ruleset")
        if not quiet:
            print(result.stdout.strip() or result.stderr.strip())
    old, new = load(before), load(after)
    for rule, find in PROJECT_RULES.items():
        found = list(find(old, new))
        if found:
            broken.append(rule)
            if not quiet:
                print(f"x [{rule}] (project rule)")
                for line in found:
                    print(f"    {line}. This is a breaking change.")
    return broken


DOCUMENTS = ("v1.yaml", "v1.oas30.yaml")
RELEASED = ROOT / "openapi/released"
RECORD = ROOT / "openapi/changelog.json"


def release(date, notes):
    """Gates both documents against the released ones, appends the notes and the changes of the
    3.1 document (the 3.0.3 rendition says the same), all of them and those that are no edit of
    wording, to the record, regenerates both documents
    (the record sets their revision) and makes them the new baseline. The first release is
    compared with an empty document, so it lists every operation."""
    day = None
    if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", date):
        try:
            day = datetime.date.fromisoformat(date)
        except ValueError:
            pass
    if day is None or day > datetime.date.today() + datetime.timedelta(days=1):
        raise SystemExit(f"FAIL: {date!r} is not a day written YYYY-MM-DD, today or before")
    for note in notes:
        if not note.strip().endswith("."):
            raise SystemExit(f"FAIL: a note is one sentence for partners, ending in '.': {note!r}")
    record = json.loads(RECORD.read_text()) if RECORD.exists() else {"releases": []}
    if any(release["date"] >= date for release in record["releases"]):
        raise SystemExit(f"FAIL: a release is recorded on or after {date}; one a day at most")
    # What is gated is what the code emits now, not a committed file that may lag behind it.
    subprocess.run([str(ROOT / "scripts/update-openapi")], check=True)
    for name in DOCUMENTS:
        if (RELEASED / name).exists() and check(RELEASED / name, ROOT / "openapi" / name):
            raise SystemExit(f"FAIL: openapi/{name} breaks the released contract; not released")
    with tempfile.TemporaryDirectory() as scratch:
        baseline = RELEASED / DOCUMENTS[0]
        if not baseline.exists():
            baseline = Path(scratch, "empty.yaml")
            baseline.write_text("openapi: 3.1.0\ninfo: {title: none, version: '0'}\npaths: {}\n")
        listed = changes(baseline, ROOT / "openapi" / DOCUMENTS[0])
        contract = contract_changes(baseline, ROOT / "openapi" / DOCUMENTS[0])
    if not listed:
        print("nothing to release: openapi/v1.yaml is the released document")
        return 0
    record["releases"].append(
        {"date": date, "notes": notes, "changes": listed, "contract_changes": contract}
    )
    RECORD.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    # The record is compiled in and names the revision: the documents change with it (only
    # their info.version does; should the regeneration fail, the record is put back).
    # Never with a prebuilt binary (PARTNER_API_PREBUILT): it was built before the record
    # changed, and would print the previous revision.
    fresh = {name: value for name, value in os.environ.items() if name != "PARTNER_API_PREBUILT"}
    try:
        subprocess.run([str(ROOT / "scripts/update-openapi")], check=True, env=fresh)
        revision = "1." + date.replace("-", "") + ".0"
        if f"version: {revision}" not in (ROOT / "openapi" / DOCUMENTS[0]).read_text():
            raise SystemExit(f"FAIL: the regenerated document does not name revision {revision}")
    except BaseException:
        record["releases"].pop()
        RECORD.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
        raise
    RELEASED.mkdir(exist_ok=True)
    for name in DOCUMENTS:
        shutil.copyfile(ROOT / "openapi" / name, RELEASED / name)
    print(f"released {date}: {len(listed)} change(s) recorded in openapi/changelog.json;")
    print("commit openapi/changelog.json and openapi/released/ with the release")
    return 0


def main(argv):
    command = argv[1] if len(argv) > 1 else ""
    if command == "check" and len(argv) == 4:
        before, after = argv[2], argv[3]
        print(f"==> {after} against {before}")
        broken = check(before, after)
        listed = changes(before, after)
        if broken:
            print(
                f"FAIL: {after} breaks what {before} promised ({', '.join(broken)}). Clients "
                "generated from the released document would stop working. Make the change "
                "additive, or ship it under a new version path (PARTNERS.md, 'What v1 promises')."
            )
            return 1
        print(f"ok: no breaking change; {len(listed)} additive change(s):")
        for line in listed:
            print(f"    + {line}")
        return 0
    if command == "changes" and len(argv) == 4:
        print(json.dumps({
            "changes": changes(argv[2], argv[3]),
            "contract_changes": contract_changes(argv[2], argv[3]),
        }, indent=2))
        return 0
    if command == "fixtures" and len(argv) == 3:
        failures = 0
        for kind in ("breaking", "additive"):
            for case in sorted(Path(argv[2], kind).iterdir()):
                broken = check(case / "before.yaml", case / "after.yaml", quiet=True)
                if (kind == "breaking") == bool(broken):
                    verdict = f"refused by {', '.join(broken)}" if broken else "passed"
                    print(f"ok: {kind}/{case.name} {verdict}")
                else:
                    failures += 1
                    verdict = f"refused by {', '.join(broken)}" if broken else "passed"
                    print(f"FAIL: {kind}/{case.name} {verdict}")
        return 1 if failures else 0
    if command == "release" and len(argv) >= 4:
        return release(argv[2], argv[3:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
