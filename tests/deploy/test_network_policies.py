"""NetworkPolicies (deploy/k8s/base/networkpolicies.yaml), evaluated offline by deploy/validate/netpol.py:
the rendered overlays allow exactly the calls of the architecture, and each way of getting a policy wrong
(too open, too closed, the wrong port, the wrong namespace) is caught with a message naming the connection.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from deploy.validate import layout, manifests, netpol, suite

Doc = dict[str, Any]


def rendered(overlay: str) -> list[Doc]:
    return copy.deepcopy(suite.rendered(overlay))


def policy(docs: list[Doc], name: str) -> Doc:
    doc = manifests.find(docs, "NetworkPolicy", name)
    assert doc is not None, name
    return doc


def allowed(docs: list[Doc]) -> set[str]:
    policies = netpol.Policies(docs, netpol.render_namespace(docs))
    return {str(c) for c in netpol.connections(netpol.endpoints(docs)) if policies.allowed(c)}


@pytest.mark.parametrize("overlay", [o.name for o in layout.OVERLAYS])
def test_overlays_allow_exactly_the_architectures_calls(overlay: str) -> None:
    docs = rendered(overlay)
    assert netpol.check_network_policies(docs) == []
    open_ = allowed(docs)
    database = (
        "wallet-postgres:5432/TCP (postgres)" if overlay == "dev" else "managed database:5432/TCP (postgres)"
    )
    for call in (
        "table -> dealer:51052/TCP (internal)",
        "table -> evaluator:51051/TCP (internal)",
        "table -> wallet:51053/TCP (internal)",
        "tournament -> table:51054/TCP (internal)",
        "tournament -> wallet:51053/TCP (internal)",
        "tournament -> dealer:51052/TCP (internal)",
        "gateway -> evaluator:8081/TCP (web)",
        "gateway -> dealer:8082/TCP (web)",
        "gateway -> wallet:8083/TCP (web)",
        "gateway -> table:8084/TCP (web)",
        "gateway -> tournament:8085/TCP (web)",
        "front-end -> table:50054/TCP (grpc)",
        "front-end -> tournament:50055/TCP (grpc)",
        "front-end -> evaluator:50051/TCP (grpc)",
        "front-end -> dealer:50052/TCP (grpc)",
        "prometheus -> table:9104/TCP (metrics)",
        f"wallet -> {database}",
        f"table -> {database}",
        f"tournament -> {database}",
    ):
        assert call in open_
    for refused in (
        "front-end -> wallet:50053/TCP (grpc)",  # players reach chips through the table, never the ledger
        "dealer -> wallet:50053/TCP (grpc)",
        "evaluator -> internet:443/TCP",
        "stray pod in the namespace -> wallet:50053/TCP (grpc)",
        "pod of another namespace -> table:9104/TCP (metrics)",
        "front-end -> table:9104/TCP (metrics)",
        "dealer -> table:50054/TCP (grpc)",
        "table -> dealer:50052/TCP (grpc)",  # services call each other's internal ports only
        "tournament -> table:50054/TCP (grpc)",
        "gateway -> wallet:50053/TCP (grpc)",  # the Gateway reaches doors, nothing else
        "gateway -> table:51054/TCP (internal)",
        "front-end -> table:8084/TCP (web)",
        "front-end -> dealer:51052/TCP (internal)",
        "stray pod in the namespace -> table:8084/TCP (web)",
        "pod of another namespace -> tournament:8085/TCP (web)",
    ):
        assert refused not in open_


def _drop(name: str) -> Callable[[list[Doc]], None]:
    def mutate(docs: list[Doc]) -> None:
        docs.remove(policy(docs, name))

    return mutate


def _edit(name: str, change: Callable[[Doc], None]) -> Callable[[list[Doc]], None]:
    def mutate(docs: list[Doc]) -> None:
        change(policy(docs, name)["spec"])

    return mutate


def _add_ingress_peer(spec: Doc) -> None:
    spec["ingress"][0]["from"].append({"namespaceSelector": {"matchLabels": {"felt/access": "front-end"}}})


MUTATIONS: dict[str, tuple[str, Callable[[list[Doc]], None], str]] = {
    "no default deny": (
        "production",
        _drop("default-deny"),
        "front-end -> stray pod in the namespace:8080/TCP (http) is allowed",
    ),
    "front-ends reach the ledger": (
        "production",
        _edit("wallet", _add_ingress_peer),
        "front-end -> wallet:51053/TCP (internal) is allowed, but the architecture has no such call",
    ),
    "table cut off from the wallet": (
        "production",
        _edit("table", lambda spec: spec["egress"].pop(2)),
        "table -> wallet:51053/TCP (internal) is refused, but the architecture needs it (table calls wallet",
    ),
    "tournament cannot reach its tables": (
        "dev",
        _edit("table", lambda spec: spec["ingress"].pop(0)),
        "tournament -> table:51054/TCP (internal) is refused",
    ),
    "ingress on a port name no container has": (
        "production",
        _edit("dealer", lambda spec: spec["ingress"][0]["ports"][0].update({"port": "grpcs"})),
        "table -> dealer:51052/TCP (internal) is refused",
    ),
    "egress to the wrong port number": (
        "production",
        _edit("tournament", lambda spec: spec["egress"][0]["ports"][0].update({"port": 50054})),
        "tournament -> table:51054/TCP (internal) is refused",
    ),
    "dealer opens anything": (
        "production",
        _edit("dealer", lambda spec: spec.update({"egress": [{}]})),
        "dealer -> internet:443/TCP is allowed",
    ),
    "metrics scraped from every namespace": (
        "production",
        _edit("metrics-scrape", lambda spec: spec["ingress"][0]["from"][0].update({"namespaceSelector": {}})),
        "pod of another namespace -> dealer:9102/TCP (metrics) is allowed",
    ),
    "no DNS": (
        "dev",
        _drop("dns"),
        "wallet -> kube-dns:53/UDP (dns) is refused, but the architecture needs it (every pod resolves names)",
    ),
    "DNS over TCP forgotten": (
        "production",
        _edit("dns", lambda spec: spec["egress"][0]["ports"].pop(1)),
        "table -> kube-dns:53/TCP (dns-tcp) is refused",
    ),
    "dev database clients reach any address": (
        "dev",
        _edit(
            "database", lambda spec: spec["egress"][0].update({"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}]})
        ),
        "wallet -> internet:5432/TCP is allowed",
    ),
    "the dealer given the database": (
        "production",
        _edit(
            "database",
            lambda spec: spec["podSelector"]["matchExpressions"][0]["values"].append("dealer"),
        ),
        "dealer -> managed database:5432/TCP (postgres) is allowed",
    ),
    "dev database open to the namespace": (
        "dev",
        _edit("wallet-postgres", lambda spec: spec["ingress"][0].pop("from")),
        "pod of another namespace -> wallet-postgres:5432/TCP (postgres) is allowed",
    ),
    "services calling the public port": (
        "production",
        _edit("table", lambda spec: spec["egress"][0]["ports"][0].update({"port": 50052})),
        "table -> dealer:51052/TCP (internal) is refused, but the architecture needs it (table calls dealer",
    ),
    "the doors shut": (
        "dev",
        _drop("web-gateway"),
        "gateway -> table:8084/TCP (web) is refused, but the architecture needs it (the Gateway sends "
        "browsers' calls to table's door)",
    ),
    "the gateway given every port": (
        "production",
        _edit("web-gateway", lambda spec: spec["ingress"][0].pop("ports")),
        "gateway -> wallet:50053/TCP (grpc) is allowed, but the architecture has no such call",
    ),
    "the doors open to every namespace": (
        "production",
        _edit("web-gateway", lambda spec: spec["ingress"][0]["from"][0].update({"namespaceSelector": {}})),
        "pod of another namespace -> wallet:8083/TCP (web) is allowed",
    ),
    "front-ends given the doors": (
        "production",
        _edit("web-gateway", _add_ingress_peer),
        "front-end -> evaluator:8081/TCP (web) is allowed",
    ),
    "a door left out": (
        "production",
        _edit(
            "web-gateway", lambda spec: spec["podSelector"]["matchExpressions"][0]["values"].remove("dealer")
        ),
        "gateway -> dealer:8082/TCP (web) is refused",
    ),
    "monitoring namespace given gRPC": (
        "production",
        _edit("metrics-scrape", lambda spec: spec["ingress"][0].pop("ports")),
        "prometheus -> wallet:50053/TCP (grpc) is allowed",
    ),
}


@pytest.mark.parametrize("case", sorted(MUTATIONS))
def test_checker_catches(case: str) -> None:
    overlay, mutate, expected = MUTATIONS[case]
    docs = rendered(overlay)
    mutate(docs)
    problems = netpol.check_network_policies(docs)
    assert any(expected in p for p in problems), f"{case}: expected {expected!r} in {problems}"


def test_no_policy_at_all_is_refused() -> None:
    docs = [d for d in rendered("production") if d["kind"] != "NetworkPolicy"]
    assert netpol.check_network_policies(docs) == [
        "no NetworkPolicy: every pod accepts and opens any connection"
    ]


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        ({}, {"a": "1"}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "2"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]}, {"a": "2"}, True),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1"]}]}, {}, False),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {}, True),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {"a": "1"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"a": ""}, True),
        ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"a": ""}, False),
    ],
)
def test_label_selectors_follow_kubernetes(selector: Doc, labels: dict[str, str], matches: bool) -> None:
    assert netpol.selector_matches(selector, labels) is matches


def test_ip_blocks_honour_their_exceptions() -> None:
    outside = netpol.Endpoint("x", "198.51.100.20", (netpol.Port(5432),))
    peer = {"ipBlock": {"cidr": "198.51.100.0/24", "except": ["198.51.100.16/28"]}}
    assert not netpol._peer_matches(peer, outside, "felt")
    assert netpol._peer_matches({"ipBlock": {"cidr": "198.51.100.0/24"}}, outside, "felt")
