"""The Prometheus Operator's objects (deploy/k8s/monitoring) against the plain configuration they stand for.

- PrometheusRule: one per rule file of deploy/prometheus/rules, its groups exactly the file's (the file
  prometheusrules.yaml is generated from them: `python -m deploy.validate.operator --write`, or
  `make operator-rules`), so the alerts an operator-run Prometheus fires are the ones promtool tests.
- PodMonitor: turned into the scrape job the operator generates for it (its documented relabelling: keep
  the selected pods and the named port, drop finished pods, label namespace/pod/container/endpoint/job,
  then the monitor's own relabelings), and that job played over every rendered overlay's pods exactly as
  the plain job `felt` is (deploy/validate/scrape.py): every Felt pod once, on its metrics port and path,
  labelled namespace, pod and app; nothing else.

No CRD schema is at hand offline, so the fields are checked against those of the operator's API these
files use (monitoring.coreos.com/v1), which catches a misspelt one.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]  # no stubs pinned; safe_load and safe_dump only

from deploy.validate import layout, scrape
from deploy.validate.manifests import Doc

API = "monitoring.coreos.com/v1"
RULES_FILE = "prometheusrules.yaml"
SELECTOR_LABEL = ("app.kubernetes.io/part-of", "felt")
# monitoring.coreos.com/v1 fields these objects may use (a subset of the API: what a typo would miss).
POD_MONITOR_SPEC = {"namespaceSelector", "selector", "podMetricsEndpoints", "jobLabel", "podTargetLabels"}
ENDPOINT_FIELDS = {"port", "path", "interval", "scrapeTimeout", "scheme", "relabelings", "metricRelabelings"}
RELABEL_FIELDS = {"sourceLabels", "separator", "targetLabel", "regex", "replacement", "action", "modulus"}
_HEADER = """\
# GENERATED from deploy/prometheus/rules/*.yml by `make operator-rules`: edit the rule files, not this.
# The same groups as the files promtool checks and tests, as PrometheusRule objects for the Prometheus
# Operator (selected by app.kubernetes.io/part-of: felt). `make check-deploy` fails when they differ.
"""


def prometheus_rules(rule_files: list[Path]) -> list[Doc]:
    """A PrometheusRule per rule file (felt.rules.yml -> felt-rules), its groups the file's."""
    docs = []
    for path in rule_files:
        groups = yaml.safe_load(path.read_text(encoding="utf-8"))["groups"]
        name = re.sub(r"[^a-z0-9-]", "-", path.name.removesuffix(".yml").lower())
        docs.append(
            {
                "apiVersion": API,
                "kind": "PrometheusRule",
                "metadata": {"name": f"felt-{name.removeprefix('felt-')}"},
                "spec": {"groups": groups},
            }
        )
    return docs


def rules_text(rule_files: list[Path]) -> str:
    parts = [yaml.safe_dump(doc, sort_keys=False, width=110) for doc in prometheus_rules(rule_files)]
    return _HEADER + "---\n" + "---\n".join(parts)


def scrape_job(monitor: Doc, endpoint_index: int = 0) -> dict[str, Any]:
    """The Prometheus scrape job the operator generates for one endpoint of a PodMonitor."""
    meta, spec = monitor["metadata"], monitor["spec"]
    endpoint = spec["podMetricsEndpoints"][endpoint_index]
    relabel: list[dict[str, Any]] = []
    for key, value in (spec.get("selector", {}).get("matchLabels") or {}).items():
        name = scrape._sanitize(key)
        relabel.append(
            {
                "action": "keep",
                "source_labels": [
                    f"__meta_kubernetes_pod_label_{name}",
                    f"__meta_kubernetes_pod_labelpresent_{name}",
                ],
                "regex": f"({value});true",
            }
        )
    relabel += [
        {
            "action": "keep",
            "source_labels": ["__meta_kubernetes_pod_container_port_name"],
            "regex": endpoint["port"],
        },
        {"action": "drop", "source_labels": ["__meta_kubernetes_pod_phase"], "regex": "(Failed|Succeeded)"},
        {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
        {"source_labels": ["__meta_kubernetes_pod_container_name"], "target_label": "container"},
        {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
        {"target_label": "job", "replacement": f"{meta.get('namespace', 'default')}/{meta['name']}"},
        {"target_label": "endpoint", "replacement": endpoint["port"]},
    ]
    relabel += [_snake(r) for r in endpoint.get("relabelings", [])]
    if "path" in endpoint:  # metrics_path, which Prometheus puts in __metrics_path__ before relabelling
        relabel.insert(0, {"target_label": "__metrics_path__", "replacement": endpoint["path"]})
    namespaces = spec.get("namespaceSelector", {}).get("matchNames", [])
    return {
        "job_name": scrape.JOB,
        "kubernetes_sd_configs": [{"role": "pod", "namespaces": {"names": namespaces}}],
        "relabel_configs": relabel,
    }


def _snake(relabeling: Doc) -> dict[str, Any]:
    """An operator RelabelConfig (camelCase) as Prometheus writes it."""
    return {re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), k): v for k, v in relabeling.items()}


