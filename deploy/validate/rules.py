"""Prometheus rule files: structure, metric references, and promtool when it is installed
(Debian package `prometheus` provides /usr/bin/promtool)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]  # no stubs pinned; only safe_load is used

from deploy.validate.catalog import Catalog
from deploy.validate.references import check_expr

REQUIRED_ALERT_SEVERITIES = frozenset({"page", "ticket"})


def load_rules(path: Path) -> list[dict[str, Any]]:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [rule for group in doc["groups"] for rule in group["rules"]]


def recorded_names(paths: list[Path]) -> set[str]:
    return {rule["record"] for path in paths for rule in load_rules(path) if "record" in rule}


def check_rule_file(path: Path, catalog: Catalog, recorded: set[str]) -> list[str]:
    problems = []
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    groups = doc.get("groups") if isinstance(doc, dict) else None
    if not groups:
        return [f"{path}: no rule groups"]
    seen_groups: set[str] = set()
    for group in groups:
        if group["name"] in seen_groups:
            problems.append(f"{path}: duplicate group {group['name']!r}")
        seen_groups.add(group["name"])
        for rule in group.get("rules", []):
            name = rule.get("record") or rule.get("alert")
            where = f"{path.name}: {name}"
            if ("record" in rule) == ("alert" in rule):
                problems.append(f"{where}: a rule is either a record or an alert")
                continue
            problems += check_expr(str(rule.get("expr", "")), where, catalog, recorded)
            if "record" in rule and rule["record"].count(":") != 2:
                problems.append(f"{where}: recording rule names follow level:metric:operations")
            if "alert" in rule:
                severity = rule.get("labels", {}).get("severity")
                if severity not in REQUIRED_ALERT_SEVERITIES:
                    problems.append(f"{where}: severity must be one of {sorted(REQUIRED_ALERT_SEVERITIES)}")
                if not rule.get("annotations", {}).get("summary"):
                    problems.append(f"{where}: alerts carry a summary annotation")
    return problems


def promtool() -> str | None:
    return shutil.which("promtool")


def run_promtool(*args: str, cwd: Path | None = None) -> tuple[int, str]:
    tool = promtool()
    if tool is None:
        raise FileNotFoundError("promtool")
    result = subprocess.run([tool, *args], capture_output=True, text=True, timeout=120, cwd=cwd, check=False)
    return result.returncode, (result.stdout + result.stderr).strip()
