"""Checks on rendered Kubernetes resources: the rules every Felt workload must follow to be deployable,
drainable and safe (gRPC probes on the serving port, requests and limits, hardened security context,
Services/PDBs/HPAs that really select and target the pods, secrets and config that exist)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from servicekit import config as servicekit_config
from servicekit.config import DEFAULT_WEB_BASE_PORT, SERVICES, default_metrics_port, default_port

WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job")
# What each service's database is named by, for `felt migrate` (the migration Job) and the service alike.
DATABASE_SETTINGS = {
    "wallet": "WALLET_DATABASE_URL",
    "table": "TABLE_DATABASE_URL",
    "tournament": "TOURNAMENT_DATABASE_URL",
}
# Deployed by deploy/k8s/base: stateless Deployments with an HPA, and the stateful services, StatefulSets
# whose pods each keep a volume (the table's shards; the tournament's director).
DEPLOYED_SERVICES = ("evaluator", "dealer", "wallet")
STATEFUL_SERVICES = ("table", "tournament")
# Services that mint tokens of their own (the table's for the dealer and the wallet, the tournament's for
# the services it drives): only they may hold the private key; every other service verifies with the public
# key.
SIGNING_SERVICES = frozenset({"table", "tournament"})
# Stateful services that must run one pod, and why. (Several table pods are shards of one store:
# check_table_shards; several tournament pods are replicas of one store, each tournament leased to one:
# check_tournament_replicas, issue 25.)
SINGLE_POD: dict[str, str] = {}
_ADDRESS_SETTING = re.compile(r"^FELT_([A-Z]+)_ADDRESS$")
# A service's internal port (mutual TLS: the other Felt services call it) is its gRPC port + this; issue
# 22's TLS defines it in servicekit.config, until then the number it documents.
INTERNAL_PORT_OFFSET = int(getattr(servicekit_config, "INTERNAL_PORT_OFFSET", 1000))
# Capacity figures the manifests are sized with (docs/operations.md "Scale"; deploy/sizing/ measures them).
DEALER_BYTES_PER_SHOE = 12 * 1024  # a fully dealt, closed and revealed one-deck shoe: ~11.5 KB measured
DEALER_BASELINE_BYTES = 96 * 2**20  # interpreter, gRPC, libraries
DEALER_DEFAULT_MAX_SHOES = 100_000  # services/dealer/config.py default
WALLET_DEFAULT_POOL_SIZE = 16  # services/wallet/config.py default
POSTGRES_CONNECTION_BUDGET = 90  # PostgreSQL's default max_connections 100, minus superuser/maintenance
_QUANTITY = re.compile(r"^([0-9.]+)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$")
_FACTORS = {
    None: 1.0,
    "m": 1e-3,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "Ki": 2.0**10,
    "Mi": 2.0**20,
    "Gi": 2.0**30,
    "Ti": 2.0**40,
}
Doc = dict[str, Any]


def internal_port(service: str) -> int:
    return default_port(service) + INTERNAL_PORT_OFFSET


def web_port(service: str) -> int:
    """The browser door's port (Connect, gRPC-Web), the one `felt up` opens: 8081 for the evaluator, ..."""
    return DEFAULT_WEB_BASE_PORT + SERVICES.index(service)


def named_ports(service: str) -> dict[str, int]:
    """The container ports every Felt service names, and their numbers."""
    return {
        "grpc": default_port(service),
        "internal": internal_port(service),
        "web": web_port(service),
        "metrics": default_metrics_port(service),
    }


def quantity(value: str | int | float) -> float:
    match = _QUANTITY.match(str(value))
    if not match:
        raise ValueError(f"not a Kubernetes quantity: {value!r}")
    return float(match.group(1)) * _FACTORS[match.group(2)]


@dataclass(frozen=True)
class Workload:
    doc: Doc

    @property
    def kind(self) -> str:
        return str(self.doc["kind"])

    @property
    def name(self) -> str:
        return str(self.doc["metadata"]["name"])

    @property
    def pod(self) -> Doc:
        return dict(self.doc["spec"]["template"]["spec"])

    @property
    def labels(self) -> dict[str, str]:
        return dict(self.doc["spec"]["template"]["metadata"].get("labels", {}))

    @property
    def annotations(self) -> dict[str, str]:
        return dict(self.doc["spec"]["template"]["metadata"].get("annotations", {}))

    def containers(self) -> Iterator[Doc]:
        yield from self.pod.get("initContainers", [])
        yield from self.pod.get("containers", [])

    def __str__(self) -> str:
        return f"{self.kind}/{self.name}"


