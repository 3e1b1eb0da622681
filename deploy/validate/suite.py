"""Every deployment check as a named function returning an Outcome; deploy/check.py runs them all and
tests/deploy runs them one by one."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from deploy.validate import (
    certificates,
    dashboard,
    dockerfile,
    gateway,
    kustomize,
    layout,
    manifests,
    netpol,
    operator,
    rules,
    schemas,
    scrape,
)
from deploy.validate.catalog import Catalog, build_catalog

PROMTOOL_MISSING = (
    "promtool is not installed, so `promtool check rules` and `promtool test rules` DID NOT RUN; "
    "install it with `apt-get install -y prometheus` (Debian bookworm ships promtool 2.42)"
)


@dataclass
class Outcome:
    problems: list[str] = field(default_factory=list)
    skipped: str = ""
    note: str = ""


@cache
def catalog() -> Catalog:
    return build_catalog(layout.REPO)


@cache
def rendered(name: str) -> list[manifests.Doc]:
    overlay = next(o for o in layout.OVERLAYS if o.name == name)
    return kustomize.render(overlay.path)


def check_overlay(overlay: layout.Overlay) -> Outcome:
    docs = rendered(overlay.name)
    problems = schemas.check_schemas(docs)
    problems += manifests.check_rendered(
        docs, set(overlay.external_secrets), overlay.production, catalog().env_vars
    )
    problems += netpol.check_network_policies(docs)
    problems += gateway.check_routes(
        docs, catalog().grpc_services, catalog().streaming, expected=overlay.browser_routes
    )
    problems += certificates.check_tls(docs, overlay.tls, netpol.render_namespace(docs))
    return Outcome(
        problems,
        note=f"{len(docs)} resources rendered by {' '.join(kustomize.find_kustomize())}, schemas "
        f"{' and '.join(schemas.KUBERNETES_VERSIONS)}",
    )


def check_more_replicas_in_production() -> Outcome:
    """Production runs more replicas than dev for every autoscaled workload."""

    def floors(name: str) -> dict[str, int]:
        return {
            d["metadata"]["name"]: d["spec"].get("minReplicas", 1)
            for d in rendered(name)
            if d["kind"] == "HorizontalPodAutoscaler"
        }

    dev, prod = floors("dev"), floors("production")
    problems = [
        f"HorizontalPodAutoscaler/{name}: production minReplicas {prod.get(name)} is not above dev's {low}"
        for name, low in sorted(dev.items())
        if prod.get(name, 0) <= low
    ]
    problems += [
        f"HorizontalPodAutoscaler/{n}: production needs at least 2 replicas" for n, v in prod.items() if v < 2
    ]
    return Outcome(problems)


def check_rules() -> Outcome:
    recorded = rules.recorded_names(layout.RULE_FILES)
    problems = []
    if not layout.RULE_FILES:
        problems.append("no rule files under deploy/prometheus/rules")
    for path in layout.RULE_FILES:
        problems += rules.check_rule_file(path, catalog(), recorded)
    return Outcome(problems, note=f"{len(catalog().metrics)} served series names known")


def check_promtool_rules() -> Outcome:
    if rules.promtool() is None:
        return Outcome(skipped=PROMTOOL_MISSING)
    code, output = rules.run_promtool("check", "rules", *map(str, layout.RULE_FILES))
    return Outcome([output] if code else [])


def check_promtool_tests() -> Outcome:
    if rules.promtool() is None:
        return Outcome(skipped=PROMTOOL_MISSING)
    if not layout.RULE_TESTS:
        return Outcome(["no promtool tests under deploy/prometheus/tests"])
    problems = []
    for test in layout.RULE_TESTS:
        code, output = rules.run_promtool("test", "rules", test.name, cwd=test.parent)
        if code:
            problems.append(output)
    return Outcome(problems, note=f"{len(layout.RULE_TESTS)} test file(s)")


def check_dashboards() -> Outcome:
    recorded = rules.recorded_names(layout.RULE_FILES)
    problems = []
    if not layout.DASHBOARDS:
        problems.append("no dashboards under deploy/grafana/dashboards")
    for path in layout.DASHBOARDS:
        problems += dashboard.check_dashboard(path, catalog(), recorded)
    return Outcome(problems)


def check_scrape_config() -> Outcome:
    """The Kubernetes scrape job finds every Felt pod of every overlay once, on its metrics port."""
    problems = []
    for overlay in layout.OVERLAYS:
        docs = rendered(overlay.name)
        namespace = None if overlay.name == "base" else netpol.render_namespace(docs)
        found = scrape.check_scrape_config(layout.SCRAPE_CONFIG, docs, namespace, layout.RULE_FILES)
        problems += [f"{overlay.name}: {p}" for p in found]
    return Outcome(problems)


def check_operator_objects() -> Outcome:
    """The PodMonitor scrapes what prometheus.yml does; the PrometheusRules are the rule files."""
    overlays = {}
    for overlay in layout.OVERLAYS:
        docs = rendered(overlay.name)
        overlays[overlay.name] = (docs, None if overlay.name == "base" else netpol.render_namespace(docs))
    monitoring = kustomize.render(layout.OPERATOR)
    return Outcome(
        operator.check_operator_objects(monitoring, overlays, layout.RULE_FILES),
        note=f"{len(monitoring)} objects rendered",
    )


def check_promtool_config() -> Outcome:
    if rules.promtool() is None:
        return Outcome(skipped=PROMTOOL_MISSING)
    config = scrape.load(layout.SCRAPE_CONFIG)
    config["rule_files"] = [str(layout.SCRAPE_CONFIG.parent.resolve() / f) for f in config["rule_files"]]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "prometheus.yml"
        (Path(tmp) / "targets.json").write_text("[]")
        path.write_text(json.dumps(scrape.for_promtool(config, str(Path(tmp) / "targets.json"))))
        code, output = rules.run_promtool("check", "config", str(path))
    return Outcome([output] if code else [], note="pod discovery checked by the relabelling check instead")


def check_docker() -> Outcome:
    return Outcome(
        dockerfile.check_dockerfile(
            layout.REPO / "Dockerfile", layout.REPO / ".dockerignore", layout.RUN_AS_USER
        )
    )


def all_checks() -> list[tuple[str, Callable[[], Outcome]]]:
    overlay_checks: list[tuple[str, Callable[[], Outcome]]] = [
        (f"kubernetes {o.name} ({o.path.relative_to(layout.REPO)})", lambda o=o: check_overlay(o))  # type: ignore[misc]
        for o in layout.OVERLAYS
    ]
    return [
        *overlay_checks,
        ("kubernetes: production has more replicas than dev", check_more_replicas_in_production),
        ("prometheus rules reference served metrics", check_rules),
        ("promtool check rules", check_promtool_rules),
        ("promtool test rules", check_promtool_tests),
        ("prometheus scrape configuration finds every Felt pod once", check_scrape_config),
        ("promtool check config", check_promtool_config),
        ("prometheus operator objects match the scrape configuration and rules", check_operator_objects),
        ("grafana dashboards reference served or recorded series", check_dashboards),
        ("Dockerfile and .dockerignore", check_docker),
    ]
