"""The operators' Grafana dashboard (monitoring/grafana/partner-api.json): its structure, and
every panel's queries evaluated by a real Prometheus.

`scripts/check-metrics` calls `check_structure` and then `check_queries` with the Prometheus it
started (scraping a release build under mixed traffic, with monitoring/partner-api.rules.yaml
loaded): each query, with the dashboard's variables replaced as Grafana would, must return at
least one sample with a number, or the check fails naming the panel and the query. Run on its
own (`scripts/check_dashboard.py`), it checks the structure only, with no Prometheus.

What the structure check holds the dashboard to: Grafana's JSON model (a uid, a title, a
schemaVersion, panels in a 24-column grid that do not overlap, each with a unique id); the
`datasource`, `job` and `instance` variables (and the balancer's and the external ping's jobs,
`balancer_job` and `probe_job`, whose series are filtered by them instead); every panel but a row reading the `${datasource}`
Prometheus data source, with a description and a unit, and targets that each have a refId and
an expression; every selector filtered by `job="$job"` (and `instance=~"$instance"`, except a
recording rule's series, which are by job); every range a Grafana interval variable, never a
fixed window; every variable used defined.
"""

import json
import math
import os
import re
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DASHBOARD = os.path.join(ROOT, "monitoring", "grafana", "partner-api.json")

UID = "partner-api"
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
JOB_FILTER = 'job="$job"'
# The balancer's and the external ping's own jobs: what partners receive, seen from outside the
# replicas; their series have no replica for an instance.
OTHER_JOB_FILTERS = ('job="$balancer_job"', 'job="$probe_job"')
INSTANCE_FILTER = 'instance=~"$instance"'
GRID_COLUMNS = 24
# The units the panels may use, as Grafana names them.
UNITS = {"none", "short", "percentunit", "s", "d", "dtdurations", "bytes", "reqps", "ops", "cps"}

# What the check puts in place of each variable, as Grafana would for the job `partner-api` with
# every instance selected and a 1 s scrape interval: a minute's window holds plenty of scrapes.
VALUES = {
    "job": "partner-api",
    "balancer_job": "partner-api-balancer",
    "probe_job": "partner-api-ping",
    "instance": ".*",
    "__rate_interval": "1m",
    "__interval": "15s",
    "__range": "1h",
}
GRAFANA_VARIABLES = {"__rate_interval", "__interval", "__range"}

# $name, ${name}, ${name:format} and [[name]], as Grafana reads them.
VARIABLE = re.compile(r"\$\{(\w+)(?::[^}]*)?\}|\$(\w+)|\[\[(\w+)\]\]")
# A metric name the dashboard reads: the service's, the process's, `up`, or a recording rule's
# (level:metric:operations); never inside a quoted string.
METRIC = re.compile(r'(?<![\w:"$])((?:partner_api_|process_)\w+|up|\w+:[\w:]+)(?![\w:(])(\s*\{)?')
SELECTOR = re.compile(r"(?<![\w:])([A-Za-z_][\w:]*)\s*\{([^}]*)\}")
RANGE = re.compile(r"\[([^\]]*)\]")
STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def load(path=DASHBOARD):
    with open(path) as source:
        return json.load(source)


def all_panels(dashboard):
    """Every panel, those inside collapsed rows included."""
    for panel in dashboard.get("panels", []):
        yield panel
        yield from panel.get("panels", [])


