"""Kubernetes manifests, rendered by a real kustomize and checked offline (deploy/validate/manifests.py).

Each rule of the checker has a test that breaks a rendered overlay in exactly that way and expects the
checker to say so; the untouched overlays must pass. The last tests start the containers' exact command
line and environment as local processes and probe them the way the kubelet and Prometheus would.
"""

from __future__ import annotations

import copy
import datetime
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from felt import registry
from grpc_health.v1 import health_pb2, health_pb2_grpc
from servicekit import auth, client, devca, testing, tls
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


def _key(node: Any, key: str) -> Any:
    """A dotted path's step: digits index a list, `name=X` picks the list item named X (env, ports)."""
    if key.isdigit():
        return int(key)
    if key.startswith("name="):
        return next(i for i, item in enumerate(node) if item.get("name") == key[len("name=") :])
    return key


def _set(path: str, value: Any) -> Callable[[list[Doc]], None]:
    """A mutation: set `value` at `Kind/name:dotted.path` (see `_key`; None deletes)."""
    target, dotted = path.split(":")
    kind, name = target.split("/")

    def mutate(docs: list[Doc]) -> None:
        node: Any = get(docs, kind, name)
        keys = dotted.split(".")
        for key in keys[:-1]:
            node = node[_key(node, key)]
        last = _key(node, keys[-1])
        if value is None:
            del node[last]
        else:
            node[last] = value

    return mutate


def _pdb_min_available(count: int) -> Callable[[list[Doc]], None]:
    def mutate(docs: list[Doc]) -> None:
        spec = get(docs, "PodDisruptionBudget", "wallet")["spec"]
        del spec["maxUnavailable"]
        spec["minAvailable"] = count

    return mutate


POD = "spec.template.spec"
C0 = POD + ".containers.0"


def _env(target: str, name: str, value: str) -> Callable[[list[Doc]], None]:
    """A mutation: set the container variable `name` of `Kind/name` to `value`."""
    kind, workload_name = target.split("/")

    def mutate(docs: list[Doc]) -> None:
        items = get(docs, kind, workload_name)["spec"]["template"]["spec"]["containers"][0]["env"]
        next(item for item in items if item["name"] == name).update({"value": value})

    return mutate


def _without_migration_job(docs: list[Doc]) -> None:
    docs.remove(get(docs, "Job", "felt-migrate"))


def _job_migrates_another_ledger(docs: list[Doc]) -> None:
    items = get(docs, "Job", "felt-migrate")["spec"]["template"]["spec"]["containers"][0]["env"]
    ref = next(item for item in items if item["name"] == "WALLET_DATABASE_URL")["valueFrom"]["secretKeyRef"]
    ref["name"] = "felt-table-database"


