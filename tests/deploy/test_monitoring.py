"""Prometheus rules and the Grafana dashboard: they parse, name only series the code serves (found in
the source like `grep -rn poker_`) or the rules record, use real label values (gRPC codes spelled as
go-grpc-prometheus, services and methods from protos/), and the promtool unit tests pass and have teeth."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import time
import types
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import prometheus_client
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from servicekit.testing import free_port

from deploy.validate import catalog, dashboard, kustomize, layout, operator, promql, rules, scrape, suite
from deploy.validate.catalog import build_catalog

RULES = layout.RULE_FILES[0]
DASHBOARD = layout.DASHBOARDS[0]


def _promtool_or_skip() -> None:
    if rules.promtool() is None:
        msg = "!" * 30 + " " + suite.PROMTOOL_MISSING + " " + "!" * 30
        print(msg, file=sys.stderr)
        pytest.skip(msg)


# --- the metric catalog is what the code serves ---------------------------------------------------------


def test_catalog_finds_the_grpc_and_domain_metrics() -> None:
    found = build_catalog(layout.REPO)
    for name in (
        "grpc_server_started_total",
        "grpc_server_handled_total",
        "grpc_server_handling_seconds_bucket",
    ):
        assert name in found.metrics
    assert found.metrics["grpc_server_handled_total"].labels == {
        "grpc_type",
        "grpc_service",
        "grpc_method",
        "grpc_code",
        "protocol",
    }
    assert any(n.startswith("poker_") for n in found.metrics), "domain metrics poker_* are found"
    assert "poker.wallet.v1.WalletService" in found.grpc_services
    assert "Transfer" in found.grpc_services["poker.wallet.v1.WalletService"]


def test_catalog_agrees_with_the_real_registry_for_servicekit() -> None:
    """The source scan and prometheus_client's own exposition agree on servicekit's gRPC metrics.

    Run in a child process: creating a label set in this process would leave a stray series behind."""
    import servicekit.metrics as metrics

    probe = textwrap.dedent(
        """
        import prometheus_client, servicekit.metrics as m
        m.STARTED.labels("unary", "s", "m", "grpc"); m.HANDLED.labels("unary", "s", "m", "OK", "grpc")
        m.HANDLING_SECONDS.labels("unary", "s", "m", "grpc")
        print("\\n".join(s.name for f in prometheus_client.REGISTRY.collect() for s in f.samples
                         if s.name.startswith("grpc_server_")))
        """
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    served = set(out.split())
    scanned = {
        name
        for d in catalog.metric_definitions([Path(metrics.__file__).parent])
        for name in d.exposed_names()
        if name.startswith("grpc_server_")
    }
    assert served == scanned


def test_catalog_scan_matches_prometheus_client_for_every_definition_form(tmp_path: Path) -> None:
    source = textwrap.dedent(
        """
        import prometheus_client
        A = prometheus_client.Counter("poker_a_total", "Help, with a comma.", ["kind", "rule"])
        B = prometheus_client.Counter(
            "poker_b_chips_total",
            "Multi-line.",
        )
        C = prometheus_client.Gauge("poker_c_bytes", "A gauge.", ("shard",))
        D = prometheus_client.Histogram("poker_d_seconds", "Latency.", ["step"], buckets=(0.1, 1.0))
        E = prometheus_client.Summary("poker_e_seconds", "A summary.")
        """
    )
    (tmp_path / "m.py").write_text(source)
    registry = prometheus_client.CollectorRegistry()
    shim = types.SimpleNamespace(
        **{
            kind: (lambda cls: lambda *a, **k: cls(*a, registry=registry, **k))(
                getattr(prometheus_client, kind)
            )
            for kind in ("Counter", "Gauge", "Histogram", "Summary")
        }
    )
    exec(source.replace("import prometheus_client", ""), {"prometheus_client": shim})
    defs = {d.name: d for d in catalog.metric_definitions([tmp_path])}
    for family in registry.collect():
        labels = {k for s in family.samples for k in s.labels if k not in ("le", "quantile")}
        scanned = next(d for d in defs.values() if family.name in (d.name, d.name.removesuffix("_total")))
        assert scanned.labels is not None and labels <= scanned.labels
        # every sample prometheus_client would expose (label sets created) is predicted by the scan
        assert {s.name for s in family.samples} <= scanned.exposed_names()
    assert defs["poker_b_chips_total"].labels == frozenset()
    assert defs["poker_c_bytes"].labels == {"shard"}


# --- PromQL selector extraction -------------------------------------------------------------------------

names = st.from_regex(r"[a-z][a-z0-9_]{0,12}(:[a-z0-9_]{1,8}){0,2}", fullmatch=True).filter(
    lambda n: n not in promql.KEYWORDS | promql.GROUPING | promql.AGGREGATIONS
)
labels = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True).filter(lambda n: n not in promql.GROUPING)
values = st.text(alphabet="abcXYZ019_.|*$ -", max_size=12)


@settings(deadline=None)  # the machine is shared: no timing in unit tests
@given(
    metric=names,
    matchers=st.lists(st.tuples(labels, st.sampled_from(["=", "!=", "=~", "!~"]), values), max_size=3),
    grouping=st.lists(labels, min_size=1, max_size=3),
    other=names,
)
def test_selectors_finds_every_name_and_matcher(
    metric: str, matchers: list[tuple[str, str, str]], grouping: list[str], other: str
) -> None:
    body = ", ".join(f'{label}{op}"{value}"' for label, op, value in matchers)
    expr = (
        f"sum by ({', '.join(grouping)}) (rate({metric}{{{body}}}[5m] offset 1h))"
        f" / on ({grouping[0]}) group_left histogram_quantile(0.99, {other}) > bool 0.5"
    )
    found = promql.selectors(expr)
    assert [s.name for s in found] == [metric, other]
    assert [(m.label, m.op, m.value) for m in found[0].matchers] == matchers


def test_alternatives_only_for_plain_lists() -> None:
    assert promql.alternatives("Internal|Unknown") == ["Internal", "Unknown"]
    assert promql.alternatives("poker.dealer.v1.DealerService") == ["poker.dealer.v1.DealerService"]
    assert promql.alternatives(".*Dealer.*") is None


# --- rules ----------------------------------------------------------------------------------------------


def test_rules_reference_only_served_or_recorded_series() -> None:
    assert suite.check_rules().problems == []


def test_rules_cover_what_operators_need() -> None:
    every = rules.load_rules(RULES)
    alerts = {r["alert"]: r for r in every if "alert" in r}
    records = {r["record"]: r for r in every if "record" in r}
    assert "namespace_grpc_service:grpc_server_error_ratio:rate5m" in records
    assert (
        "histogram_quantile(0.99"
        in records["namespace_grpc_service_grpc_method:grpc_server_handling_seconds:p99_5m"]["expr"]
    )
    assert "poker_dealer_entropy_failures_total" in alerts["FeltDealerEntropyFailure"]["expr"]
    assert {"FeltHighErrorRatio", "FeltHighLatencyP99"} <= set(alerts)
    # table shards: a shard losing leases, flapping, tables nobody owns, renewals failing
    assert "poker_table_lease_losses_total" in alerts["FeltTableShardLostLeases"]["expr"]
    assert "poker_table_lease_losses_total" in alerts["FeltTableLeasesFlapping"]["expr"]
    assert "poker_table_unowned_tables" in alerts["FeltTablesWithoutOwner"]["expr"]
    assert "poker_table_lease_renewal_failures_total" in alerts["FeltTableLeaseRenewalsFailing"]["expr"]
    assert "poker_tournament_step_lag_seconds_bucket" in alerts["FeltTournamentDirectorLagging"]["expr"]
    assert "poker_tournament_steps_waiting" in alerts["FeltTournamentStepsStuck"]["expr"]


BROKEN_EXPRESSIONS = {
    "metric without its _total suffix": ("rate(grpc_server_handled[5m])", "is not served"),
    "typo in a domain metric": ("rate(poker_dealer_entropy_failure_total[5m])", "is not served"),
    "code spelled as the enum": ('grpc_server_handled_total{grpc_code="INTERNAL"}', "grpc_code='INTERNAL'"),
    "code in a regex": ('grpc_server_handled_total{grpc_code=~"Internal|Unavailible"}', "'Unavailible'"),
    "unknown gRPC service": (
        'grpc_server_handled_total{grpc_service="poker.dealer.v2.DealerService"}',
        "never",
    ),
    "unknown method": ('grpc_server_started_total{grpc_method="DealCards"}', "grpc_method='DealCards'"),
    "label the metric lacks": ('poker_wallet_transfers_total{table_id="7"}', "has no label 'table_id'"),
    "unrecorded recording-rule name": (
        "namespace_grpc_service:grpc_server_error_ratio:rate1m",
        "is not served",
    ),
    "unparsable": ('grpc_server_handled_total{grpc_code="OK"', "unbalanced"),
}


@pytest.mark.parametrize("case", sorted(BROKEN_EXPRESSIONS))
def test_rule_checker_catches(case: str, tmp_path: Path) -> None:
    expr, expected = BROKEN_EXPRESSIONS[case]
    path = tmp_path / "broken.rules.yml"
    path.write_text(
        "groups:\n  - name: broken\n    rules:\n"
        f"      - alert: Broken\n        expr: '{expr} > 0'\n"
        "        labels: {severity: page}\n        annotations: {summary: broken}\n"
    )
    recorded = rules.recorded_names([RULES])
    problems = rules.check_rule_file(path, suite.catalog(), recorded)
    assert any(expected in p for p in problems), problems


def test_promtool_check_rules() -> None:
    _promtool_or_skip()
    assert suite.check_promtool_rules().problems == []


def test_promtool_unit_tests_pass() -> None:
    _promtool_or_skip()
    assert suite.check_promtool_tests().problems == []


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # counting a refusal (NotFound) as a server error changes the ratio the tests pin
        ("Unknown|Internal|Unavailable|DataLoss", "Unknown|Internal|Unavailable|DataLoss|NotFound"),
        # a p99 computed without `le` is no quantile at all
        (
            "sum by (namespace, grpc_service, grpc_method, le)",
            "sum by (namespace, grpc_service, grpc_method)",
        ),
        # an alert that waits would not page at the first entropy failure
        ("poker_dealer_entropy_failures_total[5m])) > 0", "poker_dealer_entropy_failures_total[5m])) > 1"),
        # one incident (a single pause) is not flapping
        ("[1h:5m]) >= 3", "[1h:5m]) >= 1"),
        # counting each lost lease instead of the windows with losses pages on one big incident
        (
            "count_over_time((sum by (namespace, pod) (increase(poker_table_lease_losses_total[5m])) > 0)[1h:5m])",
            "sum_over_time((sum by (namespace, pod) (increase(poker_table_lease_losses_total[5m])) > 0)[1h:5m])",
        ),
        # a takeover's seconds without an owner must not page
        (
            "max by (namespace, kind) (poker_table_unowned_tables) > 0\n        for: 1m",
            "max by (namespace, kind) (poker_table_unowned_tables) > 0\n        for: 0m",
        ),
        # the largest count any shard sees, not the sum of every shard's view of the same tables
        (
            "max by (namespace, kind) (poker_table_unowned_tables)",
            "sum by (namespace, kind) (poker_table_unowned_tables)",
        ),
    ],
)
def test_promtool_unit_tests_fail_on_a_broken_rule(old: str, new: str, tmp_path: Path) -> None:
    _promtool_or_skip()
    _fails_with(RULES, old, new, tmp_path)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # a flood refused for an hour must not go unseen; nor may a short burst alert
        ("(rate(felt_rate_limited_total[5m])) > 1", "(rate(felt_rate_limited_total[5m])) > 5"),
        ("(rate(felt_rate_limited_total[5m])) > 1", "(rate(felt_rate_limited_total[5m])) > 0"),
        # three restarts in 15 minutes page
        (
            "(increase(felt_service_restarts_total[15m])) > 2",
            "(increase(felt_service_restarts_total[15m])) > 3",
        ),
    ],
)
def test_promtool_unit_tests_fail_on_a_broken_platform_rule(old: str, new: str, tmp_path: Path) -> None:
    _promtool_or_skip()
    _fails_with(layout.DEPLOY / "prometheus" / "rules" / "platform.rules.yml", old, new, tmp_path)


def _fails_with(broken: Path, old: str, new: str, tmp_path: Path) -> None:
    """The promtool tests of every rule file, run on `broken` with `old` replaced by `new`, fail."""
    text = broken.read_text()
    assert old in text
    (tmp_path / "rules").mkdir()
    (tmp_path / "tests").mkdir()
    for rule_file in layout.RULE_FILES:
        shutil.copy(rule_file, tmp_path / "rules" / rule_file.name)
    (tmp_path / "rules" / broken.name).write_text(text.replace(old, new))
    for test in layout.RULE_TESTS:
        shutil.copy(test, tmp_path / "tests" / test.name)
    code, output = rules.run_promtool(
        "test", "rules", *[t.name for t in layout.RULE_TESTS], cwd=tmp_path / "tests"
    )
    assert code != 0, output


# --- dashboard ------------------------------------------------------------------------------------------


def test_dashboard_queries_reference_served_or_recorded_series() -> None:
    assert suite.check_dashboards().problems == []


def test_dashboard_has_the_required_panels() -> None:
    board = json.loads(DASHBOARD.read_text())
    titles = " | ".join(p["title"] for p in dashboard.panels(board))
    for topic in (
        "Requests per second",
        "error ratio",
        "p50 latency",
        "p99 latency",
        "Wallet:",
        "Dealer:",
        "Table:",
    ):
        assert topic.lower() in titles.lower()
    exprs = [t["expr"] for p in dashboard.panels(board) for t in p.get("targets", [])]
    assert any("poker_evaluator_" in e for e in exprs) and any("poker_wallet_" in e for e in exprs)
    assert any("poker_table_hands_total" in e for e in exprs)
    # table shards: how many are live, the leases each holds, takeovers and losses, tables nobody owns
    for metric in (
        "poker_table_shards_live",
        "poker_table_leases_held",
        "poker_table_lease_takeovers_total",
        "poker_table_lease_losses_total",
        "poker_table_unowned_tables",
        "poker_table_fenced_writes_total",
    ):
        assert any(metric in e for e in exprs), metric


def test_dashboard_checker_catches_unknown_metric_and_pinned_datasource(tmp_path: Path) -> None:
    board = json.loads(DASHBOARD.read_text())
    target = next(p for p in dashboard.panels(board) if p.get("targets"))["targets"][0]
    target["expr"] = "rate(poker_wallet_transfer_total[5m])"
    target["datasource"] = {"type": "prometheus", "uid": "P1809F7CD0C75ACF3"}
    path = tmp_path / "felt.json"
    path.write_text(json.dumps(board))
    problems = dashboard.check_dashboard(path, suite.catalog(), rules.recorded_names([RULES]))
    assert any("poker_wallet_transfer_total" in p for p in problems)
    assert any("pins data source" in p for p in problems)


def test_dashboard_checker_catches_overlapping_panels(tmp_path: Path) -> None:
    board = json.loads(DASHBOARD.read_text())
    laid_out = [p for p in board["panels"] if p.get("type") != "row"]
    laid_out[1]["gridPos"] = dict(laid_out[0]["gridPos"])
    path = tmp_path / "felt.json"
    path.write_text(json.dumps(board))
    problems = dashboard.check_dashboard(path, suite.catalog(), rules.recorded_names([RULES]))
    assert any("overlap" in p for p in problems), problems


def test_dashboard_checker_catches_a_query_mixing_namespaces(tmp_path: Path) -> None:
    board = json.loads(DASHBOARD.read_text())
    target = next(p for p in dashboard.panels(board) if p.get("targets"))["targets"][0]
    target["expr"] = "sum(rate(grpc_server_handled_total[5m]))"
    path = tmp_path / "felt.json"
    path.write_text(json.dumps(board))
    problems = dashboard.check_dashboard(path, suite.catalog(), rules.recorded_names([RULES]))
    assert any("is not filtered by namespace" in p for p in problems), problems


# --- the scrape configuration ---------------------------------------------------------------------------


def test_scrape_config_finds_every_felt_pod_once() -> None:
    assert suite.check_scrape_config().problems == []
    config = scrape.load(layout.SCRAPE_CONFIG)
    targets = scrape.targets_of(config, suite.rendered("production"), "felt")
    apps = sorted(scrape.scraped(t)["app"] for t in targets)
    assert apps == ["dealer", "evaluator", "table", "tournament", "wallet"]


def _without(config: dict[str, Any], source: str) -> dict[str, Any]:
    relabels = scrape.job(config)["relabel_configs"]  # type: ignore[index]
    relabels[:] = [r for r in relabels if source not in r.get("source_labels", [])]
    return config


SCRAPE_BREAKS: dict[str, tuple[str, Callable[[dict[str, Any]], Any], str]] = {
    "every container port scraped": (
        "production",
        lambda c: _without(c, "__meta_kubernetes_pod_container_port_name"),
        "yields 4 scrape targets, not 1",
    ),
    "no namespace label": (
        "production",
        lambda c: _without(c, "__meta_kubernetes_namespace"),
        "series get namespace=None, not 'felt'",
    ),
    "no pod label": ("dev", lambda c: _without(c, "__meta_kubernetes_pod_name"), "get pod=None"),
    "every pod scraped, annotated or not": (
        "dev",
        lambda c: (
            _without(c, "__meta_kubernetes_pod_annotation_prometheus_io_scrape")
            and _without(c, "__meta_kubernetes_pod_container_port_name")
        ),
        "scrapes StatefulSet/wallet-postgres, which is not a Felt service",
    ),
    "service as a target label": (
        "production",
        lambda c: scrape.job(c)["relabel_configs"][-1].update({"target_label": "service"}),  # type: ignore[index]
        "a target label `service` renames",
    ),
    "dev namespace not watched": (
        "dev",
        lambda c: scrape.job(c)["kubernetes_sd_configs"][0]["namespaces"].update({"names": ["felt"]}),  # type: ignore[index]
        "does not watch the namespace felt-dev",
    ),
    "rules not loaded": ("production", lambda c: c.update({"rule_files": []}), "rule_files leaves out"),
}


@pytest.mark.parametrize("case", sorted(SCRAPE_BREAKS))
def test_scrape_checker_catches(case: str, tmp_path: Path) -> None:
    overlay, mutate, expected = SCRAPE_BREAKS[case]
    config = scrape.load(layout.SCRAPE_CONFIG)
    config["rule_files"] = [str(layout.SCRAPE_CONFIG.parent / f) for f in config["rule_files"]]
    mutate(config)
    path = tmp_path / "prometheus.yml"
    path.write_text(json.dumps(config))
    namespace = "felt" if overlay == "production" else "felt-dev"
    problems = scrape.check_scrape_config(path, suite.rendered(overlay), namespace, layout.RULE_FILES)
    assert any(expected in p for p in problems), problems


def test_promtool_checks_the_scrape_config() -> None:
    _promtool_or_skip()
    assert suite.check_promtool_config().problems == []


def test_local_stack_scrape_config_is_valid(tmp_path: Path) -> None:
    """`felt monitor`'s configuration (static targets, the same labels) passes promtool too."""
    _promtool_or_skip()
    from felt import monitoring

    config = monitoring.scrape_config(
        [monitoring.Target("table", "127.0.0.1:9104")], 2.0, monitoring.rule_files()
    )
    assert config["rule_files"] and config["scrape_configs"][0]["static_configs"][0]["labels"] == {
        "namespace": "local",
        "app": "table",
        "pod": "table-0",
    }
    path = tmp_path / "prometheus.yml"
    path.write_text(json.dumps(config))
    code, output = rules.run_promtool("check", "config", str(path))
    assert code == 0, output


