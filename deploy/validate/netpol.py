"""NetworkPolicies, evaluated offline: which connections the rendered policies let through, compared with
the calls the architecture has (ARCHITECTURE.md, "calls" column), in both directions.

Every pair of endpoints is tried on every port its destination listens on: the rendered workloads, plus
stand-ins for what lives around them (a front-end in a namespace labelled for it, the Gateway's proxies
in theirs, Prometheus in `monitoring`, kube-dns, a stray pod in the namespace and one in another
namespace, an address on the internet, and the managed database when the render has none of its own). A
connection is allowed when the source's egress and the destination's ingress both allow it, with the
Kubernetes semantics: a pod no policy selects for a direction is open in that direction; once selected,
only what some rule of a selecting policy matches goes through. Endpoints outside the render's namespace
are governed by policies we do not ship, so only our side of those connections is evaluated.

Simplification, on the strict side: an ipBlock also matches pod addresses (whether it does is up to the
network plugin), so a wide ipBlock is judged as opening the pods it covers too.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from deploy.validate import gateway
from deploy.validate.manifests import Doc, felt_service_of, migrates, workloads

# ARCHITECTURE.md, "The services", column "calls" (and the front-ends of "Real-time play").
CALLS: Mapping[str, frozenset[str]] = {
    "table": frozenset({"dealer", "evaluator", "wallet"}),
    "tournament": frozenset({"table", "wallet", "dealer"}),
}
FRONT_END_CALLS = frozenset({"table", "tournament", "evaluator", "dealer"})
DATABASE_CLIENTS = frozenset({"wallet", "table", "tournament"})
FRONT_END_NAMESPACE_LABEL = ("felt/access", "front-end")
# The Gateway's proxies (browsers' calls, deploy/k8s/components/browser-routes) reach these doors.
GATEWAY_NAMESPACE_LABEL = ("felt/web-gateway", "true")
DOORS = frozenset(gateway.BROWSER_CALLS)
MONITORING_NAMESPACE = "monitoring"
NAMESPACE_NAME = "kubernetes.io/metadata.name"
BASE_NAMESPACE = "default"  # where `kubectl apply -k base` would put the base's resources


@dataclass(frozen=True)
class Port:
    number: int
    protocol: str = "TCP"
    name: str | None = None

    def __str__(self) -> str:
        named = f" ({self.name})" if self.name else ""
        return f"{self.number}/{self.protocol}{named}"


@dataclass(frozen=True)
class Endpoint:
    """A pod or an address. `governed`: its namespace's policies are the render's (we evaluate its side)."""

    name: str
    ip: str
    ports: tuple[Port, ...]
    namespace: str | None = None  # None: an address outside the cluster
    labels: Mapping[str, str] = field(default_factory=dict)
    namespace_labels: Mapping[str, str] = field(default_factory=dict)
    governed: bool = False
    service: str | None = None  # the Felt service it runs
    database: bool = False
    migrates: tuple[str, ...] = ()  # the services whose databases it migrates (`felt migrate`)


@dataclass(frozen=True)
class Connection:
    source: Endpoint
    destination: Endpoint
    port: Port

    def __str__(self) -> str:
        return f"{self.source.name} -> {self.destination.name}:{self.port}"


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """A LabelSelector (matchLabels and matchExpressions); an empty selector matches everything."""
    selector = selector or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values") or []
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def _peer_matches(peer: Mapping[str, Any], endpoint: Endpoint, policy_namespace: str) -> bool:
    block = peer.get("ipBlock")
    if block is not None:
        address = ipaddress.ip_address(endpoint.ip)
        if address not in ipaddress.ip_network(block["cidr"]):
            return False
        return not any(address in ipaddress.ip_network(e) for e in block.get("except") or [])
    if endpoint.namespace is None:  # pod and namespace selectors only ever select pods
        return False
    if "namespaceSelector" in peer:
        if not selector_matches(peer["namespaceSelector"], endpoint.namespace_labels):
            return False
    elif endpoint.namespace != policy_namespace:
        return False
    return "podSelector" not in peer or selector_matches(peer["podSelector"], endpoint.labels)


def _port_matches(rule_port: Mapping[str, Any], port: Port) -> bool:
    if rule_port.get("protocol", "TCP") != port.protocol:
        return False
    wanted = rule_port.get("port")
    if wanted is None:
        return True
    if isinstance(wanted, str):  # a named port: the destination's container port of that name
        return port.name == wanted
    return int(wanted) <= port.number <= int(rule_port.get("endPort", wanted))


def _policy_types(policy: Doc) -> list[str]:
    spec = policy["spec"]
    if "policyTypes" in spec:
        return list(spec["policyTypes"])
    return ["Ingress"] + (["Egress"] if "egress" in spec else [])


class Policies:
    def __init__(self, docs: list[Doc], namespace: str) -> None:
        self.namespace = namespace
        self.policies = [d for d in docs if d.get("kind") == "NetworkPolicy"]

    def _selecting(self, endpoint: Endpoint, direction: str) -> list[Doc]:
        return [
            p
            for p in self.policies
            if endpoint.namespace == self.namespace
            and direction in _policy_types(p)
            and selector_matches(p["spec"].get("podSelector"), endpoint.labels)
        ]

    def _allows(self, subject: Endpoint, other: Endpoint, port: Port, direction: str) -> bool:
        selecting = self._selecting(subject, direction)
        if not selecting:
            return True  # not isolated in this direction
        rules_key, peers_key = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
        for policy in selecting:
            for rule in policy["spec"].get(rules_key) or []:
                peers = rule.get(peers_key)
                if peers and not any(_peer_matches(p, other, self.namespace) for p in peers):
                    continue
                ports = rule.get("ports")
                if ports and not any(_port_matches(p, port) for p in ports):
                    continue
                return True
        return False

    def allowed(self, c: Connection) -> bool:
        if c.source.governed and not self._allows(c.source, c.destination, c.port, "Egress"):
            return False
        return not (c.destination.governed and not self._allows(c.destination, c.source, c.port, "Ingress"))


def render_namespace(docs: list[Doc]) -> str:
    found = {d["metadata"].get("namespace") for d in docs if d.get("kind") != "Namespace"}
    return str(next(iter(found - {None}), BASE_NAMESPACE))


def endpoints(docs: list[Doc]) -> list[Endpoint]:
    """The render's workloads (one pod each) and the stand-ins around them."""
    namespace = render_namespace(docs)
    own_ns = {NAMESPACE_NAME: namespace}
    found: list[Endpoint] = []
    for i, w in enumerate(workloads(docs), start=10):
        ports = tuple(
            Port(int(p["containerPort"]), p.get("protocol", "TCP"), p.get("name"))
            for c in w.pod.get("containers", [])
            for p in c.get("ports", [])
        )
        service = next((felt_service_of(c) for c in w.pod.get("containers", []) if felt_service_of(c)), None)
        migrated = tuple(name for c in w.pod.get("containers", []) for name in migrates(c) or [])
        found.append(
            Endpoint(
                w.name,
                f"10.0.0.{i}",
                ports,
                namespace,
                w.labels,
                own_ns,
                governed=True,
                service=service,
                database=any(p.name == "postgres" for p in ports),
                migrates=migrated,
            )
        )
    web = Port(8080, "TCP", "http")
    key, value = FRONT_END_NAMESPACE_LABEL
    found += [
        Endpoint("stray pod in the namespace", "10.0.1.1", (web,), namespace, {"app": "debug"}, own_ns, True),
        Endpoint("front-end", "10.0.2.1", (web,), "web", {"app": "web"}, {NAMESPACE_NAME: "web", key: value}),
        Endpoint(
            "gateway",
            "10.0.6.1",
            (Port(443, "TCP", "https"),),
            "gateway-system",
            {"app": "gateway-proxy"},
            {NAMESPACE_NAME: "gateway-system", GATEWAY_NAMESPACE_LABEL[0]: GATEWAY_NAMESPACE_LABEL[1]},
        ),
        Endpoint(
            "prometheus",
            "10.0.3.1",
            (Port(9090, "TCP", "web"),),
            MONITORING_NAMESPACE,
            {"app.kubernetes.io/name": "prometheus"},
            {NAMESPACE_NAME: MONITORING_NAMESPACE},
        ),
        Endpoint(
            "kube-dns",
            "10.0.4.1",
            (Port(53, "UDP", "dns"), Port(53, "TCP", "dns-tcp")),
            "kube-system",
            {"k8s-app": "kube-dns"},
            {NAMESPACE_NAME: "kube-system"},
        ),
        Endpoint(
            "pod of another namespace", "10.0.5.1", (web,), "elsewhere", {}, {NAMESPACE_NAME: "elsewhere"}
        ),
    ]
    internet = (Port(443), Port(80))
    if any(e.database for e in found):
        # The database runs in the namespace: no address outside is one.
        found.append(Endpoint("internet", "203.0.113.7", (*internet, Port(5432))))
    else:
        # A managed database outside the cluster: its address is the operator's, so any address on 5432.
        found.append(Endpoint("internet", "203.0.113.7", internet))
        found.append(
            Endpoint("managed database", "198.51.100.20", (Port(5432, "TCP", "postgres"),), database=True)
        )
    return found