MUTATIONS: dict[str, tuple[Callable[[list[Doc]], None], str]] = {
    # migrations run once, by the Job; the services that wait for it give up inside their startup window
    "no migration job": (_without_migration_job, "no Job runs `felt migrate wallet`"),
    "job migrates another database": (_job_migrates_another_ledger, "no Job runs `felt migrate wallet`"),
    "job leaves out the table store": (
        _set(f"Job/felt-migrate:{C0}.args", ["wallet"]),
        "no Job runs `felt migrate table`",
    ),
    "migration wait outlasts the startup probe": (
        _env("Deployment/wallet", "FELT_MIGRATE_WAIT_SECONDS", "600"),
        "must be under the startup probe's window",
    ),
    "migration job retried forever": (
        _set("Job/felt-migrate:spec.backoffLimit", None),
        "set backoffLimit and activeDeadlineSeconds",
    ),
    "migration job kept forever": (
        _set("Job/felt-migrate:spec.ttlSecondsAfterFinished", None),
        "set ttlSecondsAfterFinished",
    ),
    "migration job as root": (
        _set(f"Job/felt-migrate:{POD}.securityContext.runAsNonRoot", None),
        "runAsNonRoot must be true",
    ),
    # probes: plain HTTP on the metrics port (the gRPC ports serve TLS only)
    "no readiness probe": (_set(f"Deployment/wallet:{C0}.readinessProbe", None), "readinessProbe is missing"),
    "no liveness probe": (_set(f"Deployment/dealer:{C0}.livenessProbe", None), "livenessProbe is missing"),
    "probe on the TLS port": (
        _set(f"Deployment/evaluator:{C0}.livenessProbe.httpGet.port", 50051),
        "livenessProbe must be an httpGet of /healthz on the metrics port 9101",
    ),
    "native grpc probe (no TLS)": (
        _set(f"Deployment/wallet:{C0}.readinessProbe", {"grpc": {"port": 50053}}),
        "readinessProbe must be an httpGet of /readyz",
    ),
    "readiness on the liveness path": (
        _set(f"StatefulSet/table:{C0}.readinessProbe.httpGet.path", "/healthz"),
        "readinessProbe must be an httpGet of /readyz",
    ),
    "probe over https": (
        _set(f"Deployment/dealer:{C0}.startupProbe.httpGet.scheme", "HTTPS"),
        "startupProbe must be plain HTTP",
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
        _set(f"Deployment/dealer:{C0}.volumeMounts.name=data.mountPath", "/data"),
        "FELT_DATA_DIR /var/lib/felt is not a writable volume mount",
    ),
    "no writable tmp": (
        _set(f"Deployment/dealer:{C0}.volumeMounts.name=tmp", {"name": "auth", "mountPath": "/x"}),
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
        _set(f"Deployment/dealer:{C0}.env.name=FELT_AUTH_PUBLIC_KEY_FILE.value", "/var/lib/felt/public.pem"),
        "is not on a Secret volume",
    ),
    "auth key set outside the secret volume": (
        _set(
            f"Deployment/dealer:{C0}.env.name=FELT_AUTH_PUBLIC_KEY_FILE",
            {"name": "FELT_AUTH_KEYSET_DIR", "value": "/var/lib/felt/keys"},
        ),
        "the auth key set /var/lib/felt/keys is not on a Secret volume",
    ),
    "database URL in plain text": (
        _set(
            f"Deployment/wallet:{C0}.env.name=WALLET_DATABASE_URL",
            {"name": "WALLET_DATABASE_URL", "value": "postgresql://u:p@db/x"},
        ),
        "WALLET_DATABASE_URL must come from a Secret",
    ),
    "unknown secret": (
        _set(f"Deployment/wallet:{C0}.env.name=WALLET_DATABASE_URL.valueFrom.secretKeyRef.name", "wallet-db"),
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
        _set(f"Deployment/dealer:{C0}.env.name=FELT_DEALER_MAX_SHOES.value", "100000"),
        "the pod would be OOM-killed with its shoes",
    ),
    "wallet pools beyond PostgreSQL": (
        _set("HorizontalPodAutoscaler/wallet:spec.maxReplicas", 20),
        "exceeds the PostgreSQL budget",
    ),
    "misspelled setting": (
        _set(f"Deployment/dealer:{C0}.env.name=FELT_DEALER_MAX_SHOES.name", "FELT_DEALER_MAX_SHOE"),
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
        _set(f"StatefulSet/table:{C0}.volumeMounts.name=data.name", "tmp"),
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
        _set(f"StatefulSet/table:{C0}.env.name=FELT_TABLE_SHARDED.value", "0"),
        "several table pods need FELT_TABLE_SHARDED=1",
    ),
    "table shards on their own SQLite volumes": (
        _set(f"StatefulSet/table:{C0}.env.name=TABLE_DATABASE_URL.name", "FELT_TABLE_UNUSED"),
        "several table pods need TABLE_DATABASE_URL (PostgreSQL) from a Secret",
    ),
    "table shards advertising the shared Service": (
        _set(f"StatefulSet/table:{C0}.env.name=FELT_TABLE_ADVERTISE_ADDRESS.value", "table:50054"),
        "FELT_TABLE_ADVERTISE_ADDRESS must be the pod's own name under table-shards",
    ),
    # issue 25: three tournament replicas, each tournament leased to one, on one PostgreSQL store
    "tournament replicas each directing every tournament": (
        _set(f"StatefulSet/tournament:{C0}.env.name=FELT_TOURNAMENT_REPLICATED.value", "0"),
        "several tournament pods need FELT_TOURNAMENT_REPLICATED=1",
    ),
    "tournament replicas on their own SQLite volumes": (
        _set(f"StatefulSet/tournament:{C0}.env.name=TOURNAMENT_DATABASE_URL.name", "FELT_TOURNAMENT_UNUSED"),
        "several tournament pods need TOURNAMENT_DATABASE_URL (PostgreSQL) from a Secret",
    ),
    "tournament replicas advertising the shared Service": (
        _set(
            f"StatefulSet/tournament:{C0}.env.name=FELT_TOURNAMENT_ADVERTISE_ADDRESS.value",
            "tournament:50055",
        ),
        "FELT_TOURNAMENT_ADVERTISE_ADDRESS must be the pod's own name under tournament-pods",
    ),
    "tournament state on scratch space": (
        _set(f"StatefulSet/tournament:{C0}.volumeMounts.name=data.name", "tmp"),
        "FELT_DATA_DIR must be on a volumeClaimTemplate",
    ),
    "tournament pointed at tables that are not there": (
        _set(f"StatefulSet/tournament:{C0}.env.name=FELT_TABLE_ADDRESS.value", "tables:51054"),
        "FELT_TABLE_ADDRESS=tables:51054 must be the table Service on its internal port 51054",
    ),
    "tournament on the table's port": (
        _set(f"StatefulSet/tournament:{C0}.args.4", "50054"),
        "--port must be 50055",
    ),
    "tournament without its signing key": (
        _set(
            f"StatefulSet/tournament:{C0}.env.name=FELT_AUTH_PRIVATE_KEY_FILE.name",
            "FELT_AUTH_PUBLIC_KEY_FILE",
        ),
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
        _set(f"StatefulSet/table:{C0}.env.name=FELT_AUTH_PRIVATE_KEY_FILE.name", "FELT_AUTH_PUBLIC_KEY_FILE"),
        "table mints its own service token: it needs FELT_AUTH_PRIVATE_KEY_FILE",
    ),
    "signing key outside the secret volume": (
        _set(
            f"StatefulSet/table:{C0}.env.name=FELT_AUTH_PRIVATE_KEY_FILE.value", "/var/lib/felt/private.pem"
        ),
        "is not on a Secret volume",
    ),
    "private key given to a verifier": (
        _set(f"Deployment/dealer:{C0}.env.name=FELT_AUTH_PUBLIC_KEY_FILE.name", "FELT_AUTH_PRIVATE_KEY_FILE"),
        "may hold the private signing key",
    ),
    "table pointed at a wallet that is not there": (
        _set(f"StatefulSet/table:{C0}.env.name=FELT_WALLET_ADDRESS.value", "wallets:51053"),
        "FELT_WALLET_ADDRESS=wallets:51053 must be the wallet Service on its internal port 51053",
    ),
    "table calling the dealer's public port": (
        _set(f"StatefulSet/table:{C0}.env.name=FELT_DEALER_ADDRESS.value", "dealer:50052"),
        "FELT_DEALER_ADDRESS=dealer:50052 must be the dealer Service on its internal port 51052",
    ),
    # the browser door and the internal port: opened by settings, named on the container and the Service
    "door not opened": (
        _set(f"Deployment/evaluator:{C0}.env.name=FELT_EVALUATOR_WEB_PORT", None),
        "FELT_EVALUATOR_WEB_PORT must be 8081 (its containerPort web)",
    ),
    "door on another port than the container's": (
        _set(f"StatefulSet/table:{C0}.env.name=FELT_TABLE_WEB_PORT.value", "8090"),
        "FELT_TABLE_WEB_PORT must be 8084",
    ),
    "web containerPort missing": (
        _set(f"Deployment/wallet:{C0}.ports.name=web", None),
        "containerPort named web must be 8083",
    ),
    "internal port on the public port": (
        _set(f"Deployment/dealer:{C0}.env.name=FELT_DEALER_INTERNAL_PORT.value", "50052"),
        "FELT_DEALER_INTERNAL_PORT must be 51052",
    ),
    "internal containerPort renamed": (
        _set(f"StatefulSet/tournament:{C0}.ports.name=internal.name", "mtls"),
        "containerPort named internal must be 51055",
    ),
    "service without the web port": (
        _set("Service/table:spec.ports.name=web", None),
        "Service/table: needs a port named web on 8084",
    ),
    "service web port aimed at gRPC": (
        _set("Service/dealer:spec.ports.name=web.targetPort", "grpc"),
        "Service/dealer: the web port must reach the container's port 8082",
    ),
    "service internal port undeclared": (
        _set("Service/wallet:spec.ports.name=internal.appProtocol", None),
        "the internal port should declare appProtocol: grpc",
    ),
    "table pointed at the dealer's metrics port": (
        _set(f"StatefulSet/table:{C0}.env.name=FELT_DEALER_ADDRESS.value", "dealer:9102"),
        "FELT_DEALER_ADDRESS=dealer:9102 must be the dealer Service on its internal port 51052",
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
        _set(f"Deployment/wallet:{C0}.readinesProbe", {"httpGet": {"path": "/readyz", "port": 9103}}),
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


def test_a_key_set_on_the_secret_volume_stands_for_the_key_files() -> None:
    """FELT_AUTH_KEYSET_DIR (Felt's rotating keys, servicekit.keyset) mounted from the Secret: the signing
    services find their private keys in it too."""
    docs = production()
    for kind, name in (("Deployment", "dealer"), ("StatefulSet", "table"), ("StatefulSet", "tournament")):
        env = get(docs, kind, name)["spec"]["template"]["spec"]["containers"][0]["env"]
        i = next(
            i
            for i, e in enumerate(env)
            if e["name"].startswith("FELT_AUTH_") and e["name"].endswith("_KEY_FILE")
        )
        env[i] = {"name": "FELT_AUTH_KEYSET_DIR", "value": env[i]["value"].rsplit("/", 1)[0]}
    assert problems_of(docs) == []


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


def felt_name(c: Doc) -> str:
    name = manifests.felt_service_of(c)
    assert name is not None, c["name"]
    return name


def _process_spec(docs: list[Doc], name: str, tmp: Path) -> tuple[list[str], dict[str, str], Doc]:
    """argv and environment of the workload's container with ports, volumes and secrets made local.

    The probe/annotation/arg port agreement is checked above on the real numbers; here the numbers are
    swapped for free ones (other tests may hold the defaults) and the mounts for temporary directories."""
    c = container(docs, name)
    spec = pod(docs, name)
    annotations = workload(docs, name)["spec"]["template"]["metadata"]["annotations"]
    grpc_port, metrics_port = free_port(), free_port()
    swap = {
        str(manifests.flag(c["args"], "--port")): str(grpc_port),
        annotations["prometheus.io/port"]: str(metrics_port),
    }
    argv = [swap.get(a, a) for a in c["command"] + c["args"]]
    mounts = {m["mountPath"]: tmp / m["name"] for m in c["volumeMounts"]}
    for path in mounts.values():
        path.mkdir(parents=True, exist_ok=True)
    env = manifests.environment(c, docs)
    # Each setting under a mount path moves with its mount (once: a local path may start like another mount).
    for key, value in env.items():
        mount = max((m for m in mounts if value.startswith(m)), key=len, default=None)
        if mount is not None:
            env[key] = str(mounts[mount]) + value[len(mount) :]
    env["TMPDIR"] = str(mounts["/tmp"])
    # The door and the internal port are opened by settings: free ports here too.
    web_port = free_port()
    prefix = f"FELT_{felt_name(c).upper()}_"
    env[prefix + "WEB_PORT"], env[prefix + "INTERNAL_PORT"] = str(web_port), str(free_port())
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
    # The Secret cert-manager makes from the service's Certificate: tls.crt, tls.key, ca.crt.
    server_name = ""  # the name clients check its certificate for
    if "FELT_TLS_CERT_FILE" in env:
        tls_volume = next(v for v in spec["volumes"] if v["name"] == "tls")
        certificate = next(
            d
            for d in docs
            if d["kind"] == "Certificate" and d["spec"]["secretName"] == tls_volume["secret"]["secretName"]
        )
        _issue_like_cert_manager(
            certificate["spec"]["dnsNames"],
            Path(env["FELT_TLS_CERT_FILE"]),
            Path(env["FELT_TLS_KEY_FILE"]),
            Path(env["FELT_TLS_CA_FILE"]),
        )
        server_name = certificate["spec"]["dnsNames"][0]
    base = {k: v for k, v in os.environ.items() if not k.startswith(("FELT_", "WALLET_"))}
    info = {
        "grpc_port": grpc_port,
        "metrics_port": metrics_port,
        "web_port": web_port,
        "grace": spec["terminationGracePeriodSeconds"],
        "path": annotations["prometheus.io/path"],
        # The kubelet's probes: plain HTTP GETs on the metrics port (numbers swapped as the port's).
        "probes": {
            probe: c[probe]["httpGet"]["path"]
            for probe in ("startupProbe", "readinessProbe", "livenessProbe")
        },
        "ca": env.get("FELT_TLS_CA_FILE", ""),  # the Secret's ca.crt: what a client trusts
        "server_name": server_name,
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


def _issue_like_cert_manager(names: list[str], cert: Path, key: Path, ca: Path) -> None:
    """What a CA Issuer writes into a Certificate's Secret: the leaf (ECDSA P-256, usages server auth and
    client auth, the DNS names), its key, and the CA's certificate."""
    now = datetime.datetime.now(datetime.UTC)

    def build(subject: str, issuer: x509.Name, public: Any, signer: Any, ca_cert: bool) -> x509.Certificate:
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(issuer)
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca_cert, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=not ca_cert,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=ca_cert,
                    crl_sign=ca_cert,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
        )
        if not ca_cert:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.DNSName(n) for n in names]), critical=False
            ).add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                critical=False,
            )
        return builder.sign(signer, hashes.SHA256())

    # The cluster's CA Issuer is this test session's CA: the dependencies run here (servicekit.testing)
    # chain to it too, so the container and they verify each other (mutual TLS on the internal ports).
    ca_dir = testing.session_ca_dir()
    ca_cert = x509.load_pem_x509_certificate((ca_dir / devca.CA_CERT).read_bytes())
    ca_key = serialization.load_pem_private_key((ca_dir / devca.CA_KEY).read_bytes(), password=None)
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = build(names[0], ca_cert.subject, leaf_key.public_key(), ca_key, False)
    ca.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    cert.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(
        leaf_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )


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


