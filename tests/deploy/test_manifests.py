"""Kubernetes manifests, rendered by a real kustomize and checked offline (deploy/validate/manifests.py).

Each rule of the checker has a test that breaks a rendered overlay in exactly that way and expects the
checker to say so; the untouched overlays must pass. The last tests start the containers' exact command
line and environment as local processes and probe them the way the kubelet and Prometheus would.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import grpc
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from felt import registry
from grpc_health.v1 import health_pb2, health_pb2_grpc
from servicekit import auth
from servicekit.testing import free_port

from deploy.validate import kustomize, layout, manifests, schemas, suite

Doc = dict[str, Any]
OVERLAYS = {o.name: o for o in layout.OVERLAYS}


def production() -> list[Doc]:
    return copy.deepcopy(suite.rendered("production"))


def problems_of(docs: list[Doc], overlay: str = "production") -> list[str]:
    o = OVERLAYS[overlay]
    return manifests.check_rendered(docs, set(o.external_secrets), o.production, suite.catalog().env_vars)


def get(docs: list[Doc], kind: str, name: str) -> Doc:
    doc = manifests.find(docs, kind, name)
    assert doc is not None, f"{kind}/{name} missing"
    return doc


def workload(docs: list[Doc], name: str) -> Doc:
    """The Deployment or StatefulSet that runs the service `name`."""
    for kind in manifests.WORKLOAD_KINDS:
        doc = manifests.find(docs, kind, name)
        if doc is not None:
            return doc
    raise AssertionError(f"no workload {name}")


def container(docs: list[Doc], name: str) -> Doc:
    return dict(workload(docs, name)["spec"]["template"]["spec"]["containers"][0])


def pod(docs: list[Doc], name: str) -> Doc:
    return dict(workload(docs, name)["spec"]["template"]["spec"])


def test_kustomize_is_real_and_pinned() -> None:
    """The renderer is kubectl's embedded kustomize, not an imitation."""
    command = kustomize.find_kustomize()
    version = subprocess.run(
        [command[0], "version", "--client"], capture_output=True, text=True, check=True
    ).stdout
    assert "Kustomize Version: v5" in version


@pytest.mark.parametrize("overlay", sorted(OVERLAYS))
def test_overlay_renders_and_passes_every_check(overlay: str) -> None:
    docs = suite.rendered(overlay)
    assert problems_of(copy.deepcopy(docs), overlay) == []
    kinds = {(d["kind"], d["metadata"]["name"]) for d in docs}
    for service in manifests.DEPLOYED_SERVICES:
        assert {("Deployment", service), ("Service", service), ("PodDisruptionBudget", service)} <= kinds
    for service in manifests.STATEFUL_SERVICES:
        assert {("StatefulSet", service), ("Service", service), ("PodDisruptionBudget", service)} <= kinds


@pytest.mark.parametrize("overlay", sorted(OVERLAYS))
def test_overlay_matches_the_kubernetes_schemas_strictly(overlay: str) -> None:
    assert schemas.check_schemas(copy.deepcopy(suite.rendered(overlay))) == []


def test_overlays_land_in_their_namespace_with_their_settings() -> None:
    dev, prod = suite.rendered("dev"), suite.rendered("production")
    assert {d["metadata"].get("namespace") for d in dev if d["kind"] != "Namespace"} == {"felt-dev"}
    assert {d["metadata"].get("namespace") for d in prod if d["kind"] != "Namespace"} == {"felt"}
    dev_env = manifests.environment(container(dev, "wallet"), dev)
    prod_env = manifests.environment(container(prod, "wallet"), prod)
    assert (dev_env["FELT_ENV"], prod_env["FELT_ENV"]) == ("development", "production")
    # The wallet's database: generated for dev (in-cluster PostgreSQL), an external Secret in production.
    assert any(d["kind"] == "StatefulSet" and d["metadata"]["name"] == "wallet-postgres" for d in dev)
    assert not any(d["kind"] == "Secret" for d in prod), "production secrets never live in git"


