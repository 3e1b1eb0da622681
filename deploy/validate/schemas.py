"""Strict OpenAPI schema validation of rendered resources, offline, with the schemas shipped in the
`kubernetes-validate` wheel (pinned in requirements.lock); custom resources (CRDs), which it has no
schema for, by Felt's own shape checks (CUSTOM_KINDS). kustomize does not validate fields: a misspelled
`readinesProbe` renders fine and is silently dropped by the API server (or refused by a strict one);
this catches it, along with wrong types and unknown kinds."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]  # ships no type information

from deploy.validate import certificates, gateway

# The oldest Kubernetes the manifests support (native gRPC probes are GA since 1.27; 1.28 is the oldest
# release still commonly run) and the newest schema the pinned package ships.
KUBERNETES_VERSIONS = ("1.28.0", "1.37.0")


# Custom resources kubernetes-validate has no schema for: their shape is checked by Felt's own code
# (deploy/validate/shapes.py), once, whatever the Kubernetes version (a CRD's version is its own).
CUSTOM_KINDS: dict[tuple[str, str], Callable[[dict[str, Any]], list[str]]] = {
    (gateway.API_VERSION, "HTTPRoute"): gateway.route_shape,
    (gateway.API_VERSION, "BackendTLSPolicy"): gateway.backend_tls_shape,
    (certificates.API_VERSION, "Certificate"): certificates.certificate_shape,
    (certificates.API_VERSION, "Issuer"): certificates.issuer_shape,
}


def check_schemas(docs: list[dict[str, Any]], versions: tuple[str, ...] = KUBERNETES_VERSIONS) -> list[str]:
    problems = []
    for doc in docs:
        custom = CUSTOM_KINDS.get((doc.get("apiVersion", ""), doc.get("kind", "")))
        if custom is not None:
            problems += custom(doc)
    docs = [d for d in docs if (d.get("apiVersion", ""), d.get("kind", "")) not in CUSTOM_KINDS]
    for version in versions:
        for doc in docs:
            where = f"{doc.get('kind')}/{doc.get('metadata', {}).get('name')} (Kubernetes {version})"
            try:
                kubernetes_validate.validate(doc, version, strict=True)
            except kubernetes_validate.ValidationError as exc:
                path = ".".join(str(p) for p in exc.path)
                problems.append(f"{where}: {path}: {exc.message}")
            except kubernetes_validate.SchemaNotFoundError:
                problems.append(f"{where}: no schema for {doc.get('apiVersion')} {doc.get('kind')}")
    return problems
