"""Gateway API HTTPRoutes (deploy/k8s/components/browser-routes), checked offline.

kubernetes-validate ships no schemas for CRDs, so `route_shape` checks an HTTPRoute's fields as the
Gateway API v1 CRD (standard channel) would: unknown fields, types, enums, sizes, and the CEL rules a
route of Felt's could break. `check_routes` checks what no schema can, in both directions: every call a
browser may make (BROWSER_CALLS) reaches the door (`web` port) of the Service whose pods serve it, with
its path intact; nothing else is routed; streams are never cut by the Gateway's request timeout; and each
table shard has a path of its own, which is where a moved table sends a web client (its `web_url`).

Which rule serves a path follows the Gateway API's precedence: an Exact match before any PathPrefix, the
longest prefix first. Felt's routes match on the path only (no method, header or query matches), so
that is the whole of it; two rules that tie on a path with different backends are reported.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from deploy.validate import manifests, shapes
from deploy.validate.manifests import (
    Doc,
    environment,
    felt_service_of,
    find,
    service_workloads,
    web_port,
    workloads,
)

API_VERSION = "gateway.networking.k8s.io/v1"
GROUP = "gateway.networking.k8s.io"
# What browsers may call, by the Felt service whose door serves it: whole gRPC services (None), or only
# the methods listed. The rest of what a process serves is never routed.
BROWSER_CALLS: Mapping[str, Mapping[str, frozenset[str] | None]] = {
    "evaluator": {"poker.evaluator.v1.EvaluatorService": None},
    # Verify checks a revealed shoe, in any dealer pod. A live shoe's calls need the one pod that holds it,
    # and a Gateway picks an endpoint per request (the Service's ClientIP stickiness does not apply).
    "dealer": {"poker.dealer.v1.DealerService": frozenset({"Verify"})},
    # A player's reads of its own accounts; money moves are the table's and the tournament's.
    "wallet": {
        "poker.wallet.v1.WalletService": frozenset(
            {"GetAccount", "ListAccounts", "ListTransfers", "GetTransfer", "GetHold"}
        )
    },
    "table": {
        "poker.table.v1.TableService": None,
        "poker.table.v1.CasinoService": None,
        "poker.identity.v1.IdentityService": None,
    },
    "tournament": {"poker.tournament.v1.TournamentService": None},
}
# gRPC services a Felt process serves that no browser may reach: service tokens only.
SERVICE_ONLY = frozenset({"poker.table.v1.TableDirectorService"})
NO_TIMEOUT = "0s"  # the Gateway API's "no timeout"
_DURATION = r"([0-9]{1,5}(h|m|s|ms)){1,4}"
_PATH = r"/[A-Za-z0-9/._~!$&'()*+,;=:@%-]*"

_PARENT_REF = shapes.Obj(
    {
        "group": shapes.Str(enum=(GROUP,)),
        "kind": shapes.Str(enum=("Gateway",)),
        "namespace": shapes.Str(shapes.DNS_LABEL, max_length=63),
        "name": shapes.Str(shapes.DNS_SUBDOMAIN, max_length=253),
        "sectionName": shapes.Str(shapes.DNS_SUBDOMAIN, max_length=253),
        "port": shapes.Int(1, 65535),
    },
    required=("name",),
)
_PATH_MATCH = shapes.Obj(
    {
        "type": shapes.Str(enum=("Exact", "PathPrefix", "RegularExpression")),
        "value": shapes.Str(max_length=1024),
    }
)
_HEADER_MODIFIER = shapes.Obj(
    {
        "set": shapes.List(shapes.Obj({"name": shapes.Str(), "value": shapes.Str()}, ("name", "value")), 16),
        "add": shapes.List(shapes.Obj({"name": shapes.Str(), "value": shapes.Str()}, ("name", "value")), 16),
        "remove": shapes.List(shapes.Str(), 16),
    }
)
_URL_REWRITE = shapes.Obj(
    {
        "hostname": shapes.Str(max_length=253),
        "path": shapes.Obj(
            {
                "type": shapes.Str(enum=("ReplaceFullPath", "ReplacePrefixMatch")),
                "replaceFullPath": shapes.Str(_PATH, max_length=1024),
                "replacePrefixMatch": shapes.Str(_PATH, max_length=1024),
            },
            required=("type",),
        ),
    }
)
_FILTER_FIELDS = {
    "RequestHeaderModifier": "requestHeaderModifier",
    "ResponseHeaderModifier": "responseHeaderModifier",
    "URLRewrite": "urlRewrite",
}
_FILTER = shapes.Obj(
    {
        "type": shapes.Str(enum=tuple(_FILTER_FIELDS)),
        "requestHeaderModifier": _HEADER_MODIFIER,
        "responseHeaderModifier": _HEADER_MODIFIER,
        "urlRewrite": _URL_REWRITE,
    },
    required=("type",),
)
_BACKEND_REF = shapes.Obj(
    {
        "group": shapes.Str(enum=("",)),
        "kind": shapes.Str(enum=("Service",)),
        "name": shapes.Str(shapes.DNS_SUBDOMAIN, max_length=253),
        "namespace": shapes.Str(shapes.DNS_LABEL, max_length=63),
        "port": shapes.Int(1, 65535),
        "weight": shapes.Int(0, 1_000_000),
        "filters": shapes.List(_FILTER, 16),
    },
    required=("name", "port"),  # port: required for a Service backend (CEL)
)
_RULE = shapes.Obj(
    {
        "matches": shapes.List(
            shapes.Obj(
                {
                    "path": _PATH_MATCH,
                    "method": shapes.Str(enum=("GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH")),
                    "headers": shapes.List(
                        shapes.Obj({"type": shapes.Str(), "name": shapes.Str(), "value": shapes.Str()}), 16
                    ),
                    "queryParams": shapes.List(
                        shapes.Obj({"type": shapes.Str(), "name": shapes.Str(), "value": shapes.Str()}), 16
                    ),
                }
            ),
            64,
        ),
        "filters": shapes.List(_FILTER, 16),
        "backendRefs": shapes.List(_BACKEND_REF, 16),
        "timeouts": shapes.Obj({"request": shapes.Str(_DURATION), "backendRequest": shapes.Str(_DURATION)}),
    }
)
HTTP_ROUTE = shapes.resource(
    API_VERSION,
    "HTTPRoute",
    shapes.Obj(
        {
            "parentRefs": shapes.List(_PARENT_REF, 32),
            "hostnames": shapes.List(shapes.Str(max_length=253), 16),
            "rules": shapes.List(_RULE, 16),
        }
    ),
)


# The Gateway's side of the doors' TLS (issue 22: every Connect port serves TLS): a BackendTLSPolicy per
# door Service, naming the port, the name the pod's certificate carries and the CA that signed it.
_LOCAL_REF = shapes.Obj(
    {
        "group": shapes.Str(enum=("",)),
        "kind": shapes.Str(enum=("ConfigMap", "Secret")),
        "name": shapes.Str(shapes.DNS_SUBDOMAIN, max_length=253),
    },
    required=("group", "kind", "name"),
)
BACKEND_TLS_POLICY = shapes.resource(
    API_VERSION,
    "BackendTLSPolicy",
    shapes.Obj(
        {
            "targetRefs": shapes.List(
                shapes.Obj(
                    {
                        "group": shapes.Str(enum=("",)),
                        "kind": shapes.Str(enum=("Service",)),
                        "name": shapes.Str(shapes.DNS_SUBDOMAIN, max_length=253),
                        "sectionName": shapes.Str(shapes.DNS_SUBDOMAIN, max_length=253),
                    },
                    required=("group", "kind", "name"),
                ),
                16,
                min_items=1,
            ),
            "validation": shapes.Obj(
                {
                    "caCertificateRefs": shapes.List(_LOCAL_REF, 8),
                    "wellKnownCACertificates": shapes.Str(enum=("System",)),
                    "hostname": shapes.Str(shapes.DNS_SUBDOMAIN, max_length=253),
                },
                required=("hostname",),
            ),
        },
        required=("targetRefs", "validation"),
    ),
)


def backend_tls_shape(doc: Doc) -> list[str]:
    """The BackendTLSPolicy's fields as the v1 CRD allows them, and its CEL rule: a CA, from exactly one
    of caCertificateRefs and wellKnownCACertificates."""
    where = f"BackendTLSPolicy/{doc.get('metadata', {}).get('name')}"
    problems = [f"{where}: {p}" for p in BACKEND_TLS_POLICY.problems(doc, "")]
    validation = doc.get("spec", {}).get("validation", {})
    if not problems and bool(validation.get("caCertificateRefs")) == bool(
        validation.get("wellKnownCACertificates")
    ):
        problems.append(f"{where}: exactly one of caCertificateRefs and wellKnownCACertificates")
    return problems


def seconds(duration: str) -> float:
    """A Gateway API duration (1h30m, 500ms, 0s) in seconds."""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    return sum(float(n) * units[u] for n, u in re.findall(r"([0-9]+)(ms|h|m|s)", duration))


def route_shape(doc: Doc) -> list[str]:
    """The HTTPRoute's fields as the v1 CRD allows them, and the CEL rules Felt's routes could break."""
    where = f"HTTPRoute/{doc.get('metadata', {}).get('name')}"
    problems = [f"{where}: {p}" for p in HTTP_ROUTE.problems(doc, "")]
    if problems:
        return problems
    for i, rule in enumerate(doc["spec"].get("rules", [])):
        at = f"{where}: spec.rules.{i}"
        timeouts = rule.get("timeouts", {})
        request, backend = timeouts.get("request"), timeouts.get("backendRequest")
        if request and backend and seconds(request) != 0 and seconds(backend) > seconds(request):
            problems.append(f"{at}: backendRequest timeout must not be greater than request timeout")
        for match in rule.get("matches", []):
            path = match.get("path", {})
            if path.get("type", "PathPrefix") != "RegularExpression" and "value" in path:
                value = path["value"]
                if not re.fullmatch(_PATH, value) or any(s in value for s in ("//", "/./", "/../", "#")):
                    problems.append(f"{at}: path {value!r} must be an absolute path without // . .. or #")
        rewrites = [f for f in rule.get("filters", []) if f["type"] == "URLRewrite"]
        if len(rewrites) > 1:
            problems.append(f"{at}: URLRewrite filter cannot be repeated")
        for f in rule.get("filters", []):
            key = _FILTER_FIELDS[f["type"]]
            if key not in f:
                problems.append(f"{at}: filter {f['type']} needs its {key}")
        prefix_rewrites = [
            f for f in rewrites if f.get("urlRewrite", {}).get("path", {}).get("type") == "ReplacePrefixMatch"
        ]
        if prefix_rewrites:
            matches = rule.get("matches", [])
            if len(matches) != 1 or matches[0].get("path", {}).get("type", "PathPrefix") != "PathPrefix":
                problems.append(
                    f"{at}: When using URLRewrite filter with path.replacePrefixMatch, exactly one "
                    "PathPrefix match must be specified"
                )
        for f in rewrites:
            path = f.get("urlRewrite", {}).get("path", {})
            wanted = {"ReplaceFullPath": "replaceFullPath", "ReplacePrefixMatch": "replacePrefixMatch"}
            if path and wanted[path["type"]] not in path:
                problems.append(f"{at}: {path['type']} needs {wanted[path['type']]}")
    return problems


@dataclass(frozen=True)
class Hit:
    """Where the Gateway sends a path: the rule, its backend and the path the backend receives."""

    route: str
    rule: int
    service: str
    port: int
    path: str
    timeouts: Mapping[str, str]

    def __str__(self) -> str:
        return f"HTTPRoute/{self.route} rule {self.rule} -> Service/{self.service}:{self.port}{self.path}"


def _prefix_matches(prefix: str, path: str) -> bool:
    """PathPrefix matching is element-wise: /a/b matches /a/b and /a/b/c, never /a/bc."""
    prefix = prefix.rstrip("/")
    return prefix == "" or path == prefix or path.startswith(prefix + "/")


def _rewritten(rule: Doc, prefix: str | None, path: str) -> str:
    for f in rule.get("filters", []):
        rewrite = f.get("urlRewrite", {}).get("path") if f.get("type") == "URLRewrite" else None
        if not rewrite:
            continue
        if rewrite["type"] == "ReplaceFullPath":
            return str(rewrite["replaceFullPath"])
        if prefix is not None:
            rest = path[len(prefix.rstrip("/")) :]
            replacement = str(rewrite["replacePrefixMatch"])
            if replacement.endswith("/") and rest.startswith("/"):
                rest = rest[1:]
            return (replacement + rest) or "/"
    return path


def resolve(routes: list[Doc], path: str) -> list[Hit]:
    """The rules that serve `path` by the Gateway API's precedence (more than one: they tie)."""
    best: tuple[int, int] | None = None
    hits: list[Hit] = []
    for route in routes:
        for i, rule in enumerate(route["spec"].get("rules", [])):
            for match in rule.get("matches") or [{"path": {"type": "PathPrefix", "value": "/"}}]:
                spec = match.get("path", {"type": "PathPrefix", "value": "/"})
                kind, value = spec.get("type", "PathPrefix"), spec.get("value", "/")
                if kind == "Exact" and path == value:
                    rank, prefix = (2, len(value)), None
                elif kind == "PathPrefix" and _prefix_matches(value, path):
                    rank, prefix = (1, len(value.rstrip("/"))), value
                else:
                    continue
                if best is not None and rank < best:
                    continue
                if best is None or rank > best:
                    best, hits = rank, []
                for backend in rule.get("backendRefs", []):
                    hits.append(
                        Hit(
                            route["metadata"]["name"],
                            i,
                            backend["name"],
                            int(backend.get("port", 0)),
                            _rewritten(rule, prefix, path),
                            rule.get("timeouts", {}),
                        )
                    )
    return hits