def check_fields(docs: list[Doc]) -> list[str]:
    problems = []
    for doc in docs:
        where = f"{doc.get('kind')}/{doc.get('metadata', {}).get('name')}"
        if doc.get("apiVersion") != API:
            problems.append(f"{where}: apiVersion must be {API}")
        if doc.get("kind") == "PodMonitor":
            spec = doc.get("spec", {})
            problems += [f"{where}: unknown field spec.{k}" for k in sorted(set(spec) - POD_MONITOR_SPEC)]
            for i, endpoint in enumerate(spec.get("podMetricsEndpoints", [])):
                unknown = sorted(set(endpoint) - ENDPOINT_FIELDS)
                problems += [f"{where}: unknown field podMetricsEndpoints[{i}].{k}" for k in unknown]
                for relabeling in endpoint.get("relabelings", []) + endpoint.get("metricRelabelings", []):
                    unknown = sorted(set(relabeling) - RELABEL_FIELDS)
                    problems += [f"{where}: unknown relabeling field {k}" for k in unknown]
        elif doc.get("kind") == "PrometheusRule":
            if set(doc.get("spec", {})) != {"groups"}:
                problems.append(f"{where}: spec holds groups only")
        else:
            problems.append(f"{where}: not an object of the Prometheus Operator")
        if doc.get("metadata", {}).get("labels", {}).get(SELECTOR_LABEL[0]) != SELECTOR_LABEL[1]:
            problems.append(
                f"{where}: the Prometheus resource selects by {SELECTOR_LABEL[0]}={SELECTOR_LABEL[1]}"
            )
    return problems


def check_operator_objects(
    docs: list[Doc], overlays: dict[str, tuple[list[Doc], str | None]], rule_files: list[Path]
) -> list[str]:
    """`docs`: deploy/k8s/monitoring rendered; `overlays`: each overlay's render and namespace."""
    problems = check_fields(docs)
    rendered_rules = {d["metadata"]["name"]: d["spec"] for d in docs if d.get("kind") == "PrometheusRule"}
    wanted_rules = {d["metadata"]["name"]: d["spec"] for d in prometheus_rules(rule_files)}
    for name in sorted(set(wanted_rules) | set(rendered_rules)):
        if rendered_rules.get(name) != wanted_rules.get(name):
            problems.append(
                f"PrometheusRule/{name}: not the rule files' groups: run `make operator-rules` ({RULES_FILE})"
            )
    monitors = [d for d in docs if d.get("kind") == "PodMonitor"]
    if len(monitors) != 1 or len(monitors[0]["spec"].get("podMetricsEndpoints", [])) != 1:
        return [*problems, "one PodMonitor with one endpoint stands for the job `felt`"]
    plain = scrape.job(scrape.load(layout.SCRAPE_CONFIG)) or {}
    job = scrape_job(monitors[0])
    endpoint = monitors[0]["spec"]["podMetricsEndpoints"][0]
    if endpoint.get("interval") != scrape.load(layout.SCRAPE_CONFIG)["global"]["scrape_interval"]:
        problems.append("PodMonitor/felt: interval differs from prometheus.yml's scrape_interval")
    watched = set(job["kubernetes_sd_configs"][0]["namespaces"]["names"])
    plain_watched = {n for d in plain.get("kubernetes_sd_configs", []) for n in d["namespaces"]["names"]}
    if watched != plain_watched:
        problems.append(f"PodMonitor/felt: watches {sorted(watched)}, prometheus.yml {sorted(plain_watched)}")
    config = {"scrape_configs": [job]}
    for overlay, (rendered, namespace) in overlays.items():
        found = scrape.check_targets("PodMonitor/felt", config, rendered, namespace or "default")
        problems += [f"{overlay}: {p}" for p in found]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write deploy/k8s/monitoring/{RULES_FILE}")
    args = parser.parse_args(argv)
    text = rules_text(layout.RULE_FILES)
    if args.write:
        (layout.OPERATOR / RULES_FILE).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