def test_production_runs_more_replicas_than_dev() -> None:
    assert suite.check_more_replicas_in_production().problems == []
    floors = {
        d["metadata"]["name"]: d["spec"]["minReplicas"]
        for d in suite.rendered("production")
        if d["kind"] == "HorizontalPodAutoscaler"
    }
    assert set(floors) == set(manifests.DEPLOYED_SERVICES) and min(floors.values()) >= 3


def _set(path: str, value: Any) -> Callable[[list[Doc]], None]:
    """A mutation: set `value` at `Kind/name:dotted.path` (digits index lists; None deletes)."""
    target, dotted = path.split(":")
    kind, name = target.split("/")

    def mutate(docs: list[Doc]) -> None:
        node: Any = get(docs, kind, name)
        keys = [int(k) if k.isdigit() else k for k in dotted.split(".")]
        for key in keys[:-1]:
            node = node[key]
        if value is None:
            del node[keys[-1]]
        else:
            node[keys[-1]] = value

    return mutate


def _pdb_min_available(count: int) -> Callable[[list[Doc]], None]:
    def mutate(docs: list[Doc]) -> None:
        spec = get(docs, "PodDisruptionBudget", "wallet")["spec"]
        del spec["maxUnavailable"]
        spec["minAvailable"] = count

    return mutate