def _pod_monitor_config() -> dict[str, Any]:
    """The scrape job the Prometheus Operator makes of deploy/k8s/monitoring's PodMonitor."""
    monitor = next(d for d in kustomize.render(layout.OPERATOR) if d["kind"] == "PodMonitor")
    return {
        "global": scrape.load(layout.SCRAPE_CONFIG)["global"],
        "scrape_configs": [operator.scrape_job(monitor)],
    }


JOBS: dict[str, Callable[[], dict[str, Any]]] = {
    "prometheus.yml": lambda: scrape.load(layout.SCRAPE_CONFIG),
    "PodMonitor": _pod_monitor_config,
}


@pytest.mark.slow
@pytest.mark.parametrize("source", sorted(JOBS))
def test_real_prometheus_relabels_the_pods_as_predicted(source: str, tmp_path: Path) -> None:
    """The discovered targets of the production pods, handed to a real Prometheus (file discovery stands
    in for Kubernetes discovery, which Debian's build leaves out): it keeps and labels exactly the targets
    deploy/validate/scrape.py predicts, so the offline relabelling check judges what Prometheus does; the
    same for the job the Prometheus Operator generates from the PodMonitor (deploy/validate/operator.py)."""
    from felt import monitoring

    binary = monitoring.prometheus_binary()
    if binary is None:
        pytest.skip("the Prometheus server is not installed: `apt-get install -y prometheus`")
    docs = suite.rendered("production")
    discovered = scrape.discovered(docs, "felt")
    targets_file = tmp_path / "targets.json"
    targets_file.write_text(
        json.dumps(
            [
                {"targets": [t["__address__"]], "labels": {k: v for k, v in t.items() if k != "__address__"}}
                for t in discovered
            ]
        )
    )
    config = scrape.for_promtool(JOBS[source](), str(targets_file))
    config["rule_files"] = []
    server = monitoring.LocalPrometheus(binary, tmp_path / "prometheus", "127.0.0.1", free_port())
    assert server.start(config), server.log_path.read_text()
    try:
        deadline = time.monotonic() + 30
        while True:
            with urllib.request.urlopen(f"{server.url}/api/v1/targets?state=any", timeout=5) as reply:
                data = json.loads(reply.read())["data"]
            if len(data["activeTargets"]) + len(data["droppedTargets"]) == len(discovered):
                break
            assert time.monotonic() < deadline, data
            time.sleep(0.2)
    finally:
        server.stop()
    predicted = sorted(
        json.dumps(scrape.scraped(t), sort_keys=True) for t in scrape.targets_of(JOBS[source](), docs, "felt")
    )
    actual = sorted(json.dumps(t["labels"], sort_keys=True) for t in data["activeTargets"])
    assert actual == predicted
    assert len(predicted) == 5


