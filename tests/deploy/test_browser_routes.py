"""The browser doors behind the operator's Gateway (deploy/k8s/components/browser-routes; the production
overlay's table-shard-doors.yaml), checked offline by deploy/validate/gateway.py: every call a browser may
make reaches the door of the Service that serves it, nothing else is routed, streams are never timed out,
each table shard has its own path, and an HTTPRoute that the Gateway API CRD would refuse is refused.
Each way of getting a route wrong is tried on a rendered overlay and must be reported by name.
"""

from __future__ import annotations

import copy
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from felt import registry

from deploy.validate import gateway, layout, manifests, schemas, suite

Doc = dict[str, Any]


def rendered(overlay: str) -> list[Doc]:
    return copy.deepcopy(suite.rendered(overlay))


def routes(docs: list[Doc]) -> list[Doc]:
    return [d for d in docs if d["kind"] == "HTTPRoute"]


def route(docs: list[Doc], name: str) -> Doc:
    doc = manifests.find(docs, "HTTPRoute", name)
    assert doc is not None, name
    return doc


def problems_of(docs: list[Doc]) -> list[str]:
    catalog = suite.catalog()
    shapes = [p for d in routes(docs) for p in gateway.route_shape(d)]
    return shapes + gateway.check_routes(docs, catalog.grpc_services, catalog.streaming)


def served(docs: list[Doc], path: str) -> str:
    hits = gateway.resolve(routes(docs), path)
    assert len(hits) == 1, hits
    return f"{hits[0].service}:{hits[0].port}{hits[0].path} {dict(sorted(hits[0].timeouts.items()))}"


@pytest.mark.parametrize("overlay", [o.name for o in layout.OVERLAYS])
def test_overlays_route_exactly_the_browser_calls(overlay: str) -> None:
    docs = rendered(overlay)
    assert problems_of(docs) == (
        [] if overlay != "base" else ["no HTTPRoute: browsers cannot reach the doors"]
    )
    assert schemas.check_schemas(docs, versions=("1.37.0",)) == []


@pytest.mark.parametrize("overlay", ["dev", "production"])
def test_calls_reach_their_doors_and_streams_are_never_timed_out(overlay: str) -> None:
    docs = rendered(overlay)
    unbounded, unary = "{'backendRequest': '0s', 'request': '0s'}", "{'request': '60s'}"
    for path, where in {
        "/poker.table.v1.TableService/WatchTable": f"table:8084/poker.table.v1.TableService/WatchTable {unbounded}",
        "/poker.table.v1.TableService/Act": f"table:8084/poker.table.v1.TableService/Act {unary}",
        "/poker.table.v1.CasinoService/WatchCasinoTable": f"table:8084/poker.table.v1.CasinoService/WatchCasinoTable "
        f"{unbounded}",
        "/poker.identity.v1.IdentityService/WhoAmI": f"table:8084/poker.identity.v1.IdentityService/WhoAmI {unary}",
        "/poker.tournament.v1.TournamentService/WatchTournament": "tournament:8085/poker.tournament.v1."
        f"TournamentService/WatchTournament {unbounded}",
        "/poker.evaluator.v1.EvaluatorService/Evaluate": f"evaluator:8081/poker.evaluator.v1.EvaluatorService/"
        f"Evaluate {unary}",
        "/poker.wallet.v1.WalletService/ListAccounts": f"wallet:8083/poker.wallet.v1.WalletService/ListAccounts "
        f"{unary}",
        "/poker.dealer.v1.DealerService/Verify": f"dealer:8082/poker.dealer.v1.DealerService/Verify {unary}",
    }.items():
        assert served(docs, path) == where
    for never in (
        "/poker.table.v1.TableDirectorService/SeatPlayer",  # service tokens only
        "/poker.wallet.v1.WalletService/Transfer",  # money moves are the services'
        "/poker.dealer.v1.DealerService/Deal",  # a live shoe is in one pod's memory
        "/metrics",
        "/poker.table.v1.TableServiceX/Act",  # prefixes match whole path elements
    ):
        assert gateway.resolve(routes(docs), never) == []


@pytest.mark.parametrize(
    ("overlay", "gateway_name", "listener"), [("dev", "felt-dev", "http"), ("production", "felt", "https")]
)
def test_each_overlay_names_its_gateway(overlay: str, gateway_name: str, listener: str) -> None:
    refs = {str(r["spec"]["parentRefs"]) for r in routes(rendered(overlay))}
    assert refs == {
        str(
            [
                {
                    "group": gateway.GROUP,
                    "kind": "Gateway",
                    "name": gateway_name,
                    "namespace": "felt-gateway",
                    "sectionName": listener,
                }
            ]
        )
    }