def browser_methods(service: str, grpc_services: Mapping[str, set[str]]) -> list[str]:
    """The paths (/<package>.<Service>/<Method>) browsers may call on the door of Felt service `service`."""
    found = []
    for grpc_service, methods in BROWSER_CALLS.get(service, {}).items():
        for method in sorted(grpc_services.get(grpc_service, set())):
            if methods is None or method in methods:
                found.append(f"/{grpc_service}/{method}")
    return found


def _stream_timeouts_off(hit: Hit) -> bool:
    request, backend = hit.timeouts.get("request"), hit.timeouts.get("backendRequest")
    return request is not None and seconds(request) == 0 and (backend is None or seconds(backend) == 0)


def _check_path(
    routes: list[Doc], path: str, want: tuple[str, int, str] | None, streaming: bool, why: str
) -> list[str]:
    """`path` must reach Service want[0] on port want[1] as want[2] (None: must reach nothing)."""
    hits = resolve(routes, path)
    if want is None:
        return (
            [f"HTTPRoute: {path} is routed ({hits[0]}), but no browser may call it ({why})"] if hits else []
        )
    if not hits:
        return [f"HTTPRoute: {path} is not routed, but browsers call it ({why})"]
    problems = []
    if len({(h.service, h.port, h.path) for h in hits}) > 1:
        problems.append(f"HTTPRoute: {path} is claimed by rules that tie: {', '.join(map(str, hits))}")
    hit = hits[0]
    if (hit.service, hit.port, hit.path) != want:
        service, port, backend_path = want
        problems.append(
            f"HTTPRoute: {path} goes to {hit}, not Service/{service}:{port}{backend_path} ({why})"
        )
    elif streaming and not _stream_timeouts_off(hit):
        problems.append(
            f"HTTPRoute: {path} is a stream but {hit} times it out ({dict(hit.timeouts)}): set timeouts "
            f"request and backendRequest to {NO_TIMEOUT}"
        )
    return problems


