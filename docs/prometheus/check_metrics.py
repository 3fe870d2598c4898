#!/usr/bin/env python3
"""Checks the dashboard and the alert rules against what errand exports.

    python3 docs/prometheus/check_metrics.py [--promtool PATH]   (scripts/test runs it)

Reads the metrics errand exports from the `metrics::counter!`, `gauge!` and
`histogram!` calls under src/ (their names and label names), then fails when
docs/grafana/errand.json, docs/prometheus/alerts.yml or its unit tests name
a metric or a label no call makes, a label value that is no string in src/
(`state="faild"`), or a runbook section docs/operations.md lacks. promtool
checks the rules' syntax, not their names: a renamed metric would leave an
alert that never fires, and a dashboard panel that stays empty. With
--promtool, the dashboard's queries also go through `promtool check rules`
(as recording rules, Grafana's variables replaced), which parses them.
"""

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml  # PyYAML: Debian's python3-yaml, or pip install pyyaml

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "docs/grafana/errand.json"
ALERTS = ROOT / "docs/prometheus/alerts.yml"
ALERT_TESTS = ROOT / "docs/prometheus/alerts_test.yml"
OPERATIONS = ROOT / "docs/operations.md"
API = ROOT / "docs/api.md"

# Labels Prometheus adds to every scraped series.
SCRAPE_LABELS = {"job", "instance"}
# Labels whose values are not strings in the code (configured, or numbers).
FREE_VALUES = SCRAPE_LABELS | {"job_type", "le", "quantile"}
KEYWORDS = {
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "bool",
    "and",
    "or",
    "unless",
    "offset",
    "inf",
    "nan",
}
MACRO = re.compile(r"metrics::(counter|gauge|histogram)!\(")
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')

errors = []


def fail(where, message):
    errors.append(f"{where}: {message}")


