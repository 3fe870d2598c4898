#!/usr/bin/env python3
"""Checks the dashboard and the alert rules against what errand exports.

    python3 docs/prometheus/check_metrics.py [--promtool PATH]   (scripts/test runs it)

Reads the metrics errand exports from their registry, src/telemetry/metrics.rs
(their names, kinds and label names), then fails when
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
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')

errors = []


def fail(where, message):
    errors.append(f"{where}: {message}")


REGISTRY = ROOT / "src/telemetry/metrics.rs"
# A registration in `Metrics::new`: `field: labelled|registered|with(&mut r, "name", "help"[, "label" | metric])`.
REGISTRATION = re.compile(r'(\w+):\s*(labelled|registered|with)\(\s*&mut r,\s*"([a-zA-Z_:][a-zA-Z0-9_:]*)",\s*"[^"]*"\s*(?:,\s*"(\w+)")?')


def exported():
    """{series name: set of label names} errand's /metrics can hold, and every string literal in src/.

    Every metric is a field of `Metrics` in src/telemetry/metrics.rs: its
    type says its kind (a counter's series gains `_total`, a histogram's
    are `_bucket`, `_sum` and `_count`), its registration its name and, for
    a `Labelled` family, its label; a family of several labels is written
    through `self.<field>.get_or_create(&[("label", …), …])` in that file.
    """
    literals = set()
    for path in sorted((ROOT / "src").rglob("*.rs")):
        literals.update(STRING.findall(path.read_text()))
    text = REGISTRY.read_text()
    struct = re.search(r"pub struct Metrics \{(.*?)\n\}", text, re.S)
    fields = dict(re.findall(r"^\s*(?:pub(?:\([a-z]+\))? )?(\w+): (.+),$", struct.group(1), re.M)) if struct else {}
    metrics = {}
    for field, _, name, key in REGISTRATION.findall(text):
        kind = fields.get(field, "")
        if not kind:
            fail(REGISTRY.name, f"{name}: registered as `{field}`, which is no field of Metrics")
            continue
        labels = {key} if key else set()
        for m in re.finditer(rf"self\.{field}\s*\.get_or_create\(&\[(.*?)\]\)", text, re.S):
            labels.update(re.findall(r'\(\s*"([a-zA-Z_][a-zA-Z0-9_]*)"\s*,', m.group(1)))
        if kind.startswith("Family") and not labels:
            fail(REGISTRY.name, f"{name}: a family whose labels check_metrics.py cannot find")
        if "Histogram" in kind:
            series = {f"{name}_bucket": labels | {"le"}, f"{name}_sum": labels, f"{name}_count": labels}
        elif "Counter" in kind:
            series = {f"{name}_total": labels}
        else:
            series = {name: labels}
        for s, ls in series.items():
            metrics.setdefault(s, set()).update(ls)
    if not metrics:
        fail(REGISTRY.name, "no metric registered: check_metrics.py cannot read it")
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