def test_production_allows_no_web_origin_until_the_operator_names_one() -> None:
    """FELT_WEB_ORIGINS is in the production ConfigMap, empty: servicekit reads it as no origin at all."""
    from servicekit.config import load_server_config

    config_map = next(d for d in rendered("production") if d["kind"] == "ConfigMap")  # felt-config-<hash>
    assert config_map["data"]["FELT_WEB_ORIGINS"] == ""
    with tempfile.TemporaryDirectory() as data:
        environ = {**config_map["data"], "FELT_DATA_DIR": data}
        assert load_server_config("table", environ=environ).web_origins == ()
        environ["FELT_WEB_ORIGINS"] = "https://play.example.com"
        assert load_server_config("table", environ=environ).web_origins == ("https://play.example.com",)


def test_each_production_shard_has_its_own_path() -> None:
    docs = rendered("production")
    unbounded = "{'backendRequest': '0s', 'request': '0s'}"
    for shard in ("table-0", "table-1", "table-2"):
        assert served(docs, f"/{shard}/poker.table.v1.TableService/WatchTable") == (
            f"{shard}:8084/poker.table.v1.TableService/WatchTable {unbounded}"
        )
        assert served(docs, f"/{shard}/poker.table.v1.TableService/Act").startswith(
            f"{shard}:8084/poker.table.v1.TableService/Act "
        )
        assert gateway.resolve(routes(docs), f"/{shard}/poker.table.v1.TableDirectorService/SeatPlayer") == []
        service = manifests.find(docs, "Service", shard)
        assert service is not None
        assert [w.name for w in manifests.service_workloads(service, docs)] == ["table"]
    assert _table_env(docs, "FELT_TABLE_ADVERTISE_WEB_URL")["value"] == "$(PUBLIC_WEB_URL)/$(POD_NAME)"
    # A fourth shard pod would have no door of its own until its Service and route are added.
    get(docs, "StatefulSet", "table")["spec"]["replicas"] = 4
    assert any("table shard table-3: no Service selects it alone" in p for p in problems_of(docs))


def test_browser_calls_agree_with_what_each_process_serves() -> None:
    """BROWSER_CALLS names, for each Felt service, gRPC services its process really serves (the specs the
    services build), every method it lists exists, and what is left unrouted is service-only."""
    from servicekit.testing import config_for_tests

    grpc_services = suite.catalog().grpc_services
    for name, calls in gateway.BROWSER_CALLS.items():
        entry = registry.find(name)
        assert entry is not None, name
        with tempfile.TemporaryDirectory() as data:
            spec = entry.service_spec(config_for_tests(name, Path(data)))
            spec.on_stop()  # building a spec may open stores and start threads: release them
        serves = {descriptor.full_name for descriptor in spec.services}
        assert set(calls) <= serves, name
        assert serves - set(calls) <= gateway.SERVICE_ONLY, name
        for grpc_service, methods in calls.items():
            assert methods is None or methods <= grpc_services[grpc_service], grpc_service


def test_every_door_is_routed_and_open_to_the_gateway() -> None:
    """Each route's backend is a door the NetworkPolicies let the Gateway's namespace reach, and every
    Felt Service's door has a route."""
    from deploy.validate import netpol

    for overlay in ("dev", "production"):
        docs = rendered(overlay)
        policies = netpol.Policies(docs, netpol.render_namespace(docs))
        found = netpol.endpoints(docs)
        gateway_pod = next(e for e in found if e.name == "gateway")
        backends = {(b.service, b.port) for r in routes(docs) for b in _backends(r)}
        assert {s for s, _ in backends} >= set(gateway.BROWSER_CALLS)
        for service, port in backends:
            doc = manifests.find(docs, "Service", service)
            assert doc is not None
            for workload in manifests.service_workloads(doc, docs):
                pod = next(e for e in found if e.name == workload.name)
                door = next(p for p in pod.ports if p.number == port)
                assert door.name == "web"
                assert policies.allowed(netpol.Connection(gateway_pod, pod, door)), (overlay, service)


def _backends(doc: Doc) -> list[gateway.Hit]:
    return [
        gateway.Hit(doc["metadata"]["name"], i, b["name"], b["port"], "", {})
        for i, rule in enumerate(doc["spec"]["rules"])
        for b in rule["backendRefs"]
    ]


def get(docs: list[Doc], kind: str, name: str) -> Doc:
    doc = manifests.find(docs, kind, name)
    assert doc is not None, f"{kind}/{name}"
    return doc


def _table_env(docs: list[Doc], name: str) -> Doc:
    env = get(docs, "StatefulSet", "table")["spec"]["template"]["spec"]["containers"][0]["env"]
    found: Doc = next(e for e in env if e["name"] == name)  # the item itself: mutations change it
    return found


