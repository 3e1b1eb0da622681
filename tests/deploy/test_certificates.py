"""TLS from cert-manager (deploy/k8s/components/tls; the dev overlay's own CA in tls-issuer.yaml), checked
offline by deploy/validate/certificates.py: each service's Certificate names it first and every address
it is dialled at, serves both ends of mutual TLS, and its Secret is mounted by that service's pods alone,
where FELT_TLS_CERT_FILE, _KEY_FILE and _CA_FILE point. Each way of getting it wrong is tried on a rendered
overlay and must be reported by name.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from deploy.validate import certificates, layout, manifests, netpol, schemas, suite

Doc = dict[str, Any]
SERVICES = ("evaluator", "dealer", "wallet", "table", "tournament")


def rendered(overlay: str) -> list[Doc]:
    return copy.deepcopy(suite.rendered(overlay))


def problems_of(docs: list[Doc], expected: bool = True) -> list[str]:
    """The custom resources' shapes (the schema check's part for them) and the TLS checks."""
    custom = [d for d in docs if d["apiVersion"] == certificates.API_VERSION]
    return schemas.check_schemas(custom) + certificates.check_tls(
        docs, expected, netpol.render_namespace(docs)
    )


def get(docs: list[Doc], kind: str, name: str) -> Doc:
    doc = manifests.find(docs, kind, name)
    assert doc is not None, f"{kind}/{name}"
    return doc


def container(docs: list[Doc], name: str) -> Doc:
    kind = "StatefulSet" if name in manifests.STATEFUL_SERVICES else "Deployment"
    return dict(get(docs, kind, name)["spec"]["template"]["spec"]["containers"][0])


@pytest.mark.parametrize("overlay", [o.name for o in layout.OVERLAYS])
def test_overlays_pass(overlay: str) -> None:
    o = next(o for o in layout.OVERLAYS if o.name == overlay)
    assert problems_of(rendered(overlay), o.tls) == []


@pytest.mark.parametrize("overlay", ["dev", "production"])
def test_each_service_mounts_its_own_certificate(overlay: str) -> None:
    docs = rendered(overlay)
    namespace = netpol.render_namespace(docs)
    for service in SERVICES:
        certificate = get(docs, "Certificate", service)["spec"]
        assert certificate["dnsNames"][:3] == [
            service,
            f"{service}.{namespace}.svc",
            f"{service}.{namespace}.svc.cluster.local",
        ]
        assert {"server auth", "client auth"} <= set(certificate["usages"])
        assert certificate["issuerRef"]["name"] == "felt-ca"
        c = container(docs, service)
        env = manifests.environment(c, docs)
        assert (env["FELT_TLS_CERT_FILE"], env["FELT_TLS_KEY_FILE"], env["FELT_TLS_CA_FILE"]) == (
            "/etc/felt/tls/tls.crt",
            "/etc/felt/tls/tls.key",
            "/etc/felt/tls/ca.crt",
        )
        pod = get(docs, "StatefulSet" if service in manifests.STATEFUL_SERVICES else "Deployment", service)
        volumes = {v["name"]: v for v in pod["spec"]["template"]["spec"]["volumes"]}
        assert volumes["tls"]["secret"]["secretName"] == certificate["secretName"] == f"{service}-tls"
    # The table's names cover each shard's own address under the governing Service.
    assert f"*.table-shards.{namespace}.svc" in get(docs, "Certificate", "table")["spec"]["dnsNames"]


def test_dev_signs_with_its_own_ca() -> None:
    docs = rendered("dev")
    assert get(docs, "Certificate", "felt-dev-ca")["spec"]["isCA"] is True
    assert get(docs, "Issuer", "felt-ca")["spec"] == {"ca": {"secretName": "felt-dev-ca"}}
    assert get(docs, "Issuer", "felt-selfsigned")["spec"] == {"selfSigned": {}}
    assert manifests.find(rendered("production"), "Issuer", "felt-ca") is None  # the operator's


@pytest.mark.parametrize(
    ("pattern", "host", "matches"),
    [
        ("table", "table", True),
        ("table", "table.felt.svc", False),
        ("*.table-shards.felt.svc", "table-1.table-shards.felt.svc", True),
        ("*.table-shards.felt.svc", "a.b.table-shards.felt.svc", False),  # one label only
        ("*.table-shards.felt.svc", "table-shards.felt.svc", False),
        ("*.table-shards", "table-1.table-shards", False),  # gRPC wants two labels under a wildcard
    ],
)
def test_dns_names_match_as_grpc_checks_them(pattern: str, host: str, matches: bool) -> None:
    assert certificates.dns_matches(pattern, host) is matches


def _edit(kind: str, name: str, change: Callable[[Doc], None]) -> Callable[[list[Doc]], None]:
    def mutate(docs: list[Doc]) -> None:
        change(get(docs, kind, name))

    return mutate


def _pod(doc: Doc) -> Doc:
    return dict(doc["spec"]["template"]["spec"])


def _env(doc: Doc, name: str) -> Doc:
    return next(e for e in _pod(doc)["containers"][0]["env"] if e["name"] == name)


def _volume(doc: Doc, name: str) -> Doc:
    return next(v for v in _pod(doc)["volumes"] if v["name"] == name)


def _mount(doc: Doc, name: str) -> Doc:
    return next(m for m in _pod(doc)["containers"][0]["volumeMounts"] if m["name"] == name)


def _drop_tls_env(doc: Doc) -> None:
    c = _pod(doc)["containers"][0]
    c["env"] = [e for e in c["env"] if not e["name"].startswith("FELT_TLS_")]


MUTATIONS: dict[str, tuple[str, Callable[[list[Doc]], None], str]] = {
    "production in plaintext": (
        "production",
        _edit("Deployment", "wallet", _drop_tls_env),
        "Deployment/wallet container wallet: no TLS files (FELT_TLS_CERT_FILE, _KEY_FILE, _CA_FILE): it would "
        "serve plaintext",
    ),
    "a file left out": (
        "dev",
        _edit(
            "Deployment",
            "dealer",
            lambda d: _pod(d)["containers"][0]["env"].remove(_env(d, "FELT_TLS_CA_FILE")),
        ),
        "TLS needs all of FELT_TLS_CERT_FILE, _KEY_FILE, _CA_FILE (missing ['FELT_TLS_CA_FILE'])",
    ),
    "the key read as the CA": (
        "production",
        _edit(
            "StatefulSet",
            "table",
            lambda d: _env(d, "FELT_TLS_CA_FILE").update({"value": "/etc/felt/tls/tls.key"}),
        ),
        "FELT_TLS_CA_FILE=/etc/felt/tls/tls.key is not cert-manager's ca.crt",
    ),
    "certificate files on scratch space": (
        "production",
        _edit(
            "Deployment",
            "evaluator",
            lambda d: _env(d, "FELT_TLS_CERT_FILE").update({"value": "/tmp/tls.crt"}),
        ),
        "FELT_TLS_CERT_FILE=/tmp/tls.crt is not on a Secret volume",
    ),
    "a subPath mount that never renews": (
        "production",
        _edit("Deployment", "dealer", lambda d: _mount(d, "tls").update({"subPath": "tls.crt"})),
        "a subPath mount never sees a renewed certificate",
    ),
    "the dealer given the table's certificate": (
        "production",
        _edit(
            "Deployment", "dealer", lambda d: _volume(d, "tls")["secret"].update({"secretName": "table-tls"})
        ),
        "Certificate/table: its Secret is mounted by ['dealer', 'table']: each could pass for the others",
    ),
    "a certificate naming another service first": (
        "production",
        _edit("Certificate", "wallet", lambda d: d["spec"]["dnsNames"].insert(0, "table")),
        "Certificate/wallet: mounted by wallet, so its first DNS name must be 'wallet'",
    ),
    "a certificate nobody mounts": (
        "dev",
        _edit(
            "Deployment",
            "evaluator",
            lambda d: _volume(d, "tls")["secret"].update({"secretName": "evaluator-tls-old"}),
        ),
        "Certificate/evaluator: its Secret evaluator-tls is mounted by no Felt service",
    ),
    "server auth only": (
        "production",
        _edit(
            "Certificate",
            "tournament",
            lambda d: d["spec"].update({"usages": ["server auth", "digital signature"]}),
        ),
        "Certificate/tournament: usages must include ['client auth']",
    ),
    "shards' names forgotten": (
        "production",
        _edit("Certificate", "table", lambda d: d["spec"].update({"dnsNames": d["spec"]["dnsNames"][:3]})),
        "Certificate/table: callers dial 'table-2.table-shards.felt.svc', which none of its DNS names covers",
    ),
    "the Service's namespaced name forgotten": (
        "dev",
        _edit("Certificate", "dealer", lambda d: d["spec"].update({"dnsNames": ["dealer"]})),
        "Certificate/dealer: callers dial 'dealer.felt-dev.svc'",
    ),
    "an Issuer nobody provides": (
        "production",
        _edit("Certificate", "evaluator", lambda d: d["spec"]["issuerRef"].update({"name": "letsencrypt"})),
        "Certificate/evaluator: Issuer 'letsencrypt' is neither rendered nor 'felt-ca'",
    ),
    "a CA no Issuer uses": (
        "dev",
        lambda docs: docs.remove(get(docs, "Issuer", "felt-ca")),
        "Certificate/felt-dev-ca: a CA certificate no Issuer signs with",
    ),
    # what cert-manager's CRDs and webhook refuse
    "misspelled field": (
        "production",
        _edit("Certificate", "dealer", lambda d: d["spec"].update({"dnsName": ["dealer"]})),
        "Certificate/dealer: spec: 'dnsName' was unexpected",
    ),
    "unknown usage": (
        "production",
        _edit("Certificate", "dealer", lambda d: d["spec"]["usages"].append("client authentication")),
        "'client authentication' is not one of",
    ),
    "renewal after expiry": (
        "production",
        _edit("Certificate", "wallet", lambda d: d["spec"].update({"renewBefore": "4000h"})),
        "Certificate/wallet: renewBefore must be shorter than duration",
    ),
    "no secret named": (
        "dev",
        _edit("Certificate", "table", lambda d: d["spec"].pop("secretName")),
        "Certificate/table: spec: 'secretName' is required",
    ),
    "an Issuer of two kinds": (
        "dev",
        _edit("Issuer", "felt-ca", lambda d: d["spec"].update({"selfSigned": {}})),
        "Issuer/felt-ca: exactly one issuer type",
    ),
}


@pytest.mark.parametrize("case", sorted(MUTATIONS))
def test_checker_catches(case: str) -> None:
    overlay, mutate, expected = MUTATIONS[case]
    docs = rendered(overlay)
    mutate(docs)
    problems = problems_of(docs)
    assert any(expected in p for p in problems), f"{case}: expected {expected!r} in {problems}"


def test_tls_secrets_count_as_existing_for_the_references_check() -> None:
    """The <service>-tls Secrets are cert-manager's, not external: dropping a Certificate makes its Secret
    unknown to the references check too."""
    docs = rendered("production")
    o = next(o for o in layout.OVERLAYS if o.name == "production")
    docs.remove(get(docs, "Certificate", "dealer"))
    problems = manifests.check_rendered(docs, set(o.external_secrets), o.production)
    assert any(
        "Secret 'dealer-tls' is neither generated nor a documented external Secret" in p for p in problems
    )