def _channel(port: int, info: Doc) -> grpc.Channel:
    """A TLS channel to the container's port, trusting its Certificate's CA and checking the name the
    other pods dial (the Secret's leaf names the Service, not 127.0.0.1); else the session's CA."""
    if not info["ca"]:
        return testing.channel(f"127.0.0.1:{port}")
    override = [("grpc.ssl_target_name_override", info["server_name"])]
    return client.channel(f"127.0.0.1:{port}", tls_files=tls.TlsFiles(Path(info["ca"])), options=override)


def _call_code(port: int, method: str, token: str | None, info: Doc) -> grpc.StatusCode:
    metadata = [("authorization", f"Bearer {token}")] if token else []
    with _channel(port, info) as channel:
        try:
            channel.unary_unary(method)(b"", timeout=10, metadata=metadata)
        except grpc.RpcError as exc:
            return exc.code()  # type: ignore[no-any-return]
    return grpc.StatusCode.OK


def _door_status(port: int, method: str, token: str | None, info: Doc) -> int:
    """The HTTP status of a Connect unary call (JSON, empty request) to the door on `port`, over TLS
    trusting the container's CA (its name, the Service's, is checked on the gRPC channel)."""
    headers = {"Content-Type": "application/json", "Connect-Protocol-Version": "1"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    trust = ssl.create_default_context(cafile=str(info["ca"] or testing.trust_files().ca))
    trust.check_hostname = False  # the leaf names the Service the Gateway dials, not 127.0.0.1
    request = urllib.request.Request(f"https://127.0.0.1:{port}{method}", b"{}", headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10, context=trust) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def _wait_serving(port: int, deadline: float, info: Doc) -> int:
    with _channel(port, info) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while True:
            try:
                return int(stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1).status)
            except grpc.RpcError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)