def macro_args(text, start):
    """The text between a macro's parentheses, from `start` (just past its `(`)."""
    depth, i, in_string = 1, start, False
    while depth:
        c = text[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        i += 1
    return text[start : i - 1]


def exported():
    """{series name: set of label names} errand's /metrics can hold, and every string literal in src/."""
    metrics, literals, bucketed = {}, set(), set()
    for path in sorted((ROOT / "src").rglob("*.rs")):
        text = path.read_text()
        literals.update(STRING.findall(text))
        bucketed.update(re.findall(r'Matcher::Full\("([a-z0-9_]+)"', text))
        for m in MACRO.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            args = macro_args(text, m.end())
            name = re.match(r'\s*"([a-zA-Z_:][a-zA-Z0-9_:]*)"', args)
            if not name:
                fail(
                    f"{path.relative_to(ROOT)}:{line}",
                    "a metric whose name is not a string literal; check_metrics.py cannot read it",
                )
                continue
            rest = args[name.end() :]
            labels = set(re.findall(r'"([a-zA-Z_][a-zA-Z0-9_]*)"\s*=>', rest))
            for ident in re.findall(r"&\s*([a-z_][a-z0-9_]*)", rest):
                # `let labels = [("job_type", ...), ("state", ...)];` a few lines above.
                before = text[: m.start()].splitlines()[-10:]
                found = [ln for ln in before if re.search(rf"\blet\s+{ident}\s*=\s*\[", ln)]
                if not found:
                    fail(f"{path.relative_to(ROOT)}:{line}", f"labels in `{ident}`, which check_metrics.py cannot find")
                labels.update(re.findall(r'\(\s*"([a-zA-Z_][a-zA-Z0-9_]*)"\s*,', "".join(found)))
            kind, name = m.group(1), name.group(1)
            if kind == "histogram" and name in bucketed:
                series = {f"{name}_bucket": labels | {"le"}, f"{name}_sum": labels, f"{name}_count": labels}
            elif kind == "histogram":
                # Without buckets, metrics-exporter-prometheus renders a summary.
                series = {name: labels | {"quantile"}, f"{name}_sum": labels, f"{name}_count": labels}
            else:
                series = {name: labels}
            for s, ls in series.items():
                metrics.setdefault(s, set()).update(ls)
    metrics["up"] = set()  # Prometheus' own, one per target
    return metrics, literals


def selectors(expr):
    """(metric, [(label, op, value)]) for each series selector in a PromQL
    expression, and the label names its grouping clauses name."""
    strings = []

    def keep(m):
        strings.append(m.group(1))
        return f'"#{len(strings) - 1}"'

    e = STRING.sub(keep, expr)
    e = re.sub(r"\$\{?\w+\}?", "5m", e)  # Grafana's $__rate_interval, $__range
    e = re.sub(r"\[[^\]]*\]", " ", e)  # ranges, subqueries
    grouping = set()
    for m in re.finditer(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)", e):
        grouping.update(g.strip() for g in m.group(2).split(",") if g.strip())
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    found = []
    for m in re.finditer(r"(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*\{([^}]*)\}", e):
        matchers = [
            (label, op, strings[int(i)]) for label, op, i in re.findall(r'(\w+)\s*(=~|!~|!=|=)\s*"#(\d+)"', m.group(2))
        ]
        found.append((m.group(1), matchers))
    e = re.sub(r"(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*\{([^}]*)\}", " ", e)
    for m in re.finditer(r"(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()", e):
        if m.group(1).lower() not in KEYWORDS:
            found.append((m.group(1), []))
    return found, grouping


def check_expr(where, expr, metrics, literals, uses=()):
    """Checks one expression; `uses` are label names its legend or annotations read."""
    found, grouping = selectors(expr)
    if not found:
        fail(where, f"no metric in {expr!r}")
    available = set(SCRAPE_LABELS)
    for name, matchers in found:
        if name is None:
            fail(where, "a selector without a metric name")
            continue
        if name not in metrics:
            fail(where, f"{name}: errand exports no such metric")
            continue
        labels = metrics[name] | SCRAPE_LABELS
        available |= labels
        for label, op, value in matchers:
            if label not in labels:
                fail(where, f"{name} has no label {label!r} (it has {sorted(metrics[name]) or 'none'})")
            elif label not in FREE_VALUES and "$" not in value:
                words = value.split("|") if re.fullmatch(r"[a-z_|]+", value) else []
                if op in ("=", "!=") and not words:
                    words = [value]
                for w in words:
                    if w not in literals:
                        fail(where, f'{name}{{{label}{op}"{value}"}}: "{w}" is no string in src/')
    for label in sorted((grouping | set(uses)) - available):
        fail(where, f"label {label!r} is on none of the metrics of {expr!r}")


def slug(heading):
    """GitHub's anchor for a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def parse_dashboard(promtool, dashboard):
    """Has promtool parse every query of the dashboard."""
    values = {"$__rate_interval": "5m", "$__range": "1h", "$job": ".*", "$job_type": ".*"}
    rules = []
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            expr = target["expr"]
            for variable, value in values.items():
                expr = expr.replace(variable, value)
            rules.append({"record": f"errand:panel_{panel['id']}_{target['refId']}", "expr": expr})
    with tempfile.NamedTemporaryFile("w", suffix=".yml") as f:
        # JSON is YAML: promtool reads it as it is.
        json.dump({"groups": [{"name": "dashboard", "rules": rules}]}, f)
        f.flush()
        checked = subprocess.run([promtool, "check", "rules", f.name], capture_output=True, text=True)
    if checked.returncode != 0:
        fail(DASHBOARD.name, "promtool cannot parse a query:\n" + checked.stdout + checked.stderr)


def main():
    if len(sys.argv) not in (1, 3) or (len(sys.argv) == 3 and sys.argv[1] != "--promtool"):
        sys.exit("usage: check_metrics.py [--promtool PATH]")
    metrics, literals = exported()
    used = set()

    dashboard = json.loads(DASHBOARD.read_text())
    ids = [p["id"] for p in dashboard["panels"]]
    if len(ids) != len(set(ids)):
        fail(DASHBOARD.name, "panel ids repeat")
    for variable in dashboard["templating"]["list"]:
        if variable["type"] != "query":
            continue
        q = variable["query"]["query"] if isinstance(variable["query"], dict) else variable["query"]
        m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", q)
        if not m:
            fail(f"{DASHBOARD.name} ${variable['name']}", f"not a label_values query: {q}")
            continue
        check_expr(f"{DASHBOARD.name} ${variable['name']}", m.group(1), metrics, literals, [m.group(2)])
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            where = f"{DASHBOARD.name} panel {panel['id']} ({panel['title']})"
            legend = re.findall(r"\{\{\s*(\w+)\s*\}\}", target.get("legendFormat", ""))
            check_expr(where, target["expr"], metrics, literals, legend)
            used.update(n for n, _ in selectors(target["expr"])[0])

    headings = {slug(h) for h in re.findall(r"^#+ (.+)$", OPERATIONS.read_text(), re.M)}
    for group in yaml.safe_load(ALERTS.read_text())["groups"]:
        for rule in group["rules"]:
            where = f"{ALERTS.name} {rule.get('alert') or rule.get('record')}"
            annotations = " ".join(rule.get("annotations", {}).values())
            check_expr(where, rule["expr"], metrics, literals, re.findall(r"\$labels\.(\w+)", annotations))
            used.update(n for n, _ in selectors(rule["expr"])[0])
            if "alert" in rule:
                url = rule.get("annotations", {}).get("runbook_url", "")
                if not url.startswith("docs/operations.md#") or url.split("#", 1)[1] not in headings:
                    fail(where, f"runbook_url {url!r}: no such section in docs/operations.md")

    for test in yaml.safe_load(ALERT_TESTS.read_text())["tests"]:
        for series in test.get("input_series", []):
            check_expr(f"{ALERT_TESTS.name} {test['name']!r}", series["series"], metrics, literals)

    # The API reference's `GET /metrics` row lists every metric, no more.
    row = next((line for line in API.read_text().splitlines() if line.startswith("| `GET /metrics`")), "")
    documented = set(re.findall(r"`(errand_\w+)", row))
    families = {re.sub(r"_(bucket|sum|count)$", "", n) for n in metrics if n.startswith("errand_")}
    for name in sorted(families - documented):
        fail(API.name, f"GET /metrics does not list {name}")
    for name in sorted(documented - families):
        fail(API.name, f"GET /metrics lists {name}, which errand does not export")

    # Not an error: a new metric may wait for its panel.
    families = {re.sub(r"_(bucket|sum|count)$", "", n) for n in used}
    missing = sorted({re.sub(r"_(bucket|sum|count)$", "", n) for n in metrics} - families)
    if missing:
        print("check_metrics: on neither the dashboard nor an alert: " + ", ".join(missing))

    if len(sys.argv) == 3 and sys.argv[1] == "--promtool":
        parse_dashboard(sys.argv[2], dashboard)

    if errors:
        print("\n".join(errors), file=sys.stderr)
        sys.exit(1)
    print(
        "check_metrics: the dashboard, alerts and their tests use only what errand exports"
        f" ({len(metrics) - 1} series names)"
    )


if __name__ == "__main__":
    main()