def expected(c: Connection) -> str | None:
    """Why the architecture needs this connection, or None when it has no such call."""
    src, dst, port = c.source, c.destination, c.port
    if dst.name == "kube-dns" and src.governed:
        return "every pod resolves names"
    if dst.database and port.name == "postgres" and src.service in DATABASE_CLIENTS:
        return f"{src.service} keeps its state in PostgreSQL"
    if dst.database and port.name == "postgres" and DATABASE_CLIENTS & set(src.migrates):
        return "the migration Job applies the services' schemas"
    if dst.service is None:
        return None
    if port.name == "metrics" and src.name == "prometheus":
        return "the metrics scrape"
    if port.name == "internal" and src.service in CALLS and dst.service in CALLS[src.service]:
        return f"{src.service} calls {dst.service} (mutual TLS)"
    if port.name == "grpc" and src.name == "front-end" and dst.service in FRONT_END_CALLS:
        return f"front-ends call {dst.service}"
    if port.name == "web" and src.name == "gateway" and dst.service in DOORS:
        return f"the Gateway sends browsers' calls to {dst.service}'s door"
    return None


def connections(found: Iterable[Endpoint]) -> list[Connection]:
    found = list(found)
    return [
        Connection(src, dst, port)
        for src in found
        for dst in found
        if src is not dst and (src.governed or dst.governed)
        for port in dst.ports
    ]


def check_network_policies(docs: list[Doc]) -> list[str]:
    """Every connection the architecture needs is allowed, and nothing else is."""
    if not any(d.get("kind") == "NetworkPolicy" for d in docs):
        return ["no NetworkPolicy: every pod accepts and opens any connection"]
    policies = Policies(docs, render_namespace(docs))
    problems = []
    for c in connections(endpoints(docs)):
        why, allowed = expected(c), policies.allowed(c)
        if why and not allowed:
            problems.append(f"NetworkPolicy: {c} is refused, but the architecture needs it ({why})")
        elif allowed and not why:
            problems.append(f"NetworkPolicy: {c} is allowed, but the architecture has no such call")
    return problems