def _shard_services(docs: list[Doc]) -> list[tuple[str, Doc]]:
    """(pod name, its StatefulSet) of every pod of a sharded table StatefulSet (more than one replica)."""
    found = []
    for w in workloads(docs):
        felt = [felt_service_of(c) for c in w.pod.get("containers", [])]
        replicas = int(w.doc["spec"].get("replicas", 1))
        if w.kind == "StatefulSet" and "table" in felt and replicas > 1:
            found += [(f"{w.name}-{k}", w.doc) for k in range(replicas)]
    return found


def _backend_problems(routes: list[Doc], docs: list[Doc]) -> list[str]:
    """Every backendRef is a rendered Service's `web` port that reaches a Felt container's door."""
    problems = []
    for route in routes:
        where = f"HTTPRoute/{route['metadata']['name']}"
        if not route["spec"].get("parentRefs"):
            problems.append(f"{where}: no parentRefs: the route attaches to no Gateway")
        for i, rule in enumerate(route["spec"].get("rules", [])):
            if len(rule.get("backendRefs", [])) != 1:
                problems.append(f"{where}: rule {i} needs exactly one backendRef (a door)")
            for backend in rule.get("backendRefs", []):
                service = find(docs, "Service", backend["name"])
                if service is None:
                    problems.append(f"{where}: backend Service/{backend['name']} does not exist")
                    continue
                ports = {p["port"]: p for p in service["spec"].get("ports", [])}
                port = ports.get(backend.get("port"))
                if port is None:
                    problems.append(f"{where}: Service/{backend['name']} has no port {backend.get('port')}")
                    continue
                if port.get("name") != "web":
                    problems.append(
                        f"{where}: Service/{backend['name']} port {port['port']} is {port.get('name')!r}, "
                        "not the door (web): browsers speak HTTP/1.1 to the door only"
                    )
                loads = service_workloads(service, docs)
                felt = {felt_service_of(c) for w in loads for c in w.pod.get("containers", [])} - {None}
                if len(loads) != 1 or len(felt) != 1:
                    problems.append(f"{where}: Service/{backend['name']} does not select one Felt workload")
    return problems