def structure_problems(dashboard):
    """What keeps `dashboard` from being a valid dashboard of this kind; empty when none."""
    problems = []
    if dashboard.get("uid") != UID:
        problems.append(f"uid is {dashboard.get('uid')!r}, not {UID!r}")
    if not dashboard.get("title"):
        problems.append("no title")
    if not isinstance(dashboard.get("schemaVersion"), int) or dashboard["schemaVersion"] < 36:
        problems.append(f"schemaVersion {dashboard.get('schemaVersion')!r}: expected 36 or later")
    variables = {variable.get("name"): variable
                 for variable in dashboard.get("templating", {}).get("list", [])}
    source = variables.get("datasource", {})
    if source.get("type") != "datasource" or source.get("query") != "prometheus":
        problems.append("no `datasource` variable of Prometheus data sources")
    job = variables.get("job", {})
    if job.get("current", {}).get("value") != VALUES["job"] or not job.get("query"):
        problems.append(f"the `job` variable is missing or not {VALUES['job']!r} by default")
    instance = variables.get("instance", {})
    if "label_values" not in json.dumps(instance.get("query")) or \
            not instance.get("includeAll") or instance.get("allValue") != ".*":
        problems.append("the `instance` variable is missing, not from label_values, or has no "
                        "All of `.*`")
    for name in ("job", "instance"):
        if variables.get(name, {}).get("datasource") != DATASOURCE:
            problems.append(f"the `{name}` variable does not read ${{datasource}}")

    ids, cells = set(), {}
    for panel in all_panels(dashboard):
        title = panel.get("title") or f"panel {panel.get('id')}"
        if not isinstance(panel.get("id"), int):
            problems.append(f"{title}: no integer id")
        elif panel["id"] in ids:
            problems.append(f"{title}: id {panel['id']} is not unique")
        ids.add(panel.get("id"))
        if not panel.get("title"):
            problems.append(f"{title}: no title")
        grid = panel.get("gridPos", {})
        if not all(isinstance(grid.get(key), int) for key in ("h", "w", "x", "y")) or \
                grid["w"] < 1 or grid["h"] < 1 or grid["x"] < 0 or grid["y"] < 0 or \
                grid["x"] + grid["w"] > GRID_COLUMNS:
            problems.append(f"{title}: gridPos {grid} is not a place in a 24-column grid")
        elif panel in dashboard.get("panels", []):  # a collapsed row's panels are not laid out
            covered = {(x, y) for x in range(grid["x"], grid["x"] + grid["w"])
                       for y in range(grid["y"], grid["y"] + grid["h"])}
            others = sorted({cells[cell] for cell in covered if cell in cells})
            if others:
                problems.append(f"{title}: overlaps {', '.join(others)}")
            cells.update((cell, title) for cell in covered)
        if panel.get("type") == "row":
            continue
        if not panel.get("type"):
            problems.append(f"{title}: no type")
        if panel.get("datasource") != DATASOURCE:
            problems.append(f"{title}: datasource {panel.get('datasource')} is not ${{datasource}}")
        if not panel.get("description"):
            problems.append(f"{title}: no description")
        unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit")
        if unit not in UNITS:
            problems.append(f"{title}: unit {unit!r} is not one of {sorted(UNITS)}")
        targets = panel.get("targets") or []
        if not targets:
            problems.append(f"{title}: no targets")
        refs = [target.get("refId") for target in targets]
        if len(set(refs)) != len(refs) or not all(refs):
            problems.append(f"{title}: refIds {refs} are not unique and present")
        for target in targets:
            expr = target.get("expr")
            if not expr:
                problems.append(f"{title} {target.get('refId')}: no expr")
                continue
            if target.get("datasource", DATASOURCE) != DATASOURCE:
                problems.append(f"{title} {target.get('refId')}: not ${{datasource}}")
            problems.extend(f"{title} {target.get('refId')}: {problem}"
                            for problem in query_problems(expr, variables))
    return problems


def query_problems(expr, variables):
    """Selectors without the job and instance filters, fixed windows, unknown variables."""
    problems = []
    code = STRING.sub('""', expr)  # names inside quoted strings are not metrics
    for match in METRIC.finditer(code):
        if not match.group(2):
            problems.append(f"{match.group(1)} without a selector (no job filter)")
    for name, matchers in SELECTOR.findall(expr):
        if any(other in matchers for other in OTHER_JOB_FILTERS):
            continue
        if JOB_FILTER not in matchers:
            problems.append(f"{name}{{{matchers}}} is not filtered by {JOB_FILTER}")
        # A recording rule's series are by job, with no instance label.
        if ":" not in name and INSTANCE_FILTER not in matchers:
            problems.append(f"{name}{{{matchers}}} is not filtered by {INSTANCE_FILTER}")
    for window in RANGE.findall(code):
        if window not in ("$__rate_interval", "$__interval", "$__range"):
            problems.append(f"the window [{window}] is fixed: use $__rate_interval")
    for groups in VARIABLE.findall(expr):
        name = next(group for group in groups if group)
        if name not in variables and name not in GRAFANA_VARIABLES:
            problems.append(f"${name} is no variable of the dashboard")
    return problems


