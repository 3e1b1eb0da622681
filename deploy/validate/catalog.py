"""What the code actually serves: metric names (found in the source, as `grep -rn "poker_"` would) and the
gRPC services and methods declared in protos/. Rules and dashboards may only refer to these."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from servicekit.config import SERVICES

# `prometheus_client.Counter(` / `Histogram(` ... followed by the name literal and, when written inline,
# the help string and a literal label list.
_DEFINITION = re.compile(
    r"\b(?P<kind>Counter|Gauge|Histogram|Summary|Info|Enum)\(\s*"
    r"(?P<q>[\"'])(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?P=q)\s*"
    r"(?:,\s*(?P<hq>[\"'])(?:(?!(?P=hq)).)*(?P=hq)\s*)?"
    r"(?:,\s*[\[(](?P<labels>[^\])]*)[\])]\s*)?"
    r"(?P<end>,?\s*\)|,)?",
    re.DOTALL,
)
_PACKAGE = re.compile(r"^\s*package\s+([a-zA-Z0-9_.]+)\s*;", re.MULTILINE)
_SERVICE = re.compile(r"^\s*service\s+(\w+)\s*\{(.*?)^\}", re.MULTILINE | re.DOTALL)
_RPC = re.compile(r"\brpc\s+(\w+)\s*\(")
_STREAMING_RPC = re.compile(r"\brpc\s+(\w+)\s*\([^)]*\)\s*returns\s*\(\s*stream\b")
# Environment variables the code reads: setting("X", ...), os.environ.get("X"), os.environ["X"], getenv("X").
_ENV_READ = re.compile(
    r"""(?:\bsetting\(\s*|environ\.get\(\s*|environ\[\s*|getenv\(\s*)["']([A-Z][A-Z0-9_]*)["']"""
)
# servicekit builds per-service names: prefix = f"FELT_{service.upper()}_"; prefix + "PORT".
_ENV_PER_SERVICE = re.compile(r"""\bprefix\s*\+\s*["']([A-Z][A-Z0-9_]*)["']""")
# Names kept in constants: CERT_FILE_ENV = "FELT_TLS_CERT_FILE" (also `A_ENV, B_ENV = "X", "Y"`).
_ENV_CONSTANT = re.compile(r"""^[A-Z0-9_, ]*_ENV\s*=\s*(.+)$""", re.MULTILINE)
_STRING = re.compile(r"""["']([A-Z][A-Z0-9_]*)["']""")
# Settings the manifests set for work merged from another branch soon (none now: issue 22's TLS is here,
# servicekit.tls and servicekit.config read its settings). A name added here must go once its code lands.
AWAITED_ENV_VARS: frozenset[str] = frozenset()

# Labels Prometheus adds to every scraped series (target labels from the scrape configuration).
TARGET_LABELS = frozenset(
    {"job", "instance", "namespace", "pod", "container", "service", "endpoint", "node", "app"}
)


@dataclass(frozen=True)
class MetricDef:
    """One metric family as defined in the source; `labels` is None when not written as a literal."""

    name: str
    kind: str
    labels: frozenset[str] | None
    source: str

    def exposed_names(self) -> set[str]:
        """Sample names prometheus_client serves for this family (OpenMetrics suffix rules)."""
        base = self.name.removesuffix("_total") if self.kind == "Counter" else self.name
        if self.kind == "Counter":
            return {base + "_total", base + "_created"}
        if self.kind == "Histogram":
            return {base + "_bucket", base + "_sum", base + "_count", base + "_created"}
        if self.kind == "Summary":
            return {base, base + "_sum", base + "_count", base + "_created"}
        if self.kind == "Info":
            return {base + "_info"}
        return {base}

    def labels_of(self, sample_name: str) -> frozenset[str] | None:
        if self.labels is None:
            return None
        extra = {"le"} if sample_name.endswith("_bucket") else set()
        extra |= {self.name} if self.kind == "Enum" else set()
        return self.labels | extra


@dataclass
class Catalog:
    metrics: dict[str, MetricDef] = field(default_factory=dict)  # by exposed sample name
    grpc_services: dict[str, set[str]] = field(default_factory=dict)  # full name -> methods
    streaming: set[str] = field(default_factory=set)  # server streams: "<full service name>/<method>"
    env_vars: set[str] = field(default_factory=set)  # environment variables some code reads

    def grpc_methods(self) -> set[str]:
        return {m for methods in self.grpc_services.values() for m in methods}


def grpc_code_labels() -> set[str]:
    """The go-grpc-prometheus spellings servicekit uses for `grpc_code` (OK, InvalidArgument, ...)."""
    from servicekit.metrics import code_label

    return {code_label(code) for code in grpc.StatusCode}


def metric_definitions(roots: list[Path]) -> list[MetricDef]:
    found = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            if "poker" in path.relative_to(root).parts[:1]:  # generated protobuf code
                continue
            text = path.read_text(encoding="utf-8")
            for match in _DEFINITION.finditer(text):
                raw = match.group("labels")
                labels: frozenset[str] | None = None
                if raw is None and (match.group("end") or "").endswith(")"):
                    labels = frozenset()  # no label list: a single series
                elif raw is not None and all(
                    part.strip()[:1] in "\"'" for part in raw.split(",") if part.strip()
                ):
                    labels = frozenset(p.strip().strip("\"'") for p in raw.split(",") if p.strip())
                found.append(MetricDef(match.group("name"), match.group("kind"), labels, str(path)))
    return found


def proto_services(protos: Path) -> dict[str, set[str]]:
    services: dict[str, set[str]] = {}
    for path in sorted(protos.rglob("*.proto")):
        text = path.read_text(encoding="utf-8")
        package = _PACKAGE.search(text)
        prefix = package.group(1) + "." if package else ""
        for match in _SERVICE.finditer(text):
            services[prefix + match.group(1)] = set(_RPC.findall(match.group(2)))
    return services


def proto_streaming_methods(protos: Path) -> set[str]:
    """The methods whose response is a stream, as "<package>.<Service>/<Method>"."""
    found: set[str] = set()
    for path in sorted(protos.rglob("*.proto")):
        text = path.read_text(encoding="utf-8")
        package = _PACKAGE.search(text)
        prefix = package.group(1) + "." if package else ""
        for match in _SERVICE.finditer(text):
            service = prefix + match.group(1)
            found.update(f"{service}/{method}" for method in _STREAMING_RPC.findall(match.group(2)))
    return found


def environment_variables(roots: list[Path]) -> set[str]:

    names: set[str] = set()
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            if "poker" in path.relative_to(root).parts[:1]:
                continue
            text = path.read_text(encoding="utf-8")
            names.update(_ENV_READ.findall(text))
            for constant in _ENV_CONSTANT.findall(text):
                names.update(_STRING.findall(constant))
            for suffix in _ENV_PER_SERVICE.findall(text):
                names.update(f"FELT_{service.upper()}_{suffix}" for service in SERVICES)
    return names


def build_catalog(repo: Path) -> Catalog:
    catalog = Catalog(
        grpc_services=proto_services(repo / "protos"),
        streaming=proto_streaming_methods(repo / "protos"),
        env_vars=environment_variables([repo / "libs", repo / "services"]) | AWAITED_ENV_VARS,
    )
    for definition in metric_definitions([repo / "libs", repo / "services"]):
        for name in definition.exposed_names():
            catalog.metrics[name] = definition
    return catalog