POD = "spec.template.spec"
C0 = POD + ".containers.0"
MUTATIONS: dict[str, tuple[Callable[[list[Doc]], None], str]] = {
    # probes: native gRPC, on the serving port
    "no readiness probe": (_set(f"Deployment/wallet:{C0}.readinessProbe", None), "readinessProbe is missing"),
    "no liveness probe": (_set(f"Deployment/dealer:{C0}.livenessProbe", None), "livenessProbe is missing"),
    "probe on the metrics port": (
        _set(f"Deployment/evaluator:{C0}.livenessProbe.grpc.port", 9101),
        "livenessProbe must be a native grpc probe on port 50051",
    ),
    "tcp probe instead of grpc": (
        _set(f"Deployment/wallet:{C0}.readinessProbe", {"tcpSocket": {"port": 50053}}),
        "readinessProbe must be a native grpc probe",
    ),
    "impatient liveness": (
        _set(f"Deployment/dealer:{C0}.livenessProbe.failureThreshold", 1),
        "liveness must be more patient",
    ),
    "wrong serving port": (
        _set(f"Deployment/dealer:{C0}.args.4", "50099"),
        "--port must be 50052",
    ),
    "loopback only": (_set(f"Deployment/dealer:{C0}.args.2", "127.0.0.1"), "must listen on 0.0.0.0"),
    # hardened security context
    "writable root filesystem": (
        _set(f"Deployment/wallet:{C0}.securityContext.readOnlyRootFilesystem", False),
        "readOnlyRootFilesystem must be true",
    ),
    "privilege escalation": (
        _set(f"Deployment/evaluator:{C0}.securityContext.allowPrivilegeEscalation", True),
        "allowPrivilegeEscalation must be false",
    ),
    "capabilities kept": (
        _set(f"Deployment/dealer:{C0}.securityContext.capabilities", {"drop": ["NET_RAW"]}),
        "capabilities must drop ALL",
    ),
    "capability added": (
        _set(f"Deployment/dealer:{C0}.securityContext.capabilities.add", ["NET_ADMIN"]),
        "no capability may be added",
    ),
    "root allowed": (
        _set(f"Deployment/wallet:{POD}.securityContext.runAsNonRoot", None),
        "runAsNonRoot must be true",
    ),
    "unconfined seccomp": (
        _set(f"Deployment/wallet:{POD}.securityContext.seccompProfile.type", "Unconfined"),
        "seccompProfile must be RuntimeDefault",
    ),
    "api token mounted": (
        _set(f"Deployment/wallet:{POD}.automountServiceAccountToken", True),
        "automountServiceAccountToken must be false",
    ),
    # requests and limits
    "no memory limit": (
        _set(f"Deployment/evaluator:{C0}.resources.limits.memory", None),
        "resources.limits.memory is missing",
    ),
    "request above limit": (
        _set(f"Deployment/evaluator:{C0}.resources.requests.cpu", "3"),
        "cpu request 3 exceeds its limit",
    ),
    # scratch data dir and drain budget
    "data dir not mounted": (
        _set(f"Deployment/dealer:{C0}.volumeMounts.0.mountPath", "/data"),
        "FELT_DATA_DIR /var/lib/felt is not a writable volume mount",
    ),
    "no writable tmp": (
        _set(f"Deployment/dealer:{C0}.volumeMounts.1", {"name": "auth", "mountPath": "/x"}),
        "/tmp must be a writable emptyDir",
    ),
    "grace shorter than the drain": (
        _set(f"Deployment/wallet:{POD}.terminationGracePeriodSeconds", 25),
        "terminationGracePeriodSeconds 25 must exceed",
    ),
    # Prometheus scraping
    "scrape annotation on the wrong port": (
        lambda docs: get(docs, "Deployment", "wallet")["spec"]["template"]["metadata"]["annotations"].update(
            {"prometheus.io/port": "9101"}
        ),
        "prometheus.io/port 9103",
    ),
    # secrets and production settings
    "auth key not configured": (
        _set(f"Deployment/dealer:{C0}.env", []),
        "production needs FELT_AUTH_PUBLIC_KEY_FILE",
    ),
    "auth key outside the secret volume": (
        _set(f"Deployment/dealer:{C0}.env.0.value", "/var/lib/felt/public.pem"),
        "is not on a Secret volume",
    ),
    "database URL in plain text": (
        _set(
            f"Deployment/wallet:{C0}.env.1", {"name": "WALLET_DATABASE_URL", "value": "postgresql://u:p@db/x"}
        ),
        "WALLET_DATABASE_URL must come from a Secret",
    ),
    "unknown secret": (
        _set(f"Deployment/wallet:{C0}.env.1.valueFrom.secretKeyRef.name", "wallet-db"),
        "Secret 'wallet-db' is neither generated nor a documented external Secret",
    ),
    # Services, PDBs and HPAs really select and target the pods
    "service selects nothing": (
        _set("Service/wallet:spec.selector", {"app.kubernetes.io/name": "walet"}),
        "matches 0 workloads",
    ),
    "service targets a missing port": (
        _set("Service/evaluator:spec.ports.0.targetPort", "http"),
        "targetPort 'http' is not a port",
    ),
    "service on another port": (
        _set("Service/dealer:spec.ports.0.port", 8080),
        "needs a port named grpc on 50052",
    ),
    "pdb selects nothing": (
        _set("PodDisruptionBudget/dealer:spec.selector.matchLabels", {"app": "dealer"}),
        "PodDisruptionBudget/dealer: selector",
    ),
    "pdb blocks drains": (
        _set("PodDisruptionBudget/wallet:spec.maxUnavailable", 0),
        "blocks every node drain",
    ),
    "pdb min equals replicas": (_pdb_min_available(3), "minAvailable >= replicas blocks every node drain"),
    "hpa targets nothing": (
        _set("HorizontalPodAutoscaler/dealer:spec.scaleTargetRef.name", "dealers"),
        "target Deployment/dealers does not exist",
    ),
    "replicas fight the hpa": (_set("Deployment/evaluator:spec.replicas", 2), "the HPA owns it"),
    "dealer not sticky": (
        _set("Service/dealer:spec.sessionAffinity", None),
        "sessionAffinity must be ClientIP",
    ),
    # capacity: settings that must agree with the resources
    "dealer shoes beyond its memory": (
        _set(f"Deployment/dealer:{C0}.env.1.value", "100000"),
        "the pod would be OOM-killed with its shoes",
    ),
    "wallet pools beyond PostgreSQL": (
        _set("HorizontalPodAutoscaler/wallet:spec.maxReplicas", 20),
        "exceeds the PostgreSQL budget",
    ),
    "misspelled setting": (
        _set(f"Deployment/dealer:{C0}.env.1.name", "FELT_DEALER_MAX_SHOE"),
        "FELT_DEALER_MAX_SHOE is read by no code",
    ),
    "a service missing": (
        lambda docs: docs.remove(get(docs, "PodDisruptionBudget", "evaluator")),
        "evaluator: no PodDisruptionBudget",
    ),
    # the table service: a StatefulSet of shards, each with its own volume
    "table shard without its pdb": (
        lambda docs: docs.remove(get(docs, "PodDisruptionBudget", "table")),
        "table: no PodDisruptionBudget",
    ),
    "table data on scratch space": (
        _set(f"StatefulSet/table:{C0}.volumeMounts.0.name", "tmp"),
        "FELT_DATA_DIR must be on a volumeClaimTemplate",
    ),
    "table shards without a headless service": (
        _set("Service/table-shards:spec.clusterIP", None),
        "serviceName must name a headless Service",
    ),
    "table shards governed by another service": (
        _set("StatefulSet/table:spec.serviceName", "wallet"),
        "serviceName must name a headless Service",
    ),
    "table volumes deleted with the pods": (
        _set("StatefulSet/table:spec.persistentVolumeClaimRetentionPolicy.whenScaled", "Delete"),
        "persistentVolumeClaimRetentionPolicy must Retain",
    ),
    # issue 15: three table shards, sharded, each under its pod's name, on one PostgreSQL store
    "table shards each serving every table": (
        _set(f"StatefulSet/table:{C0}.env.3.value", "0"),
        "several table pods need FELT_TABLE_SHARDED=1",
    ),
    "table shards on their own SQLite volumes": (
        _set(f"StatefulSet/table:{C0}.env.10.name", "FELT_TABLE_UNUSED"),
        "several table pods need TABLE_DATABASE_URL (PostgreSQL) from a Secret",
    ),
    "table shards advertising the shared Service": (
        _set(f"StatefulSet/table:{C0}.env.7.value", "table:50054"),
        "FELT_TABLE_ADVERTISE_ADDRESS must be the pod's own name under table-shards",
    ),
    # the tournament service: one director on its own volume, driving the table, wallet and dealer
    "two tournament directors": (
        _set("StatefulSet/tournament:spec.replicas", 2),
        "replicas must be 1: one director drives every tournament",
    ),
    "tournament state on scratch space": (
        _set(f"StatefulSet/tournament:{C0}.volumeMounts.0.name", "tmp"),
        "FELT_DATA_DIR must be on a volumeClaimTemplate",
    ),
    "tournament pointed at tables that are not there": (
        _set(f"StatefulSet/tournament:{C0}.env.1.value", "tables:50054"),
        "FELT_TABLE_ADDRESS=tables:50054 must be the table Service on 50054",
    ),
    "tournament on the table's port": (
        _set(f"StatefulSet/tournament:{C0}.args.4", "50054"),
        "--port must be 50055",
    ),
    "tournament without its signing key": (
        _set(f"StatefulSet/tournament:{C0}.env.0.name", "FELT_AUTH_PUBLIC_KEY_FILE"),
        "tournament mints its own service token: it needs FELT_AUTH_PRIVATE_KEY_FILE",
    ),
    "tournament without its pdb": (
        lambda docs: docs.remove(get(docs, "PodDisruptionBudget", "tournament")),
        "tournament: no PodDisruptionBudget",
    ),
    "table autoscaled": (
        lambda docs: docs.append(
            {
                "apiVersion": "autoscaling/v2",
                "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": "table", "namespace": "felt"},
                "spec": {
                    "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "table"},
                    "minReplicas": 1,
                    "maxReplicas": 3,
                },
            }
        ),
        "no HorizontalPodAutoscaler: a shard owns its tables",
    ),
    "table without its signing key": (
        _set(f"StatefulSet/table:{C0}.env.0.name", "FELT_AUTH_PUBLIC_KEY_FILE"),
        "table mints its own service token: it needs FELT_AUTH_PRIVATE_KEY_FILE",
    ),
    "signing key outside the secret volume": (
        _set(f"StatefulSet/table:{C0}.env.0.value", "/var/lib/felt/private.pem"),
        "is not on a Secret volume",
    ),
    "private key given to a verifier": (
        _set(f"Deployment/dealer:{C0}.env.0.name", "FELT_AUTH_PRIVATE_KEY_FILE"),
        "may hold the private signing key",
    ),
    "table pointed at a wallet that is not there": (
        _set(f"StatefulSet/table:{C0}.env.2.value", "wallets:50053"),
        "FELT_WALLET_ADDRESS=wallets:50053 must be the wallet Service on 50053",
    ),
    "table pointed at the dealer's metrics port": (
        _set(f"StatefulSet/table:{C0}.env.1.value", "dealer:9102"),
        "FELT_DEALER_ADDRESS=dealer:9102 must be the dealer Service on 50052",
    ),
    "table scrape annotation missing": (
        lambda docs: get(docs, "StatefulSet", "table")["spec"]["template"]["metadata"]["annotations"].pop(
            "prometheus.io/scrape"
        ),
        "prometheus.io/port 9104",
    ),
}