def substitute(expr):
    """`expr` with every variable replaced by what `VALUES` says."""
    def value(match):
        name = next(group for group in match.groups() if group)
        return VALUES[name]
    return VARIABLE.sub(value, expr)


def queries(dashboard):
    """(panel title, refId, expr) of every target, in the dashboard's order."""
    return [(panel["title"], target["refId"], target["expr"])
            for panel in all_panels(dashboard) if panel.get("type") != "row"
            for target in panel.get("targets", [])]


def variable_queries(dashboard):
    """The `label_values(selector, label)` variable queries as PromQL: (name, label, query)."""
    found = []
    for variable in dashboard["templating"]["list"]:
        query = variable.get("query")
        query = query.get("query") if isinstance(query, dict) else query
        match = re.fullmatch(r"label_values\((.+),\s*(\w+)\)", query or "")
        if variable.get("type") == "query" and match:
            found.append((variable["name"], match.group(2),
                          f"count by ({match.group(2)}) ({substitute(match.group(1))})"))
    return found


def finite(sample):
    return math.isfinite(float(sample["value"][1]))


def describe(result, at_most=4):
    """A result as `{labels} value; …`, numbers rounded for reading."""
    def one(sample):
        labels = ", ".join(f'{key}="{value}"' for key, value in sorted(sample["metric"].items())
                           if key != "__name__")
        number = float(sample["value"][1])
        shown = f"{number:.6g}" if math.isfinite(number) else sample["value"][1]
        return f"{{{labels}}} {shown}"
    text = "; ".join(one(sample) for sample in result[:at_most])
    if len(result) > at_most:
        text += f"; … {len(result)} series in all"
    return text


def check_structure(dashboard, say, fail):
    problems = structure_problems(dashboard)
    if problems:
        fail("the dashboard is not valid:\n  " + "\n  ".join(problems))
    count = sum(panel.get("type") != "row" for panel in all_panels(dashboard))
    say(f"dashboard {dashboard['uid']!r}: {count} panels, {len(queries(dashboard))} queries; "
        "ids, grid, data source, descriptions, units and filters in order")


def check_queries(dashboard, query, recorded, say, fail, timeout=60.0):
    """Evaluates every target through `query` (an instant query against Prometheus) until each
    has a sample with a number, for at most `timeout` seconds; prints every panel's query and
    value. `recorded`: the names the loaded rules record."""
    for title, ref, expr in queries(dashboard):
        for name in set(re.findall(r"\b\w+:[\w:]+", STRING.sub('""', expr))):
            if name not in recorded:
                fail(f"panel {title!r} {ref} reads {name}, which no loaded rule records")
    for name, label, promql in variable_queries(dashboard):
        values = {sample["metric"].get(label) for sample in query(promql)}
        if not values or (name == "job" and VALUES["job"] not in values):
            fail(f"variable {name}: {promql} gives {sorted(values)}")
        say(f"variable {name}: {promql} -> {sorted(values)}")

    pending = queries(dashboard)
    answers = {}
    deadline = time.monotonic() + timeout
    while pending:
        still = []
        for item in pending:
            result = query(substitute(item[2]))
            answers[item] = result
            if not any(finite(sample) for sample in result):
                still.append(item)
        pending = still
        if not pending or time.monotonic() > deadline:
            break
        time.sleep(1)

    say("the dashboard's panels, each query as evaluated, and its value:")
    for title, ref, expr in queries(dashboard):
        result = answers[(title, ref, expr)]
        print(f"  [{title}] {ref}: {substitute(expr)}\n"
              f"      = {describe(result) if result else 'no data'}", flush=True)
    if pending:
        fail(f"{len(pending)} queries gave no number within {timeout:.0f} s:\n  " +
             "\n  ".join(f"[{title}] {ref}: {substitute(expr)} = "
                         f"{describe(answers[(title, ref, expr)]) or 'no data'}"
                         for title, ref, expr in pending))
    say(f"every one of the {len(answers)} queries of the dashboard's panels returned data")


def main():
    def say(message):
        print(f"check_dashboard: {message}", flush=True)

    def fail(message):
        print(f"check_dashboard: FAILED: {message}", file=sys.stderr, flush=True)
        sys.exit(1)

    check_structure(load(sys.argv[1] if len(sys.argv) > 1 else DASHBOARD), say, fail)


if __name__ == "__main__":
    main()
