"""The Prometheus scrape configuration (deploy/prometheus/prometheus.yml) against the rendered manifests:
the targets Kubernetes pod discovery would offer for every rendered pod (one per container port, with the
`__meta_kubernetes_*` labels Prometheus documents), run through the job's relabelling as Prometheus
does it. Every Felt pod must end as exactly one target on its metrics port and path, labelled with the
`namespace`, `pod` and `app` the rules and the dashboard use; nothing else may be scraped.

tests/deploy/test_monitoring.py runs the same discovered targets through a real Prometheus server and
checks that it keeps and labels them exactly as this module predicts.
"""

from __future__ import annotations

import glob
import re
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]  # no stubs pinned; only safe_load is used

from deploy.validate.manifests import Doc, Workload, felt_service_of, workloads

Labels = dict[str, str]
JOB = "felt"
DEFAULTS = {"__scheme__": "http", "__metrics_path__": "/metrics"}
# Labels the rules group by (deploy/prometheus/rules) and the dashboard filters on.
REQUIRED_LABELS = ("namespace", "pod", "app")


def load(path: Path) -> dict[str, Any]:
    return dict(yaml.safe_load(path.read_text(encoding="utf-8")))


def _sanitize(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_]", "_", name)


def pod_name(w: Workload) -> str:
    return f"{w.name}-0" if w.kind == "StatefulSet" else f"{w.name}-5d8f7c9b4-x2x7q"


def discovered(docs: list[Doc], namespace: str) -> list[Labels]:
    """What `kubernetes_sd_configs: [{role: pod}]` offers for one running pod of every workload."""
    targets = []
    for i, w in enumerate(workloads(docs), start=10):
        ip = f"10.0.0.{i}"
        pod: Labels = {
            "__meta_kubernetes_namespace": namespace,
            "__meta_kubernetes_pod_name": pod_name(w),
            "__meta_kubernetes_pod_ip": ip,
            "__meta_kubernetes_pod_phase": "Running",
            "__meta_kubernetes_pod_ready": "true",
            "__meta_kubernetes_pod_controller_kind": "StatefulSet"
            if w.kind == "StatefulSet"
            else "ReplicaSet",
        }
        for key, value in w.labels.items():
            pod[f"__meta_kubernetes_pod_label_{_sanitize(key)}"] = value
            pod[f"__meta_kubernetes_pod_labelpresent_{_sanitize(key)}"] = "true"
        for key, value in w.annotations.items():
            pod[f"__meta_kubernetes_pod_annotation_{_sanitize(key)}"] = value
            pod[f"__meta_kubernetes_pod_annotationpresent_{_sanitize(key)}"] = "true"
        for c in w.pod.get("containers", []):
            container = {**pod, "__meta_kubernetes_pod_container_name": c["name"]}
            container["__meta_kubernetes_pod_container_init"] = "false"
            ports = c.get("ports", [])
            if not ports:
                targets.append({**container, "__address__": ip})
            for p in ports:
                targets.append(
                    {
                        **container,
                        "__address__": f"{ip}:{p['containerPort']}",
                        "__meta_kubernetes_pod_container_port_name": p.get("name", ""),
                        "__meta_kubernetes_pod_container_port_number": str(p["containerPort"]),
                        "__meta_kubernetes_pod_container_port_protocol": p.get("protocol", "TCP"),
                    }
                )
    return targets