SCHEMA_BREAKS: dict[str, tuple[Callable[[list[Doc]], None], str]] = {
    "misspelled field": (
        _set(f"Deployment/wallet:{C0}.readinesProbe", {"grpc": {"port": 50053}}),
        "'readinesProbe' was unexpected",
    ),
    "port as a string": (
        lambda docs: get(docs, "Service", "dealer")["spec"]["ports"][0].update({"port": "50052"}),
        "spec.ports.0.port",
    ),
    "unknown kind version": (
        lambda docs: get(docs, "HorizontalPodAutoscaler", "evaluator").update(
            {"apiVersion": "autoscaling/v2beta1"}
        ),
        "no schema for autoscaling/v2beta1",
    ),
}


@pytest.mark.parametrize("case", sorted(SCHEMA_BREAKS))
def test_schema_check_catches(case: str) -> None:
    mutate, expected = SCHEMA_BREAKS[case]
    docs = production()
    mutate(docs)
    problems = schemas.check_schemas(docs, versions=("1.37.0",))
    assert any(expected in p for p in problems), problems


@pytest.mark.parametrize("case", sorted(MUTATIONS))
def test_checker_catches(case: str) -> None:
    mutate, expected = MUTATIONS[case]
    docs = production()
    mutate(docs)
    problems = problems_of(docs)
    assert any(expected in p for p in problems), f"{case}: expected {expected!r} in {problems}"