def _backends_to(spec: Doc, service: str) -> None:
    for rule in spec["rules"]:
        rule["backendRefs"][0]["name"] = service


def _edit(name: str, change: Callable[[Doc], None]) -> Callable[[list[Doc]], None]:
    def mutate(docs: list[Doc]) -> None:
        change(route(docs, name)["spec"])

    return mutate


def _catch_all(spec: Doc) -> None:
    spec["rules"][1]["matches"].append({"path": {"type": "PathPrefix", "value": "/"}})


MUTATIONS: dict[str, tuple[str, Callable[[list[Doc]], None], str]] = {
    "a catch-all route": (
        "dev",
        _edit("felt-table", _catch_all),
        "/poker.table.v1.TableDirectorService/SeatPlayer is routed (HTTPRoute/felt-table rule 1 -> "
        "Service/table:8084/poker.table.v1.TableDirectorService/SeatPlayer), but no browser may call it "
        "(service tokens only)",
    ),
    "the whole wallet routed": (
        "production",
        _edit(
            "felt-wallet",
            lambda s: s["rules"][0]["matches"].append(
                {"path": {"type": "PathPrefix", "value": "/poker.wallet.v1.WalletService"}}
            ),
        ),
        "/poker.wallet.v1.WalletService/Transfer is routed",
    ),
    "stream timed out by the gateway": (
        "production",
        _edit("felt-tournament", lambda s: s["rules"][0].update({"timeouts": {"request": "60s"}})),
        "/poker.tournament.v1.TournamentService/WatchTournament is a stream but HTTPRoute/felt-tournament rule 0",
    ),
    "stream rule dropped": (
        "dev",
        _edit("felt-table", lambda s: s["rules"].pop(0)),
        "/poker.table.v1.TableService/WatchTable is a stream but HTTPRoute/felt-table rule 0 -> "
        "Service/table:8084/poker.table.v1.TableService/WatchTable times it out ({'request': '60s'})",
    ),
    "route to the gRPC port": (
        "production",
        _edit("felt-evaluator", lambda s: s["rules"][0]["backendRefs"][0].update({"port": 50051})),
        "Service/evaluator port 50051 is 'grpc', not the door (web)",
    ),
    "route to a Service that is not there": (
        "production",
        _edit("felt-dealer", lambda s: s["rules"][0]["backendRefs"][0].update({"name": "dealers"})),
        "backend Service/dealers does not exist",
    ),
    "calls sent to the wrong door": (
        "dev",
        _edit(
            "felt-tournament",
            lambda s: s["rules"][1]["backendRefs"][0].update({"name": "table", "port": 8084}),
        ),
        "/poker.tournament.v1.TournamentService/ListTournaments goes to HTTPRoute/felt-tournament rule 1 -> "
        "Service/table:8084",
    ),
    "a service forgotten": (
        "dev",
        lambda docs: docs.remove(route(docs, "felt-evaluator")),
        "/poker.evaluator.v1.EvaluatorService/Evaluate is not routed, but browsers call it",
    ),
    "a misspelt method": (
        "production",
        _edit(
            "felt-wallet",
            lambda s: s["rules"][0]["matches"][0]["path"].update(
                {"value": "/poker.wallet.v1.WalletService/GetAcount"}
            ),
        ),
        "path '/poker.wallet.v1.WalletService/GetAcount' names no gRPC service or method",
    ),
    "no Gateway named": (
        "production",
        _edit("felt-table", lambda s: s.update({"parentRefs": []})),
        "HTTPRoute/felt-table: no parentRefs",
    ),
    "a shard's path sent to another shard": (
        "production",
        _edit("felt-table-1", lambda s: _backends_to(s, "table-2")),
        "/table-1/poker.table.v1.TableService/WatchTable goes to HTTPRoute/felt-table-1 rule 0 -> "
        "Service/table-2:8084",
    ),
    "a shard's prefix left on": (
        "production",
        _edit("felt-table-2", lambda s: s["rules"][2].pop("filters")),
        "/table-2/poker.table.v1.TableService/Act goes to HTTPRoute/felt-table-2 rule 2 -> "
        "Service/table-2:8084/table-2/poker.table.v1.TableService/Act",
    ),
    "a shard without its Service": (
        "production",
        lambda docs: docs.remove(get(docs, "Service", "table-0")),
        "table shard table-0: no Service selects it alone",
    ),
    "a shard advertising the shared door": (
        "production",
        lambda docs: _table_env(docs, "FELT_TABLE_ADVERTISE_WEB_URL").update({"value": "$(PUBLIC_WEB_URL)"}),
        "FELT_TABLE_ADVERTISE_WEB_URL='$(PUBLIC_WEB_URL)' must be the Gateway's public URL followed by "
        "/$(POD_NAME)",
    ),
    # what the Gateway API CRD (v1, standard channel) refuses
    "misspelled field": (
        "dev",
        _edit("felt-table", lambda s: s["rules"][0].update({"backendRef": s["rules"][0]["backendRefs"]})),
        "HTTPRoute/felt-table: spec.rules.0: 'backendRef' was unexpected",
    ),
    "timeout that is not a duration": (
        "production",
        _edit("felt-evaluator", lambda s: s["rules"][0].update({"timeouts": {"request": "forever"}})),
        "spec.rules.0.timeouts.request: 'forever' does not match",
    ),
    "backend timeout above the request's": (
        "production",
        _edit(
            "felt-evaluator",
            lambda s: s["rules"][0].update({"timeouts": {"request": "10s", "backendRequest": "1m"}}),
        ),
        "backendRequest timeout must not be greater than request timeout",
    ),
    "prefix rewrite with two matches": (
        "production",
        _edit(
            "felt-table-0",
            lambda s: s["rules"][2]["matches"].append(
                {"path": {"type": "PathPrefix", "value": "/table-0/x"}}
            ),
        ),
        "exactly one PathPrefix match must be specified",
    ),
    "backend without its port": (
        "dev",
        _edit("felt-dealer", lambda s: s["rules"][0]["backendRefs"][0].pop("port")),
        "spec.rules.0.backendRefs.0: 'port' is required",
    ),
    "too many rules": (
        "dev",
        _edit("felt-evaluator", lambda s: s.update({"rules": s["rules"] * 17})),
        "spec.rules: at most 16 items (has 17)",
    ),
    "relative path": (
        "dev",
        _edit(
            "felt-evaluator",
            lambda s: s["rules"][0]["matches"][0]["path"].update({"value": "poker.evaluator.v1"}),
        ),
        "must be an absolute path",
    ),
}