def _expand(template: str, match: re.Match[str]) -> str:
    """Go's regexp Expand: $1, ${1}, $name, ${name}; an unknown group expands to nothing."""

    def group(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        try:
            return match.group(int(name) if name.isdigit() else name) or ""
        except (IndexError, re.error):
            return ""

    return re.sub(r"\$\{(\w+)\}|\$(\w+)", group, template)


def relabel(labels: Labels, configs: list[dict[str, Any]]) -> Labels | None:
    """Prometheus relabelling (keep, drop, replace, labelmap, labeldrop, labelkeep); None: dropped."""
    labels = dict(labels)
    for rc in configs:
        action = rc.get("action", "replace")
        regex = re.compile(f"^(?:{rc.get('regex', '(.*)')})$")
        value = rc.get("separator", ";").join(labels.get(s, "") for s in rc.get("source_labels", []))
        replacement = str(rc.get("replacement", "$1"))
        if action == "keep" and not regex.match(value):
            return None
        if action == "drop" and regex.match(value):
            return None
        if action == "replace":
            match = regex.match(value)
            if match:
                target, result = _expand(rc["target_label"], match), _expand(replacement, match)
                if result:
                    labels[target] = result
                else:
                    labels.pop(target, None)
        elif action == "labelmap":
            for name in list(labels):
                match = regex.match(name)
                if match:
                    labels[_expand(replacement, match)] = labels[name]
        elif action in ("labeldrop", "labelkeep"):
            keep = action == "labelkeep"
            labels = {k: v for k, v in labels.items() if bool(regex.match(k)) == keep}
        elif action not in ("keep", "drop"):
            raise ValueError(f"relabel action {action!r} is not modelled here")
    return labels


def scraped(labels: Labels) -> Labels:
    """A kept target as Prometheus lists it: the `__` labels gone, `instance` defaulting to the address."""
    final = {k: v for k, v in labels.items() if not k.startswith("__")}
    final.setdefault("instance", labels["__address__"])
    return final


def job(config: dict[str, Any]) -> dict[str, Any] | None:
    return next((j for j in config.get("scrape_configs", []) if j.get("job_name") == JOB), None)


def targets_of(config: dict[str, Any], docs: list[Doc], namespace: str) -> list[Labels]:
    """The kept targets (before the `__` labels go) for the rendered pods."""
    found = job(config)
    assert found is not None
    base = {**DEFAULTS, "job": JOB}
    kept = [relabel({**base, **t}, found.get("relabel_configs", [])) for t in discovered(docs, namespace)]
    return [t for t in kept if t is not None]


def check_scrape_config(
    path: Path, docs: list[Doc], namespace: str | None, rule_files: list[Path]
) -> list[str]:
    """`namespace`: the overlay's, which discovery must watch (None for the base, which has none)."""
    config = load(path)
    found = job(config)
    if found is None:
        return [f"{path.name}: no scrape job {JOB!r}"]
    problems = []
    discovery = found.get("kubernetes_sd_configs") or []
    if [d.get("role") for d in discovery] != ["pod"]:
        problems.append(f"{path.name}: job {JOB} must discover pods (kubernetes_sd_configs role: pod)")
    watched = {n for d in discovery for n in (d.get("namespaces") or {}).get("names", [])}
    if namespace is not None and namespace not in watched:
        problems.append(f"{path.name}: job {JOB} does not watch the namespace {namespace}")
    listed = {
        Path(p).resolve() for f in config.get("rule_files", []) for p in glob.glob(str(path.parent / f))
    }
    for rules in rule_files:
        if rules.resolve() not in listed:
            problems.append(f"{path.name}: rule_files leaves out {rules.name}")
    return problems + check_targets(path.name, config, docs, namespace or "default")


def check_targets(name: str, config: dict[str, Any], docs: list[Doc], ns: str) -> list[str]:
    """The job `felt` of `config` over the rendered pods: every Felt pod once, on its metrics port and path,
    labelled namespace, pod and app; nothing else (`name`: what the problems are about)."""
    problems = []
    by_pod: dict[str, list[Labels]] = {}
    for t in targets_of(config, docs, ns):
        by_pod.setdefault(t["__meta_kubernetes_pod_name"], []).append(t)
    for w in workloads(docs):
        service = next((felt_service_of(c) for c in w.pod.get("containers", []) if felt_service_of(c)), None)
        mine = by_pod.get(pod_name(w), [])
        if service is None:
            if mine:
                problems.append(f"{name}: scrapes {w}, which is not a Felt service")
            continue
        if len(mine) != 1:
            problems.append(f"{name}: {w} yields {len(mine)} scrape targets, not 1")
            continue
        target = mine[0]
        metrics = next(
            p["containerPort"]
            for c in w.pod["containers"]
            for p in c.get("ports", [])
            if p.get("name") == "metrics"
        )
        if not target["__address__"].endswith(f":{metrics}"):
            problems.append(
                f"{name}: {w} is scraped at {target['__address__']}, not its metrics port {metrics}"
            )
        if target["__metrics_path__"] != w.annotations.get("prometheus.io/path", "/metrics"):
            problems.append(f"{name}: {w} is scraped at path {target['__metrics_path__']}")
        final = scraped(target)
        want = {"namespace": ns, "pod": pod_name(w), "app": service}
        for label in REQUIRED_LABELS:
            if final.get(label) != want[label]:
                problems.append(f"{name}: {w}'s series get {label}={final.get(label)!r}, not {want[label]!r}")
        if "service" in final:
            problems.append(f"{name}: a target label `service` renames the stream gauges' own label")
    return problems


def for_promtool(config: dict[str, Any], targets_file: str) -> dict[str, Any]:
    """The configuration with pod discovery swapped for a file: Debian's Prometheus is built without
    Kubernetes discovery, so its promtool refuses `kubernetes_sd_configs`; everything else is checked."""
    copy = dict(config)
    jobs = []
    for j in config.get("scrape_configs", []):
        j = dict(j)
        if "kubernetes_sd_configs" in j:
            del j["kubernetes_sd_configs"]
            j["file_sd_configs"] = [{"files": [targets_file], "refresh_interval": "1s"}]
        jobs.append(j)
    copy["scrape_configs"] = jobs
    return copy