def workloads(docs: list[Doc]) -> list[Workload]:
    return [Workload(d) for d in docs if d.get("kind") in WORKLOAD_KINDS]


def find(docs: list[Doc], kind: str, name: str) -> Doc | None:
    for doc in docs:
        if doc.get("kind") == kind and doc["metadata"]["name"] == name:
            return doc
    return None


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


# The label the StatefulSet controller puts on each pod: a Service selecting it reaches one shard.
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"


def service_workloads(service: Doc, docs: list[Doc]) -> list[Workload]:
    """The workloads whose pods a Service selects. A selector on POD_NAME_LABEL selects one pod of a
    StatefulSet (the label is the controller's, not the template's): its StatefulSet, if that pod exists."""
    selector = dict(service["spec"].get("selector") or {})
    pod = selector.pop(POD_NAME_LABEL, None)
    found = []
    for w in workloads(docs):
        if pod is None:
            if selects(selector, w.labels):
                found.append(w)
            continue
        ordinal = pod.removeprefix(w.name + "-")
        if w.kind != "StatefulSet" or ordinal == pod or not ordinal.isdigit():
            continue
        if int(ordinal) < int(w.doc["spec"].get("replicas", 1)) and all(
            w.labels.get(k) == v for k, v in selector.items()
        ):
            found.append(w)
    return found


def felt_service_of(container: Doc) -> str | None:
    """The Felt service a container runs (`felt serve <name>`), or None for other software."""
    command = list(container.get("command", [])) + list(container.get("args", []))
    if command[:2] == ["felt", "serve"] and len(command) > 2:
        return str(command[2])
    return None


def migrates(container: Doc) -> list[str] | None:
    """The services whose databases a `felt migrate [SERVICE ...]` container migrates (every one with a
    database when it names none); None for any other container."""
    command = list(container.get("command", [])) + list(container.get("args", []))
    if command[:2] != ["felt", "migrate"]:
        return None
    named = [arg for arg in command[2:] if not arg.startswith("-")]
    return named or sorted(DATABASE_SETTINGS)


def flag(args: list[str], name: str) -> str | None:
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def environment(container: Doc, docs: list[Doc]) -> dict[str, str]:
    """Literal environment of a container: envFrom ConfigMaps (rendered), then env values."""
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        ref = source.get("configMapRef")
        if ref:
            config_map = find(docs, "ConfigMap", ref["name"])
            env.update((config_map or {}).get("data", {}))
    for item in container.get("env", []):
        if "value" in item:
            env[item["name"]] = str(item["value"])
    return env