@contextmanager
def _open_stream(name: str, info: Doc, token: str) -> Iterator[None]:
    """A gRPC health Watch held open on the public port (the drain waits for open calls), cancelled at
    the end of the block."""
    with _channel(info["grpc_port"], info) as channel:
        watch = health_pb2_grpc.HealthStub(channel).Watch(
            health_pb2.HealthCheckRequest(service=""), metadata=[("authorization", f"Bearer {token}")]
        )
        first = next(watch)  # it is open: the service answered SERVING on it
        assert first.status == health_pb2.HealthCheckResponse.SERVING, name
        try:
            yield
        finally:
            watch.cancel()


def _http_status(port: int, path: str) -> int:
    """A probe's GET, as the kubelet makes it: plain HTTP, any status below 400 passes."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError:
        return 0  # no answer (not listening yet, or gone)


def _wait_http(port: int, path: str, status: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _http_status(port, path) == status:
            return True
        time.sleep(0.05)
    return False


def _wait_probe(port: int, path: str, proc: subprocess.Popen[bytes], deadline: float) -> None:
    while _http_status(port, path) != 200:
        assert proc.poll() is None, f"exited ({proc.returncode}) before {path} said 200"
        assert time.monotonic() < deadline, f"{path} never said 200"
        time.sleep(0.1)


def _postgres_database() -> str:
    """A database of this test's own on the shared server, so it never meets the wallet suite's tables."""
    url = os.environ.get("FELT_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("FELT_TEST_POSTGRES_URL is not set: the production containers on PostgreSQL were NOT run")
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
    docs = production()
    argv, env, info = _process_spec(docs, name, tmp_path)
    # Players from Felt's own key, deliberately: the overlay's identity provider is the operator's to fill
    # in (test_production_container_refuses_to_start_without_the_identity_provider); no player calls here.
    env["FELT_AUTH_FELT_PLAYERS"] = "on"
    for item in container(docs, name).get("env", []):  # PostgreSQL URLs from Secrets: a local server
        if item["name"].endswith("_DATABASE_URL") and "secretKeyRef" in item.get("valueFrom", {}):
            env[item["name"]] = _postgres_database()
    if env.get("FELT_MIGRATE") == "external":
        _run_migration_job(docs, name, env)  # as the Job does before the pods can start
    with _dependencies(name, tmp_path, env):
        _serve_probe_and_drain(name, argv, env, info, tmp_path)


def test_production_container_refuses_to_start_without_the_identity_provider(tmp_path: Path) -> None:
    """The production container as rendered, FELT_OIDC_PROVIDERS still empty: it exits at once naming the
    setting, instead of serving players signed with Felt's own key."""
    argv, env, _info = _process_spec(production(), "evaluator", tmp_path)
    assert env.get("FELT_ENV") == "production" and not env.get("FELT_OIDC_PROVIDERS")
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode != 0, done.stdout[-2000:]
    assert "FELT_OIDC_PROVIDERS" in done.stderr, done.stderr[-2000:]


