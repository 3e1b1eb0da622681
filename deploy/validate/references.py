"""Check that a PromQL expression only names series the code serves (or rules record), with label
matchers that use real labels and real values (gRPC codes, services and methods from protos/)."""

from __future__ import annotations

from deploy.validate import promql
from deploy.validate.catalog import TARGET_LABELS, Catalog, grpc_code_labels

# Series Prometheus makes itself for every target.
BUILTIN_SERIES = frozenset({"up", "scrape_duration_seconds", "scrape_samples_scraped"})


def check_expr(expr: str, where: str, catalog: Catalog, recorded: set[str]) -> list[str]:
    try:
        selectors = promql.selectors(expr)
    except promql.PromQLSyntaxError as exc:
        return [f"{where}: {exc}"]
    if not selectors:
        return [f"{where}: the expression selects no series: {expr!r}"]
    problems = []
    codes = grpc_code_labels()
    methods = catalog.grpc_methods()
    for sel in selectors:
        if sel.name is None:
            problems.append(f"{where}: selector without a metric name in {expr!r}")
            continue
        known_labels: frozenset[str] | None = None
        if sel.name in catalog.metrics:
            known_labels = catalog.metrics[sel.name].labels_of(sel.name)
        elif sel.name not in recorded and sel.name not in BUILTIN_SERIES:
            problems.append(
                f"{where}: metric {sel.name!r} is not served by libs/ or services/ nor recorded by a rule"
            )
            continue
        for m in sel.matchers:
            if known_labels is not None and m.label not in known_labels | TARGET_LABELS | {"__name__"}:
                problems.append(
                    f"{where}: {sel.name} has no label {m.label!r} (it has {sorted(known_labels)})"
                )
            if "$" in m.value:  # a Grafana variable: its values come from label_values()
                continue
            allowed = {"grpc_code": codes, "grpc_service": set(catalog.grpc_services), "grpc_method": methods}
            if m.label in allowed:
                values = [m.value] if m.op in ("=", "!=") else promql.alternatives(m.value)
                for value in values or []:
                    if value not in allowed[m.label]:
                        problems.append(f"{where}: {m.label}={value!r} never occurs (not in the code/protos)")
    return problems