def check_table_shards(w: Workload, container: Doc, docs: list[Doc]) -> list[str]:
    """Several table pods are shards of one store (issue 15): sharded, each its pod's name as its id and
    its own address, and one shared PostgreSQL store from a Secret (never a pod's own SQLite volume)."""
    env = environment(container, docs)
    items = {item["name"]: item for item in container.get("env", [])}
    problems = []
    if env.get("FELT_TABLE_SHARDED") not in ("1", "true"):
        problems.append(f"{w}: several table pods need FELT_TABLE_SHARDED=1 (else each serves every table)")
    pod_name = items.get("POD_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
    if pod_name != "metadata.name" or "$(POD_NAME)" not in env.get("FELT_TABLE_SHARD_ID", ""):
        problems.append(f"{w}: FELT_TABLE_SHARD_ID must be the pod's name (POD_NAME from metadata.name)")
    governing = str(w.doc["spec"].get("serviceName", ""))
    advertised = env.get("FELT_TABLE_ADVERTISE_ADDRESS", "")
    if not advertised.startswith(f"$(POD_NAME).{governing}"):
        problems.append(f"{w}: FELT_TABLE_ADVERTISE_ADDRESS must be the pod's own name under {governing}")
    database = items.get("TABLE_DATABASE_URL", {}).get("valueFrom", {}).get("secretKeyRef")
    if not database:
        problems.append(f"{w}: several table pods need TABLE_DATABASE_URL (PostgreSQL) from a Secret")
    return problems


def check_tournament_replicas(w: Workload, container: Doc, docs: list[Doc]) -> list[str]:
    """Several tournament pods are replicas of one store (issue 25): replicated, each its pod's name as its
    id and its own address (a TOURNAMENT_MOVED names it), one shared PostgreSQL store from a Secret."""
    env = environment(container, docs)
    items = {item["name"]: item for item in container.get("env", [])}
    problems = []
    if env.get("FELT_TOURNAMENT_REPLICATED") not in ("1", "true"):
        problems.append(
            f"{w}: several tournament pods need FELT_TOURNAMENT_REPLICATED=1 (else each directs every"
            " tournament)"
        )
    pod_name = items.get("POD_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
    if pod_name != "metadata.name" or "$(POD_NAME)" not in env.get("FELT_TOURNAMENT_REPLICA_ID", ""):
        problems.append(
            f"{w}: FELT_TOURNAMENT_REPLICA_ID must be the pod's name (POD_NAME from metadata.name)"
        )
    governing = str(w.doc["spec"].get("serviceName", ""))
    for setting in ("FELT_TOURNAMENT_ADVERTISE_ADDRESS", "FELT_TOURNAMENT_ADVERTISE_INTERNAL_ADDRESS"):
        if not env.get(setting, "").startswith(f"$(POD_NAME).{governing}"):
            problems.append(f"{w}: {setting} must be the pod's own name under {governing}")
    database = items.get("TOURNAMENT_DATABASE_URL", {}).get("valueFrom", {}).get("secretKeyRef")
    if not database:
        problems.append(
            f"{w}: several tournament pods need TOURNAMENT_DATABASE_URL (PostgreSQL) from a Secret"
        )
    return problems


def check_security(w: Workload) -> list[str]:
    problems = []
    pod = w.pod
    pod_ctx = pod.get("securityContext", {})
    if pod_ctx.get("runAsNonRoot") is not True:
        problems.append(f"{w}: pod securityContext.runAsNonRoot must be true")
    if pod_ctx.get("runAsUser") == 0:
        problems.append(f"{w}: pod runs as uid 0")
    if pod_ctx.get("seccompProfile", {}).get("type") != "RuntimeDefault":
        problems.append(f"{w}: pod seccompProfile must be RuntimeDefault")
    if pod.get("automountServiceAccountToken") is not False:
        problems.append(f"{w}: automountServiceAccountToken must be false (no service talks to the API)")
    for flag_name in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(flag_name):
            problems.append(f"{w}: {flag_name} is not allowed")
    for c in w.containers():
        ctx = c.get("securityContext", {})
        where = f"{w} container {c['name']}"
        if ctx.get("allowPrivilegeEscalation") is not False:
            problems.append(f"{where}: allowPrivilegeEscalation must be false")
        if ctx.get("readOnlyRootFilesystem") is not True:
            problems.append(f"{where}: readOnlyRootFilesystem must be true")
        if ctx.get("privileged"):
            problems.append(f"{where}: privileged is not allowed")
        if "ALL" not in ctx.get("capabilities", {}).get("drop", []):
            problems.append(f"{where}: capabilities must drop ALL")
        if ctx.get("capabilities", {}).get("add"):
            problems.append(f"{where}: no capability may be added")
        if ctx.get("runAsUser") == 0 or ctx.get("runAsNonRoot") is False:
            problems.append(f"{where}: runs as root")
    return problems


def check_resources(w: Workload) -> list[str]:
    problems = []
    for c in w.containers():
        where = f"{w} container {c['name']}"
        res = c.get("resources", {})
        for kind in ("requests", "limits"):
            for resource in ("cpu", "memory"):
                if resource not in res.get(kind, {}):
                    problems.append(f"{where}: resources.{kind}.{resource} is missing")
        for resource in ("cpu", "memory"):
            try:
                req, lim = res["requests"][resource], res["limits"][resource]
            except KeyError:
                continue
            if quantity(req) > quantity(lim):
                problems.append(f"{where}: {resource} request {req} exceeds its limit {lim}")
    return problems


def check_volumes(w: Workload) -> list[str]:
    problems = []
    defined = {v["name"] for v in w.pod.get("volumes", [])}
    defined |= {t["metadata"]["name"] for t in w.doc["spec"].get("volumeClaimTemplates", [])}
    for c in w.containers():
        for mount in c.get("volumeMounts", []):
            if mount["name"] not in defined:
                problems.append(f"{w} container {c['name']}: volumeMount {mount['name']!r} has no volume")
    return problems


def _writable_mounts(w: Workload, container: Doc) -> dict[str, str]:
    """mountPath -> volume type, for writable scratch or persistent volumes."""
    types = {}
    for v in w.pod.get("volumes", []):
        types[v["name"]] = next((k for k in ("emptyDir", "persistentVolumeClaim") if k in v), "other")
    for t in w.doc["spec"].get("volumeClaimTemplates", []):
        types[t["metadata"]["name"]] = "persistentVolumeClaim"
    return {
        m["mountPath"]: types.get(m["name"], "other")
        for m in container.get("volumeMounts", [])
        if not m.get("readOnly") and types.get(m["name"]) in ("emptyDir", "persistentVolumeClaim")
    }


def _secret_mount_dirs(w: Workload, container: Doc) -> set[str]:
    secret_volumes = {v["name"] for v in w.pod.get("volumes", []) if "secret" in v}
    return {
        m["mountPath"].rstrip("/") for m in container.get("volumeMounts", []) if m["name"] in secret_volumes
    }


def _pre_stop_seconds(container: Doc) -> float:
    command = container.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", [])
    if len(command) == 2 and command[0] == "sleep":
        return float(command[1])
    return 0.0


def check_felt_container(
    w: Workload, c: Doc, docs: list[Doc], production: bool, known_env: set[str] | None = None
) -> list[str]:
    """A `felt serve <name>` container: ports, probes, scrape annotations, data dir, drain, auth, and
    (given the variables the code reads) no Felt setting that nothing reads, such as a misspelling."""
    service = felt_service_of(c)
    where = f"{w} container {c['name']}"
    if service not in SERVICES:
        return [f"{where}: unknown Felt service {service!r}"]
    problems = []
    # Everything after `felt serve <name>`, however it is split between command and args.
    args = (list(c.get("command", [])) + list(c.get("args", [])))[3:]
    port, metrics_port = default_port(service), default_metrics_port(service)
    if flag(args, "--port") != str(port):
        problems.append(f"{where}: --port must be {port}, the documented port of {service}")
    if flag(args, "--metrics-port") != str(metrics_port):
        problems.append(f"{where}: --metrics-port must be {metrics_port}")
    env = environment(c, docs)
    if (flag(args, "--host") or env.get("FELT_HOST")) != "0.0.0.0":
        problems.append(f"{where}: must listen on 0.0.0.0 (--host or FELT_HOST), or probes cannot reach it")
    named = {p.get("name"): p["containerPort"] for p in c.get("ports", [])}
    for port_name, number in named_ports(service).items():
        if named.get(port_name) != number:
            problems.append(f"{where}: containerPort named {port_name} must be {number}")
    # The other two ports are opened by settings, not flags: they must name the same numbers.
    prefix = f"FELT_{service.upper()}_"
    for setting, port_name in ((prefix + "INTERNAL_PORT", "internal"), (prefix + "WEB_PORT", "web")):
        number = named_ports(service)[port_name]
        if env.get(setting) != str(number):
            problems.append(f"{where}: {setting} must be {number} (its containerPort {port_name})")
    # Plain HTTP on the metrics port (servicekit.probes): every gRPC port serves TLS, which the kubelet's
    # gRPC probe cannot speak. Readiness (and start-up) follow the health service; liveness the process.
    probes = (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz"), ("startupProbe", "/readyz"))
    for probe, path in probes:
        spec = c.get(probe)
        if spec is None:
            problems.append(f"{where}: {probe} is missing")
            continue
        get = spec.get("httpGet", {})
        if get.get("port") not in (metrics_port, "metrics") or get.get("path") != path:
            problems.append(
                f"{where}: {probe} must be an httpGet of {path} on the metrics port {metrics_port}"
            )
        if get.get("scheme", "HTTP") != "HTTP":
            problems.append(f"{where}: {probe} must be plain HTTP (the metrics port serves no TLS)")
    ready, live = c.get("readinessProbe", {}), c.get("livenessProbe", {})
    if ready and live:
        patience = live.get("periodSeconds", 10) * live.get("failureThreshold", 3)
        if patience <= ready.get("periodSeconds", 10) * ready.get("failureThreshold", 3):
            problems.append(
                f"{where}: liveness must be more patient than readiness (restart only when stuck)"
            )
    ann = w.annotations
    if (ann.get("prometheus.io/scrape"), ann.get("prometheus.io/port")) != ("true", str(metrics_port)):
        problems.append(f'{w}: prometheus.io/scrape must be "true" with prometheus.io/port {metrics_port}')
    if ann.get("prometheus.io/path", "/metrics") != "/metrics":
        problems.append(f"{w}: prometheus.io/path must be /metrics")
    writable = _writable_mounts(w, c)
    data_dir = env.get("FELT_DATA_DIR")
    if data_dir is None:
        problems.append(f"{where}: FELT_DATA_DIR is not set (the default is inside the read-only image)")
    elif data_dir.rstrip("/") not in {p.rstrip("/") for p in writable}:
        problems.append(f"{where}: FELT_DATA_DIR {data_dir} is not a writable volume mount")
    if "/tmp" not in writable:
        problems.append(f"{where}: /tmp must be a writable emptyDir (the root filesystem is read-only)")
    grace = float(env.get("FELT_SHUTDOWN_GRACE_SECONDS", "10"))
    budget = w.pod.get("terminationGracePeriodSeconds", 30)
    if budget <= grace + _pre_stop_seconds(c):
        problems.append(
            f"{w}: terminationGracePeriodSeconds {budget} must exceed the preStop pause plus "
            f"FELT_SHUTDOWN_GRACE_SECONDS {grace}, or SIGKILL cuts the drain short"
        )
    if production and env.get("FELT_ENV") != "production":
        problems.append(f"{where}: FELT_ENV must be production in the production overlay")
    # A key set (FELT_AUTH_KEYSET_DIR: rotating keys, servicekit.keyset) holds what a signer needs too.
    keyset_dir = env.get("FELT_AUTH_KEYSET_DIR", "").rstrip("/")
    if env.get("FELT_ENV") == "production" or production:
        key = env.get("FELT_AUTH_PUBLIC_KEY_FILE") or env.get("FELT_AUTH_PRIVATE_KEY_FILE")
        if keyset_dir:
            if keyset_dir not in _secret_mount_dirs(w, c):
                problems.append(f"{where}: the auth key set {keyset_dir} is not on a Secret volume")
        elif not key:
            problems.append(
                f"{where}: production needs FELT_AUTH_PUBLIC_KEY_FILE (or _PRIVATE_KEY_FILE, or a key set: "
                "FELT_AUTH_KEYSET_DIR)"
            )
        elif key.rsplit("/", 1)[0] not in _secret_mount_dirs(w, c):
            problems.append(f"{where}: the auth key {key} is not on a Secret volume")
    if service in SIGNING_SERVICES and (env.get("FELT_ENV") == "production" or production):
        if not env.get("FELT_AUTH_PRIVATE_KEY_FILE") and not keyset_dir:
            problems.append(
                f"{where}: {service} mints its own service token: it needs FELT_AUTH_PRIVATE_KEY_FILE"
            )
    elif service not in SIGNING_SERVICES and env.get("FELT_AUTH_PRIVATE_KEY_FILE"):
        problems.append(f"{where}: only {sorted(SIGNING_SERVICES)} may hold the private signing key")
    problems += _check_addresses(where, env, docs)
    if known_env is not None:
        names = set(env) | {e["name"] for e in c.get("env", [])}
        for name in sorted(
            n
            for n in names
            if n.startswith(("FELT_", "WALLET_", "TABLE_", "TOURNAMENT_")) and n not in known_env
        ):
            problems.append(
                f"{where}: {name} is read by no code in libs/ or services/ (a typo, or not built yet)"
            )
    if service == "wallet":
        entries = [e for e in c.get("env", []) if e["name"] == "WALLET_DATABASE_URL"]
        if not entries or "secretKeyRef" not in entries[0].get("valueFrom", {}):
            problems.append(f"{where}: WALLET_DATABASE_URL must come from a Secret (it holds credentials)")
    return problems


def _check_addresses(where: str, env: dict[str, str], docs: list[Doc]) -> list[str]:
    """FELT_<SERVICE>_ADDRESS names that service's Service in the render, on its internal port: services
    call each other with mutual TLS there (the public gRPC port takes no client certificate, so a
    service token is refused on it)."""
    problems = []
    for name, value in sorted(env.items()):
        match = _ADDRESS_SETTING.match(name)
        if match is None or match.group(1).lower() not in SERVICES:
            continue
        target = match.group(1).lower()
        host, _, port = value.rpartition(":")
        if find(docs, "Service", host.split(".")[0]) is None or port != str(internal_port(target)):
            problems.append(
                f"{where}: {name}={value} must be the {target} Service on its internal port "
                f"{internal_port(target)}"
            )
    return problems


def check_stateful(docs: list[Doc], loads: list[Workload]) -> list[str]:
    """A StatefulSet of Felt pods: its state on a volume of its own, a headless governing Service, no
    autoscaler (CPU does not move tables), volumes kept when pods go, and one pod where SINGLE_POD says."""
    problems = []
    autoscaled = {
        d["spec"]["scaleTargetRef"]["name"] for d in docs if d.get("kind") == "HorizontalPodAutoscaler"
    }
    for w in (w for w in loads if w.kind == "StatefulSet"):
        felt = [c for c in w.pod.get("containers", []) if felt_service_of(c) is not None]
        if not felt:
            continue
        spec = w.doc["spec"]
        claims = {t["metadata"]["name"] for t in spec.get("volumeClaimTemplates", [])}
        data_dir = environment(felt[0], docs).get("FELT_DATA_DIR", "").rstrip("/")
        mounts = {m["mountPath"].rstrip("/"): m["name"] for m in felt[0].get("volumeMounts", [])}
        if mounts.get(data_dir) not in claims:
            problems.append(
                f"{w}: FELT_DATA_DIR must be on a volumeClaimTemplate (the tables' logs outlive the pod)"
            )
        governing = find(docs, "Service", str(spec.get("serviceName", "")))
        if governing is None or governing["spec"].get("clusterIP") != "None":
            problems.append(f"{w}: serviceName must name a headless Service (clusterIP: None)")
        elif not selects(governing["spec"].get("selector", {}), w.labels):
            problems.append(f"{w}: its governing Service {governing['metadata']['name']} does not select it")
        if w.name in autoscaled:
            problems.append(f"{w}: no HorizontalPodAutoscaler: a shard owns its tables, CPU cannot move them")
        retention = spec.get("persistentVolumeClaimRetentionPolicy", {})
        if retention.get("whenScaled") != "Retain" or retention.get("whenDeleted") != "Retain":
            problems.append(f"{w}: persistentVolumeClaimRetentionPolicy must Retain (chips of hands in play)")
        reason = SINGLE_POD.get(str(felt_service_of(felt[0])))
        if reason and spec.get("replicas", 1) != 1:
            problems.append(f"{w}: replicas must be 1: {reason}")
        if felt_service_of(felt[0]) == "table" and spec.get("replicas", 1) != 1:
            problems += check_table_shards(w, felt[0], docs)
        if felt_service_of(felt[0]) == "tournament" and spec.get("replicas", 1) != 1:
            problems += check_tournament_replicas(w, felt[0], docs)
    return problems


def check_migrations(docs: list[Doc], loads: list[Workload]) -> list[str]:
    """A service with FELT_MIGRATE=external waits for a migration Job: there must be one that runs
    `felt migrate` for it on the same database (the same Secret), and the service must give up waiting
    (FELT_MIGRATE_WAIT_SECONDS) inside its startup probe's window, so it exits with a line saying what is
    missing instead of being killed without one. The Job itself: never restarted in place, retried a
    bounded number of times, and removed once done (its pod template cannot change between releases)."""
    problems = []
    jobs = [
        (w, c, done)
        for w in loads
        if w.kind == "Job"
        for c in w.pod.get("containers", [])
        if (done := migrates(c)) is not None
    ]
    for w, _c, _done in jobs:
        spec = w.doc["spec"]
        if w.pod.get("restartPolicy") not in ("Never", "OnFailure"):
            problems.append(f"{w}: restartPolicy must be Never or OnFailure")
        if "backoffLimit" not in spec or "activeDeadlineSeconds" not in spec:
            problems.append(f"{w}: set backoffLimit and activeDeadlineSeconds (a broken migration must stop)")
        if "ttlSecondsAfterFinished" not in spec:
            problems.append(f"{w}: set ttlSecondsAfterFinished (the next release's Job needs the name)")
    for w in loads:
        for c in w.pod.get("containers", []):
            service = felt_service_of(c)
            env = environment(c, docs)
            if service is None or env.get("FELT_MIGRATE") != "external":
                continue
            where = f"{w} container {c['name']}"
            setting = DATABASE_SETTINGS.get(service)
            if setting is None:
                problems.append(f"{where}: FELT_MIGRATE=external, but {service} keeps no database")
                continue
            source = _secret_of(c, setting)
            migrated = any(service in done and _secret_of(job, setting) == source for _w, job, done in jobs)
            if source is None:
                problems.append(f"{where}: FELT_MIGRATE=external needs {setting} from a Secret (shared)")
            elif not migrated:
                problems.append(
                    f"{where}: FELT_MIGRATE=external, but no Job runs `felt migrate {service}` with "
                    f"{setting} from the same Secret {source}: it would wait forever"
                )
            startup = c.get("startupProbe", {})
            window = startup.get("periodSeconds", 10) * startup.get("failureThreshold", 3)
            wait = float(env.get("FELT_MIGRATE_WAIT_SECONDS", "300"))
            if wait >= window:
                problems.append(
                    f"{where}: FELT_MIGRATE_WAIT_SECONDS {wait:g} must be under the startup probe's window "
                    f"({window} s), so the pod exits saying what is missing instead of being killed silently"
                )
    return problems


def _secret_of(container: Doc, setting: str) -> tuple[str, str] | None:
    for item in container.get("env", []):
        if item["name"] == setting:
            ref = item.get("valueFrom", {}).get("secretKeyRef")
            return (ref["name"], ref["key"]) if ref else None
    return None


def check_references(w: Workload, docs: list[Doc], external_secrets: set[str]) -> list[str]:
    """Every Secret and ConfigMap a pod needs exists in the render or is a documented external Secret."""
    problems = []
    secrets, config_maps = set(), set()
    for v in w.pod.get("volumes", []):
        if "secret" in v:
            secrets.add(v["secret"]["secretName"])
        if "configMap" in v:
            config_maps.add(v["configMap"]["name"])
    for c in w.containers():
        for source in c.get("envFrom", []):
            if "configMapRef" in source:
                config_maps.add(source["configMapRef"]["name"])
            if "secretRef" in source:
                secrets.add(source["secretRef"]["name"])
        for item in c.get("env", []):
            ref = item.get("valueFrom", {})
            if "secretKeyRef" in ref:
                secrets.add(ref["secretKeyRef"]["name"])
            if "configMapKeyRef" in ref:
                config_maps.add(ref["configMapKeyRef"]["name"])
    # cert-manager makes a Certificate's Secret in the cluster.
    issued = {d["spec"].get("secretName") for d in docs if d.get("kind") == "Certificate"}
    for name in sorted(secrets):
        if find(docs, "Secret", name) is None and name not in external_secrets | issued:
            problems.append(f"{w}: Secret {name!r} is neither generated nor a documented external Secret")
    for name in sorted(config_maps):
        if find(docs, "ConfigMap", name) is None:
            problems.append(f"{w}: ConfigMap {name!r} does not exist")
    return problems


def check_services(docs: list[Doc], loads: list[Workload]) -> list[str]:
    problems = []
    for svc in (d for d in docs if d.get("kind") == "Service"):
        name = svc["metadata"]["name"]
        selector = svc["spec"].get("selector", {})
        matched = service_workloads(svc, docs)
        if len(matched) != 1:
            problems.append(f"Service/{name}: selector {selector} matches {len(matched)} workloads, not 1")
            continue
        w = matched[0]
        ports = {}
        for c in w.pod.get("containers", []):
            for p in c.get("ports", []):
                ports[p.get("name")] = p["containerPort"]
                ports[p["containerPort"]] = p["containerPort"]
        for port in svc["spec"].get("ports", []):
            target = port.get("targetPort", port["port"])
            if target not in ports:
                problems.append(f"Service/{name}: targetPort {target!r} is not a port of {w}")
        if name in SERVICES:
            problems += _check_service_ports(svc, name, ports)
    return problems


# What each port of a Felt Service speaks: native gRPC (TLS), gRPC with mutual TLS, HTTP/1.1 (the door).
SERVICE_PORT_PROTOCOLS = {"grpc": "grpc", "internal": "grpc", "web": "http"}


def _check_service_ports(svc: Doc, service: str, container_ports: dict[Any, int]) -> list[str]:
    """The Service of a Felt service: its gRPC, internal and web ports, each reaching the container's."""
    problems = []
    name = svc["metadata"]["name"]
    by_name = {p.get("name"): p for p in svc["spec"].get("ports", [])}
    for port_name, protocol in SERVICE_PORT_PROTOCOLS.items():
        number = named_ports(service)[port_name]
        port = by_name.get(port_name)
        if port is None or port["port"] != number:
            problems.append(f"Service/{name}: needs a port named {port_name} on {number}")
            continue
        if container_ports.get(port.get("targetPort", port["port"])) != number:
            problems.append(f"Service/{name}: the {port_name} port must reach the container's port {number}")
        if port.get("appProtocol") != protocol:
            problems.append(f"Service/{name}: the {port_name} port should declare appProtocol: {protocol}")
    return problems


def check_disruption_and_scaling(docs: list[Doc], loads: list[Workload]) -> list[str]:
    problems = []
    hpas = {
        d["spec"]["scaleTargetRef"]["name"]: d for d in docs if d.get("kind") == "HorizontalPodAutoscaler"
    }
    for pdb in (d for d in docs if d.get("kind") == "PodDisruptionBudget"):
        name = pdb["metadata"]["name"]
        selector = pdb["spec"].get("selector", {}).get("matchLabels", {})
        matched = [w for w in loads if selects(selector, w.labels)]
        if len(matched) != 1:
            problems.append(
                f"PodDisruptionBudget/{name}: selector {selector} matches {len(matched)} workloads"
            )
            continue
        if ("minAvailable" in pdb["spec"]) == ("maxUnavailable" in pdb["spec"]):
            problems.append(f"PodDisruptionBudget/{name}: set exactly one of minAvailable / maxUnavailable")
        floor = hpas.get(matched[0].name, {}).get("spec", {}).get("minReplicas", 1)
        if isinstance(pdb["spec"].get("minAvailable"), int) and pdb["spec"]["minAvailable"] >= floor:
            problems.append(f"PodDisruptionBudget/{name}: minAvailable >= replicas blocks every node drain")
        if pdb["spec"].get("maxUnavailable") == 0:
            problems.append(f"PodDisruptionBudget/{name}: maxUnavailable 0 blocks every node drain")
    for target, hpa in hpas.items():
        name = hpa["metadata"]["name"]
        ref = hpa["spec"]["scaleTargetRef"]
        doc = find(docs, ref["kind"], target)
        if doc is None:
            problems.append(f"HorizontalPodAutoscaler/{name}: target {ref['kind']}/{target} does not exist")
            continue
        low, high = hpa["spec"].get("minReplicas", 1), hpa["spec"]["maxReplicas"]
        if not 1 <= low <= high:
            problems.append(
                f"HorizontalPodAutoscaler/{name}: need 1 <= minReplicas {low} <= maxReplicas {high}"
            )
        if "replicas" in doc["spec"]:
            problems.append(f"{ref['kind']}/{target}: drop spec.replicas, the HPA owns it (apply resets it)")
        for c in Workload(doc).pod.get("containers", []):
            if "cpu" not in c.get("resources", {}).get("requests", {}):
                problems.append(f"{ref['kind']}/{target}: CPU autoscaling needs a CPU request")
    return problems


def check_capacity(docs: list[Doc]) -> list[str]:
    """Settings that must agree with the resources: dealer shoes vs memory, wallet pools vs PostgreSQL."""
    problems = []
    hpas = {
        d["spec"]["scaleTargetRef"]["name"]: d for d in docs if d.get("kind") == "HorizontalPodAutoscaler"
    }
    dealer = find(docs, "Deployment", "dealer")
    if dealer is not None:
        c = Workload(dealer).pod["containers"][0]
        shoes = int(environment(c, docs).get("FELT_DEALER_MAX_SHOES", DEALER_DEFAULT_MAX_SHOES))
        need = shoes * DEALER_BYTES_PER_SHOE + DEALER_BASELINE_BYTES
        limit = quantity(c.get("resources", {}).get("limits", {}).get("memory", "0"))
        if need > limit:
            problems.append(
                f"Deployment/dealer: FELT_DEALER_MAX_SHOES={shoes} needs ~{need / 2**20:.0f} MiB of shoes in "
                f"memory but the limit is {limit / 2**20:.0f} MiB: the pod would be OOM-killed with its shoes"
            )
    wallet = find(docs, "Deployment", "wallet")
    if wallet is not None and "wallet" in hpas:
        c = Workload(wallet).pod["containers"][0]
        pool = int(environment(c, docs).get("FELT_WALLET_PG_POOL_SIZE", WALLET_DEFAULT_POOL_SIZE))
        replicas = hpas["wallet"]["spec"]["maxReplicas"]
        if pool * replicas > POSTGRES_CONNECTION_BUDGET:
            problems.append(
                f"Deployment/wallet: {replicas} replicas x FELT_WALLET_PG_POOL_SIZE {pool} = "
                f"{pool * replicas} "
                f"connections exceeds the PostgreSQL budget of {POSTGRES_CONNECTION_BUDGET}"
            )
    return problems


def check_rendered(
    docs: list[Doc], external_secrets: set[str], production: bool = False, known_env: set[str] | None = None
) -> list[str]:
    """Every check on one rendered overlay (`known_env`: the variables the code reads, when known)."""
    problems = []
    loads = workloads(docs)
    for service in DEPLOYED_SERVICES:
        for kind in ("Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget"):
            if find(docs, kind, service) is None:
                problems.append(f"{service}: no {kind}")
    for service in STATEFUL_SERVICES:
        for kind in ("StatefulSet", "Service", "PodDisruptionBudget"):
            if find(docs, kind, service) is None:
                problems.append(f"{service}: no {kind}")
    for w in loads:
        problems += check_security(w) + check_resources(w) + check_volumes(w)
        problems += check_references(w, docs, external_secrets)
        for c in w.pod.get("containers", []):
            if felt_service_of(c) is not None:
                problems += check_felt_container(w, c, docs, production, known_env)
    problems += check_services(docs, loads)
    problems += check_disruption_and_scaling(docs, loads)
    problems += check_stateful(docs, loads)
    problems += check_migrations(docs, loads)
    problems += check_capacity(docs)
    dealer = find(docs, "Service", "dealer")
    if dealer is not None and dealer["spec"].get("sessionAffinity") != "ClientIP":
        problems.append("Service/dealer: shoes live in one pod's memory; sessionAffinity must be ClientIP")
    namespaces = {d["metadata"].get("namespace") for d in docs if d.get("kind") not in ("Namespace",)}
    if len(namespaces) > 1:
        problems.append(f"resources are spread over several namespaces: {sorted(map(str, namespaces))}")
    return problems