def check_routes(
    docs: list[Doc], grpc_services: Mapping[str, set[str]], streaming: set[str], expected: bool = True
) -> list[str]:
    """The browser routes of a rendered overlay (`expected`: the overlay must have them)."""
    routes = [d for d in docs if d.get("kind") == "HTTPRoute"]
    if not routes:
        return ["no HTTPRoute: browsers cannot reach the doors"] if expected else []
    problems = _backend_problems(routes, docs) + _backend_tls_problems(routes, docs)
    routed_services = {s for s in BROWSER_CALLS if find(docs, "Service", s) is not None}
    # Every method of every gRPC service: to its own door when browsers may call it, else nowhere.
    for grpc_service, methods in sorted(grpc_services.items()):
        owner = next((s for s in routed_services if grpc_service in BROWSER_CALLS[s]), None)
        for method in sorted(methods):
            path = f"/{grpc_service}/{method}"
            allowed = owner is not None and path in browser_methods(owner, grpc_services)
            want = (owner, web_port(owner), path) if allowed and owner else None
            why = f"{owner}'s door" if allowed else _not_routed_reason(grpc_service)
            problems += _check_path(routes, path, want, f"{grpc_service}/{method}" in streaming, why)
    # Paths a rule names that are no call at all (a prefix of nothing Felt serves, a misspelt method).
    problems += _unknown_paths(routes, grpc_services, {name for name, _ in _shard_services(docs)})
    problems += _check_shards(routes, docs, grpc_services, streaming)
    return problems