def test_production_overlay_must_say_production() -> None:
    docs = production()
    config_map = next(d for d in docs if d["kind"] == "ConfigMap")
    config_map["data"]["FELT_ENV"] = "development"
    assert any("FELT_ENV must be production" in p for p in problems_of(docs))


# --- the containers, run as the manifests say --------------------------------------------------------


def _process_spec(docs: list[Doc], name: str, tmp: Path) -> tuple[list[str], dict[str, str], Doc]:
    """argv and environment of the workload's container with ports, volumes and secrets made local.

    The probe/annotation/arg port agreement is checked above on the real numbers; here the numbers are
    swapped for free ones (other tests may hold the defaults) and the mounts for temporary directories."""
    c = container(docs, name)
    spec = pod(docs, name)
    annotations = workload(docs, name)["spec"]["template"]["metadata"]["annotations"]
    grpc_port, metrics_port = free_port(), free_port()
    swap = {
        str(c["readinessProbe"]["grpc"]["port"]): str(grpc_port),
        annotations["prometheus.io/port"]: str(metrics_port),
    }
    argv = [swap.get(a, a) for a in c["command"] + c["args"]]
    mounts = {m["mountPath"]: tmp / m["name"] for m in c["volumeMounts"]}
    for path in mounts.values():
        path.mkdir(parents=True, exist_ok=True)
    env = manifests.environment(c, docs)
    for mount, local in mounts.items():
        env = {k: v.replace(mount, str(local)) if v.startswith(mount) else v for k, v in env.items()}
    env["TMPDIR"] = str(mounts["/tmp"])
    # Scratch (emptyDir) and the StatefulSet's own volumes are the only writable places.
    writable_volumes = {v["name"] for v in spec["volumes"] if "emptyDir" in v}
    writable_volumes |= {
        t["metadata"]["name"] for t in workload(docs, name)["spec"].get("volumeClaimTemplates", [])
    }
    writable = [str(tmp / m["name"]) for m in c["volumeMounts"] if m["name"] in writable_volumes]
    # The `felt-auth` (public key) and `felt-auth-signing` (private key) Secrets, made the way
    # docs/operations.md tells operators to make them, where the container's settings look for them.
    _make_auth_keys(tmp / "felt-auth.pem", tmp / "felt-auth.pub.pem")
    for setting, made in (
        ("FELT_AUTH_PUBLIC_KEY_FILE", "felt-auth.pub.pem"),
        ("FELT_AUTH_PRIVATE_KEY_FILE", "felt-auth.pem"),
    ):
        if setting in env:
            shutil.copy(tmp / made, env[setting])
    base = {k: v for k, v in os.environ.items() if not k.startswith(("FELT_", "WALLET_"))}
    info = {
        "grpc_port": grpc_port,
        "metrics_port": metrics_port,
        "grace": spec["terminationGracePeriodSeconds"],
        "path": annotations["prometheus.io/path"],
    }
    command = [str(Path(sys.executable).parent / argv[0]), *argv[1:]]
    return _read_only_root(command, writable), {**base, **env}, info