def _run_migration_job(docs: list[Doc], name: str, env: dict[str, str]) -> None:
    """The Job felt-migrate's command, on the databases the service's container names."""
    job = get(docs, "Job", "felt-migrate")["spec"]["template"]["spec"]["containers"][0]
    argv = job["command"] + job["args"]
    assert name in argv[2:], f"the migration Job does not migrate {name}"
    command = [str(Path(sys.executable).parent / argv[0]), *argv[1:]]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert any(line.startswith(f"{name}: ") for line in done.stdout.splitlines()), done.stdout


def _serve_probe_and_drain(
    name: str, argv: list[str], env: dict[str, str], info: Doc, tmp_path: Path
) -> None:
    # Files, not pipes: nobody reads a pipe while the service runs, and a full one blocks its logging.
    out_path, err_path = tmp_path / f"{name}.out", tmp_path / f"{name}.err"
    with out_path.open("wb") as out_file, err_path.open("wb") as err_file:
        proc = subprocess.Popen(argv, env=env, stdout=out_file, stderr=err_file, cwd=tmp_path)
    try:
        # 120 s: a loaded CI machine (load 15) once took over 30 s to serve the table
        _wait_probe(info["metrics_port"], info["probes"]["startupProbe"], proc, time.monotonic() + 120)
        status = _wait_serving(info["grpc_port"], time.monotonic() + 10, info)
        assert status == health_pb2.HealthCheckResponse.SERVING
        for probe in ("readinessProbe", "livenessProbe"):
            assert _http_status(info["metrics_port"], info["probes"][probe]) == 200, probe
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

        def felt_token(*who: str) -> str:
            return subprocess.run(
                [str(Path(sys.executable).parent / "felt"), "token", *who],
                env={**os.environ, "FELT_AUTH_PRIVATE_KEY_FILE": str(tmp_path / "felt-auth.pem")},
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()

        # An operator's token on the public port (a service's counts only on the internal port, with
        # its client certificate: refused here, and through the door, which has no certificates).
        token = felt_token("--operator", "ops")
        service_token = felt_token("--service", "table")
        rpc = READ_ONLY_RPC[name]
        anonymous = _allows_anonymous(name)
        assert (
            _call_code(info["grpc_port"], rpc, None, info) == grpc.StatusCode.UNAUTHENTICATED
        ) != anonymous
        assert _call_code(info["grpc_port"], rpc, token, info) not in (
            grpc.StatusCode.UNAUTHENTICATED,
            grpc.StatusCode.UNAVAILABLE,
            grpc.StatusCode.INTERNAL,
        )
        # The browser door the manifest opens: the same refusal without a token, through Connect.
        assert (_door_status(info["web_port"], rpc, None, info) == 401) != anonymous
        assert _door_status(info["web_port"], rpc, token, info) not in (401, 500, 503)
        assert _call_code(info["grpc_port"], rpc, service_token, info) == grpc.StatusCode.UNAUTHENTICATED
        assert _door_status(info["web_port"], rpc, service_token, info) == 401
        url = f"http://127.0.0.1:{info['metrics_port']}{info['path']}"
        body = urllib.request.urlopen(url, timeout=5).read().decode()
        assert "grpc_server_handled_total{" in body and "grpc_server_handling_seconds_bucket{" in body
        assert any(prefix in body for prefix in OWN_METRICS.get(name, (f"poker_{name}_",)))
        started = time.monotonic()
        # A stream held open keeps the drain going: readiness says 503 then, liveness still 200.
        with _open_stream(name, info, token):
            proc.send_signal(signal.SIGTERM)
            draining = _wait_http(info["metrics_port"], info["probes"]["readinessProbe"], 503, 10)
            alive = _http_status(info["metrics_port"], info["probes"]["livenessProbe"])
        assert draining, "readiness did not turn 503 while draining"
        assert alive == 200
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