def _backend_tls_problems(routes: list[Doc], docs: list[Doc]) -> list[str]:
    """The doors serve TLS: every Service a route sends to has a BackendTLSPolicy on its `web` port
    whose hostname is a name its pods' certificate carries (the Certificate of the workload's Secret)."""
    policies: dict[str, Doc] = {}
    for doc in docs:
        if doc.get("kind") == "BackendTLSPolicy":
            for ref in doc["spec"].get("targetRefs", []):
                if ref.get("sectionName") in (None, "web"):
                    policies[ref["name"]] = doc
    problems = []
    backends = sorted(
        {
            b["name"]
            for r in routes
            for rule in r["spec"].get("rules", [])
            for b in rule.get("backendRefs", [])
        }
    )
    certificates = [d for d in docs if d.get("kind") == "Certificate"]
    for name in backends:
        policy = policies.get(name)
        if policy is None:
            problems.append(
                f"Service/{name}: routed to but no BackendTLSPolicy for its web port: the Gateway would "
                "speak plain HTTP to a door that serves TLS"
            )
            continue
        hostname = policy["spec"]["validation"].get("hostname", "")
        named = {n for c in certificates for n in c["spec"].get("dnsNames", [])}
        if certificates and hostname not in named:
            problems.append(
                f"BackendTLSPolicy/{policy['metadata']['name']}: hostname {hostname!r} is on no Certificate"
            )
    return problems