# The container's securityContext, locally: a private mount namespace with / remounted read-only and a
# tmpfs on each emptyDir path, then no capabilities at all and no_new_privs. Needs root (CI and this machine run as root); elsewhere the test says loudly that
# it ran with a writable root.
_RO_ROOT = (
    'mount -o remount,bind,ro / || exit 97; n=$1; shift; while [ "$n" -gt 0 ]; do '
    'mount -t tmpfs -o size=64m tmpfs "$1" || exit 97; shift; n=$((n - 1)); done; '
    # capabilities: drop ALL, allowPrivilegeEscalation: false
    'exec setpriv --no-new-privs --bounding-set=-all --inh-caps=-all "$@"'
)


def _can_remount_read_only() -> bool:
    probe = ["unshare", "--mount", "--propagation", "private", "sh", "-c", "mount -o remount,bind,ro /"]
    try:
        return subprocess.run(probe, capture_output=True, timeout=10, check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _read_only_root(command: list[str], writable: list[str]) -> list[str]:
    if not _can_remount_read_only():
        print("!" * 20 + " no mount namespace here: the container ran with a WRITABLE root " + "!" * 20)
        return command
    return [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        _RO_ROOT,
        "sh",
        str(len(writable)),
        *writable,
        *command,
    ]


def _make_auth_keys(private: Path, public: Path) -> None:
    """`openssl genpkey -algorithm ed25519` + `openssl pkey -pubout`, as in docs/operations.md "Secrets"."""
    if shutil.which("openssl"):
        subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", str(private)], check=True)
        subprocess.run(["openssl", "pkey", "-in", str(private), "-pubout", "-out", str(public)], check=True)
        return
    print("!" * 20 + " openssl is absent: the auth keys were made with cryptography instead " + "!" * 20)
    key = Ed25519PrivateKey.generate()
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )


