"""The Grafana dashboard: valid JSON, unique panel ids, a templated Prometheus data source, and every
query naming only served or recorded series."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from deploy.validate import promql
from deploy.validate.catalog import Catalog
from deploy.validate.references import check_expr

# Panels the deployment brief asks for, found by a word in their title.
REQUIRED_TOPICS = (
    "Requests per second",
    "error ratio",
    "p50 latency",
    "p99 latency",
    "Evaluator:",
    "Dealer:",
    "Wallet:",
    "Table shards:",
    "leases",
    "takeovers",
)


def panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for panel in dashboard.get("panels", []):
        out.append(panel)
        out.extend(panel.get("panels", []))  # collapsed rows keep their panels inside
    return out


def check_dashboard(path: Path, catalog: Catalog, recorded: set[str]) -> list[str]:
    try:
        dashboard = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        return [f"{path}: not JSON: {exc}"]
    problems = []
    variables = {v["name"] for v in dashboard.get("templating", {}).get("list", [])}
    if "datasource" not in variables:
        problems.append(f"{path.name}: no `datasource` variable (dashboards must not pin a data source uid)")
    ids = [p["id"] for p in panels(dashboard)]
    if len(ids) != len(set(ids)):
        problems.append(f"{path.name}: duplicate panel ids")
    titles = [p.get("title", "") for p in panels(dashboard)]
    for topic in REQUIRED_TOPICS:
        if not any(topic.lower() in t.lower() for t in titles):
            problems.append(f"{path.name}: no panel about {topic!r}")
    problems += _overlaps(path.name, [p for p in dashboard.get("panels", []) if "gridPos" in p])
    for panel in panels(dashboard):
        if panel.get("type") == "row":
            continue
        if "gridPos" not in panel:
            problems.append(f"{path.name}: panel {panel.get('title')!r} has no gridPos")
        targets = panel.get("targets", [])
        if not targets:
            problems.append(f"{path.name}: panel {panel.get('title')!r} has no query")
        for target in targets:
            where = f"{path.name}: panel {panel.get('title')!r}"
            problems += check_expr(target.get("expr", ""), where, catalog, recorded)
            problems += _scoped_to_namespace(target.get("expr", ""), where)
            uid = target.get("datasource", {}).get("uid", "")
            if not uid.startswith("$"):
                problems.append(f"{where}: query pins data source {uid!r} instead of ${{datasource}}")
    return problems


def _overlaps(name: str, laid_out: list[dict[str, Any]]) -> list[str]:
    """Panels whose grid rectangles intersect (Grafana would shuffle them on load)."""
    problems = []
    for i, a in enumerate(laid_out):
        for b in laid_out[i + 1 :]:
            ga, gb = a["gridPos"], b["gridPos"]
            if (
                ga["x"] < gb["x"] + gb["w"]
                and gb["x"] < ga["x"] + ga["w"]
                and ga["y"] < gb["y"] + gb["h"]
                and gb["y"] < ga["y"] + ga["h"]
            ):
                problems.append(f"{name}: panels {a.get('title')!r} and {b.get('title')!r} overlap")
    return problems


def _scoped_to_namespace(expr: str, where: str) -> list[str]:
    """One Prometheus may scrape felt and felt-dev: every selector must honour the $namespace variable."""
    try:
        selectors = promql.selectors(expr)
    except promql.PromQLSyntaxError:
        return []  # reported by check_expr
    return [
        f'{where}: {s.name} is not filtered by namespace=~"$namespace" (dev and production would mix)'
        for s in selectors
        if not any(m.label == "namespace" and "$namespace" in m.value for m in s.matchers)
    ]