def _not_routed_reason(grpc_service: str) -> str:
    if grpc_service in SERVICE_ONLY:
        return "service tokens only"
    return "not among the calls browsers make (deploy/validate/gateway.py BROWSER_CALLS)"


def _unknown_paths(routes: list[Doc], grpc_services: Mapping[str, set[str]], shards: set[str]) -> list[str]:
    problems = []
    known = {f"/{s}" for s in grpc_services} | {f"/{s}/{m}" for s, ms in grpc_services.items() for m in ms}
    for route in routes:
        for i, rule in enumerate(route["spec"].get("rules", [])):
            for match in rule.get("matches", []):
                value = match.get("path", {}).get("value", "/")
                first, _, rest = value.lstrip("/").partition("/")
                bare = f"/{rest}" if first in shards else value
                if bare.rstrip("/") not in known:
                    problems.append(
                        f"HTTPRoute/{route['metadata']['name']} rule {i}: path {value!r} names no gRPC "
                        "service or method of protos/"
                    )
                if set(match) - {"path"}:
                    problems.append(
                        f"HTTPRoute/{route['metadata']['name']} rule {i}: Felt's routes match paths only "
                        "(a method, header or query match is not checked here)"
                    )
    return problems


def _check_shards(
    routes: list[Doc], docs: list[Doc], grpc_services: Mapping[str, set[str]], streaming: set[str]
) -> list[str]:
    """Each shard of a sharded table: /<pod name>/<call> reaches that pod's door as /<call>, and the
    shard advertises that path as its web_url (FELT_TABLE_ADVERTISE_WEB_URL = <public URL>/$(POD_NAME))."""
    problems = []
    checked: set[str] = set()
    for pod, statefulset in _shard_services(docs):
        service = _pod_service(docs, pod)
        if service is None:
            problems.append(
                f"table shard {pod}: no Service selects it alone ({manifests.POD_NAME_LABEL}: {pod}), "
                "so the Gateway cannot send a moved table's web client to it"
            )
            continue
        for path in browser_methods("table", grpc_services):
            call = path.lstrip("/")
            want = (service, web_port("table"), path)
            problems += _check_path(routes, f"/{pod}{path}", want, call in streaming, f"shard {pod}'s door")
        name = statefulset["metadata"]["name"]
        if name in checked:
            continue
        checked.add(name)
        container = next(
            c for c in statefulset["spec"]["template"]["spec"]["containers"] if felt_service_of(c)
        )
        advertised = environment(container, docs).get("FELT_TABLE_ADVERTISE_WEB_URL", "")
        if not advertised.endswith("/$(POD_NAME)") or not advertised.startswith(
            ("https://", "http://", "$(")
        ):
            problems.append(
                f"StatefulSet/{name}: FELT_TABLE_ADVERTISE_WEB_URL={advertised!r} must be the Gateway's "
                "public URL followed by /$(POD_NAME), the path its route gives each shard"
            )
    return problems


def _pod_service(docs: list[Doc], pod: str) -> str | None:
    for service in docs:
        if service.get("kind") != "Service":
            continue
        selector = service["spec"].get("selector") or {}
        if selector.get(manifests.POD_NAME_LABEL) == pod:
            return str(service["metadata"]["name"])
    return None


def gateway_reachable_ports(docs: list[Doc]) -> set[tuple[str, int]]:
    """(Service, port) pairs the routes send browsers to."""
    return {
        (b["name"], int(b.get("port", 0)))
        for d in docs
        if d.get("kind") == "HTTPRoute"
        for rule in d["spec"].get("rules", [])
        for b in rule.get("backendRefs", [])
    }