# A read-only RPC of each service: called with an empty request, it must be refused for lack of a token
# and, with a token from `felt token`, get past authentication (whatever it thinks of the empty request).
READ_ONLY_RPC = {
    "evaluator": "/poker.evaluator.v1.EvaluatorService/Evaluate",
    "dealer": "/poker.dealer.v1.DealerService/GetShoe",
    "wallet": "/poker.wallet.v1.WalletService/GetAccount",
    "table": "/poker.table.v1.TableService/ListTables",
    "tournament": "/poker.tournament.v1.TournamentService/ListTournaments",
}
# The service's own series on /metrics (the table service serves the casino's and the poker tables').
OWN_METRICS = {"table": ("poker_table_", "poker_casino_")}


# The services the table and the tournament call (deploy/validate/netpol.py CALLS, minus the evaluator,
# which the table does not call yet), in the order they can be started.
DEPENDENCIES = {"table": ("dealer", "wallet"), "tournament": ("dealer", "wallet", "table")}


@contextmanager
def _dependencies(name: str, tmp: Path, env: dict[str, str]) -> Iterator[None]:
    """The table and the tournament are SERVING only once the services they call answer: run those here
    (development mode) with the key of the signing Secret, so they accept the token the service mints, and
    point the service at them as the cluster's Service names would."""
    from servicekit.testing import config_for_tests, running

    needed = DEPENDENCIES.get(name, ())
    if not needed:
        yield
        return
    deps = tmp / "dependencies"
    (deps / auth.DEV_KEY_NAME).parent.mkdir(parents=True)
    shutil.copy(tmp / "felt-auth.pem", deps / auth.DEV_KEY_NAME)
    addresses: dict[str, str] = {}
    with ExitStack() as stack:
        for dependency in needed:
            entry = registry.find(dependency)
            assert entry is not None, dependency
            extra = {f"{d}_address": a for d, a in addresses.items()}
            config = config_for_tests(dependency, deps, **extra)  # one key: they accept each other
            addresses[dependency] = stack.enter_context(running(entry.service_spec, config)).address
        for dependency, address in addresses.items():
            env[f"FELT_{dependency.upper()}_ADDRESS"] = address
        yield


def _allows_anonymous(name: str) -> bool:
    """What the service itself declares (the evaluator ranks hands for anyone; the others need a token)."""
    from servicekit.testing import config_for_tests

    entry = registry.find(name)
    assert entry is not None
    with tempfile.TemporaryDirectory() as data:
        spec = entry.service_spec(config_for_tests(name, Path(data)))
        spec.on_stop()  # building a spec may open stores and start threads: release them
        return bool(spec.allow_anonymous)


def _call_code(port: int, method: str, token: str | None) -> grpc.StatusCode:
    metadata = [("authorization", f"Bearer {token}")] if token else []
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        try:
            channel.unary_unary(method)(b"", timeout=10, metadata=metadata)
        except grpc.RpcError as exc:
            return exc.code()  # type: ignore[no-any-return]
    return grpc.StatusCode.OK


def _wait_serving(port: int, deadline: float) -> int:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while True:
            try:
                return int(stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1).status)
            except grpc.RpcError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)


def _postgres_database() -> str:
    """A database of this test's own on the shared server, so it never meets the wallet suite's tables."""
    url = os.environ.get("FELT_TEST_POSTGRES_URL")
    if not url:
        pytest.skip(
            "FELT_TEST_POSTGRES_URL is not set: the production wallet container (PostgreSQL only) was NOT run"
        )
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = 'felt_deploy_test'").fetchone():
            conn.execute("CREATE DATABASE felt_deploy_test")
    return urlsplit(url)._replace(path="/felt_deploy_test").geturl()