@pytest.mark.parametrize("case", sorted(MUTATIONS))
def test_checker_catches(case: str) -> None:
    overlay, mutate, expected = MUTATIONS[case]
    docs = rendered(overlay)
    mutate(docs)
    problems = problems_of(docs)
    assert any(expected in p for p in problems), f"{case}: expected {expected!r} in {problems}"


@pytest.mark.parametrize(
    ("prefix", "path", "matches"),
    [
        ("/poker.table.v1.TableService", "/poker.table.v1.TableService/Act", True),
        ("/poker.table.v1.TableService/", "/poker.table.v1.TableService/Act", True),
        ("/poker.table.v1.TableService", "/poker.table.v1.TableService", True),
        ("/poker.table.v1.TableService", "/poker.table.v1.TableServiceX/Act", False),
        ("/", "/anything", True),
    ],
)
def test_path_prefixes_match_whole_elements(prefix: str, path: str, matches: bool) -> None:
    assert gateway._prefix_matches(prefix, path) is matches


def test_durations_follow_the_gateway_api() -> None:
    assert [gateway.seconds(d) for d in ("0s", "60s", "1h30m", "500ms")] == [0, 60, 5400, 0.5]


@pytest.mark.parametrize("overlay", ["dev", "production"])
def test_the_gateway_speaks_tls_to_every_door_it_routes_to(overlay: str) -> None:
    """Issue 22: the doors serve TLS, so each routed Service has a BackendTLSPolicy on its web port naming
    a name of the pods' Certificate and the CA; a route without one, or a policy naming another host or
    with no CA, is reported."""
    docs = rendered(overlay)
    policies = [d for d in docs if d["kind"] == "BackendTLSPolicy"]
    targets = {r["name"] for p in policies for r in p["spec"]["targetRefs"]}
    backends = {b["name"] for r in routes(docs) for rule in r["spec"]["rules"] for b in rule["backendRefs"]}
    assert backends <= targets and {"table", "tournament", "wallet", "dealer", "evaluator"} <= targets
    assert [p for d in policies for p in gateway.backend_tls_shape(d)] == []

    without = [
        d for d in docs if not (d["kind"] == "BackendTLSPolicy" and d["metadata"]["name"] == "felt-wallet")
    ]
    assert any("Service/wallet: routed to but no BackendTLSPolicy" in p for p in problems_of(without))
    elsewhere = copy.deepcopy(docs)
    policy = next(
        d for d in elsewhere if d["kind"] == "BackendTLSPolicy" and d["metadata"]["name"] == "felt-dealer"
    )
    policy["spec"]["validation"]["hostname"] = "dealer.example.com"
    assert any("hostname 'dealer.example.com' is on no Certificate" in p for p in problems_of(elsewhere))
    del policy["spec"]["validation"]["caCertificateRefs"]
    assert any("exactly one of caCertificateRefs" in p for p in gateway.backend_tls_shape(policy))