# --- the Prometheus Operator's objects (deploy/k8s/monitoring) ------------------------------------------


def test_operator_objects_match_the_plain_configuration() -> None:
    assert suite.check_operator_objects().problems == []
    text = (layout.OPERATOR / operator.RULES_FILE).read_text(encoding="utf-8")
    assert text == operator.rules_text(layout.RULE_FILES), "run `make operator-rules`"
    targets = scrape.targets_of(_pod_monitor_config(), suite.rendered("production"), "felt")
    apps = sorted(scrape.scraped(t)["app"] for t in targets)
    assert apps == ["dealer", "evaluator", "table", "tournament", "wallet"]


def _monitor(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == "PodMonitor")


def _endpoint(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return dict(_monitor(docs)["spec"]["podMetricsEndpoints"][0])


def _edit_an_alert(docs: list[dict[str, Any]]) -> None:
    rule = next(d for d in docs if d["kind"] == "PrometheusRule")
    alert = next(r for g in rule["spec"]["groups"] for r in g["rules"] if "alert" in r)
    alert["for"] = "1h"  # edited in the PrometheusRule, not in the rule file promtool tests


OPERATOR_BREAKS: dict[str, tuple[Callable[[list[dict[str, Any]]], Any], str]] = {
    "a rule edited in the PrometheusRule only": (_edit_an_alert, "not the rule files' groups"),
    "a rule file left out": (
        lambda docs: docs.remove(next(d for d in docs if d["kind"] == "PrometheusRule")),
        "not the rule files' groups",
    ),
    "the gRPC port scraped": (
        lambda docs: _monitor(docs)["spec"]["podMetricsEndpoints"][0].update({"port": "grpc"}),
        "not its metrics port",
    ),
    "one service selected": (
        lambda docs: _monitor(docs)["spec"]["selector"].update(
            {"matchLabels": {"app.kubernetes.io/name": "wallet"}}
        ),
        "Deployment/dealer yields 0 scrape targets",
    ),
    "no app label": (
        lambda docs: _monitor(docs)["spec"]["podMetricsEndpoints"][0].pop("relabelings"),
        "get app=None, not 'wallet'",
    ),
    "dev not watched": (
        lambda docs: _monitor(docs)["spec"]["namespaceSelector"].update({"matchNames": ["felt"]}),
        "watches ['felt'], prometheus.yml ['felt', 'felt-dev']",
    ),
    "a misspelt field": (
        lambda docs: _monitor(docs)["spec"]["podMetricsEndpoints"][0].update({"relabellings": []}),
        "unknown field podMetricsEndpoints[0].relabellings",
    ),
    "not selected by the Prometheus": (
        lambda docs: _monitor(docs)["metadata"].pop("labels"),
        "the Prometheus resource selects by app.kubernetes.io/part-of=felt",
    ),
    "another scrape interval": (
        lambda docs: _monitor(docs)["spec"]["podMetricsEndpoints"][0].update({"interval": "1m"}),
        "interval differs",
    ),
}


@pytest.mark.parametrize("case", sorted(OPERATOR_BREAKS))
def test_operator_checker_catches(case: str) -> None:
    mutate, expected = OPERATOR_BREAKS[case]
    docs = kustomize.render(layout.OPERATOR)
    mutate(docs)
    overlays = {
        name: (suite.rendered(name), namespace)
        for name, namespace in (("production", "felt"), ("dev", "felt-dev"))
    }
    problems = operator.check_operator_objects(docs, overlays, layout.RULE_FILES)
    assert any(expected in p for p in problems), problems