@pytest.mark.parametrize("name", [entry.name for entry in registry.available()])
def test_container_command_serves_probes_and_drains(name: str, tmp_path: Path) -> None:
    """The production container spec, run as a process: FELT_ENV=production with only the mounted
    public key (made with openssl as the docs say; tokens from `felt token` pass, none are refused), gRPC health SERVING on the probe port, /metrics on the scrape port with the
    go-grpc-prometheus series the rules use, and SIGTERM drained well inside the grace period."""
    argv, env, info = _process_spec(production(), name, tmp_path)
    if name == "wallet":
        env["WALLET_DATABASE_URL"] = _postgres_database()
    with _dependencies(name, tmp_path, env):
        _serve_probe_and_drain(name, argv, env, info, tmp_path)


def _serve_probe_and_drain(
    name: str, argv: list[str], env: dict[str, str], info: Doc, tmp_path: Path
) -> None:
    # Files, not pipes: nobody reads a pipe while the service runs, and a full one blocks its logging.
    out_path, err_path = tmp_path / f"{name}.out", tmp_path / f"{name}.err"
    with out_path.open("wb") as out_file, err_path.open("wb") as err_file:
        proc = subprocess.Popen(argv, env=env, stdout=out_file, stderr=err_file, cwd=tmp_path)
    try:
        # 120 s: a loaded CI machine (load 15) once took over 30 s to serve the table
        status = _wait_serving(info["grpc_port"], time.monotonic() + 120)
        assert status == health_pb2.HealthCheckResponse.SERVING
        if argv[0] == "unshare":  # the service really runs on a read-only root filesystem
            root = next(
                line
                for line in Path(f"/proc/{proc.pid}/mountinfo").read_text().splitlines()
                if line.split()[4] == "/"
            )
            assert " ro," in f" {root.split()[5]},"
            status_lines = dict(
                line.split(":\t", 1) for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines()
            )
            assert int(status_lines["CapEff"], 16) == 0 and int(status_lines["CapBnd"], 16) == 0
            assert status_lines["NoNewPrivs"].strip() == "1"
        token = subprocess.run(
            [str(Path(sys.executable).parent / "felt"), "token", "--service", "table"],
            env={**os.environ, "FELT_AUTH_PRIVATE_KEY_FILE": str(tmp_path / "felt-auth.pem")},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        rpc = READ_ONLY_RPC[name]
        anonymous = _allows_anonymous(name)
        assert (_call_code(info["grpc_port"], rpc, None) == grpc.StatusCode.UNAUTHENTICATED) != anonymous
        assert _call_code(info["grpc_port"], rpc, token) not in (
            grpc.StatusCode.UNAUTHENTICATED,
            grpc.StatusCode.UNAVAILABLE,
            grpc.StatusCode.INTERNAL,
        )
        url = f"http://127.0.0.1:{info['metrics_port']}{info['path']}"
        body = urllib.request.urlopen(url, timeout=5).read().decode()
        assert "grpc_server_handled_total{" in body and "grpc_server_handling_seconds_bucket{" in body
        assert any(prefix in body for prefix in OWN_METRICS.get(name, (f"poker_{name}_",)))
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=info["grace"]) == 0
        assert time.monotonic() - started < info["grace"]
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
    out, err = out_path.read_bytes(), err_path.read_bytes()
    logs = [
        json.loads(line)
        for line in out.decode().splitlines() + err.decode().splitlines()
        if line.startswith("{")
    ]
    assert any(entry.get("event") == "draining" for entry in logs), err.decode()[-2000:]


def test_dealer_shoe_size_used_for_sizing_holds() -> None:
    """FELT_DEALER_MAX_SHOES x DEALER_BYTES_PER_SHOE must stay an upper bound of what shoes really hold:
    measured through the dealer's own ShoeBook (fully dealt, closed and revealed one-deck shoes)."""
    sys.path.insert(0, str(layout.DEPLOY / "sizing"))
    try:
        import dealer_shoe_memory
    finally:
        sys.path.remove(str(layout.DEPLOY / "sizing"))
    assert dealer_shoe_memory.bytes_per_shoe(decks=1, shoes=500) <= manifests.DEALER_BYTES_PER_SHOE
