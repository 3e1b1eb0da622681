"""cert-manager Certificates and the TLS files of Felt's containers (deploy/k8s/components/tls), checked
offline.

`certificate_shape` and `issuer_shape` check the resources' fields as cert-manager's v1 CRDs would (no
schema ships with kubernetes-validate). `check_tls` checks what a schema cannot: every Felt container of a
TLS overlay points FELT_TLS_CERT_FILE, _KEY_FILE and _CA_FILE at cert-manager's `tls.crt`, `tls.key` and
`ca.crt` on a Secret volume that kubelet refreshes (no subPath); that Secret is a Certificate's whose
first DNS name is the service itself (the subject its service tokens must match on the internal port),
mounted by that service's pods and by no other (another service holding it could pass for it); the
Certificate names every address other containers dial it at (a Service, a table shard's own name) and
serves both ends of mutual TLS (usages server auth and client auth); and its Issuer is named.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from deploy.validate import shapes
from deploy.validate.manifests import Doc, Workload, environment, felt_service_of, find, workloads

API_VERSION = "cert-manager.io/v1"
GROUP = "cert-manager.io"
# The settings servicekit.tls reads, and the key cert-manager writes each file under in the Secret.
TLS_FILES = {"FELT_TLS_CERT_FILE": "tls.crt", "FELT_TLS_KEY_FILE": "tls.key", "FELT_TLS_CA_FILE": "ca.crt"}
# Both ends of mutual TLS: a service serves with its certificate and calls the others with it.
REQUIRED_USAGES = frozenset({"server auth", "client auth"})
# The Issuer the certificates name; in production the operator's, outside git (docs/operations.md "TLS").
EXTERNAL_ISSUER = "felt-ca"
_USAGES = (
    "signing",
    "digital signature",
    "content commitment",
    "key encipherment",
    "key agreement",
    "data encipherment",
    "cert sign",
    "crl sign",
    "encipher only",
    "decipher only",
    "any",
    "server auth",
    "client auth",
    "code signing",
    "email protection",
    "s/mime",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "timestamping",
    "ocsp signing",
    "microsoft sgc",
    "netscape sgc",
)
_GO_DURATION = r"([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+"
_ISSUER_REF = shapes.Obj(
    {
        "name": shapes.Str(shapes.DNS_SUBDOMAIN),
        "kind": shapes.Str(enum=("Issuer", "ClusterIssuer")),
        "group": shapes.Str(enum=(GROUP,)),
    },
    required=("name",),
)
CERTIFICATE = shapes.resource(
    API_VERSION,
    "Certificate",
    shapes.Obj(
        {
            "secretName": shapes.Str(shapes.DNS_SUBDOMAIN, max_length=253),
            "issuerRef": _ISSUER_REF,
            "commonName": shapes.Str(max_length=64),
            "dnsNames": shapes.List(shapes.Str(r"(\*\.)?" + shapes.DNS_SUBDOMAIN)),
            "ipAddresses": shapes.List(shapes.Str()),
            "uris": shapes.List(shapes.Str()),
            "duration": shapes.Str(_GO_DURATION),
            "renewBefore": shapes.Str(_GO_DURATION),
            "usages": shapes.List(shapes.Str(enum=_USAGES)),
            "isCA": shapes.Bool(),
            "privateKey": shapes.Obj(
                {
                    "algorithm": shapes.Str(enum=("RSA", "ECDSA", "Ed25519")),
                    "size": shapes.Int(0, 8192),
                    "encoding": shapes.Str(enum=("PKCS1", "PKCS8")),
                    "rotationPolicy": shapes.Str(enum=("Never", "Always")),
                }
            ),
            "subject": shapes.Obj({}, values=shapes.List(shapes.Str())),
            "secretTemplate": shapes.Obj({"annotations": shapes.STRINGS, "labels": shapes.STRINGS}),
            "revisionHistoryLimit": shapes.Int(1),
        },
        required=("secretName", "issuerRef"),
    ),
)
ISSUER = shapes.resource(
    API_VERSION,
    "Issuer",
    shapes.Obj(
        {
            "selfSigned": shapes.Obj({"crlDistributionPoints": shapes.List(shapes.Str())}),
            "ca": shapes.Obj(
                {
                    "secretName": shapes.Str(shapes.DNS_SUBDOMAIN),
                    "crlDistributionPoints": shapes.List(shapes.Str()),
                    "ocspServers": shapes.List(shapes.Str()),
                },
                required=("secretName",),
            ),
        }
    ),
)


def _seconds(duration: str) -> float:
    units = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    return sum(
        float(n) * units[u] for n, _, u in re.findall(r"([0-9]+(\.[0-9]+)?)(ns|us|µs|ms|s|m|h)", duration)
    )


def certificate_shape(doc: Doc) -> list[str]:
    """The Certificate's fields as cert-manager's v1 CRD and its webhook allow them."""
    where = f"Certificate/{doc.get('metadata', {}).get('name')}"
    problems = [f"{where}: {p}" for p in CERTIFICATE.problems(doc, "")]
    if problems:
        return problems
    spec = doc["spec"]
    if not any(spec.get(k) for k in ("commonName", "dnsNames", "ipAddresses", "uris")):
        problems.append(f"{where}: at least one of commonName, dnsNames, uris or ipAddresses must be set")
    key = spec.get("privateKey", {})
    if key.get("algorithm") == "ECDSA" and key.get("size", 256) not in (256, 384, 521):
        problems.append(f"{where}: an ECDSA key is 256, 384 or 521 bits")
    renew, duration = spec.get("renewBefore"), spec.get("duration")
    if renew and duration and _seconds(renew) >= _seconds(duration):
        problems.append(f"{where}: renewBefore must be shorter than duration")
    return problems


def issuer_shape(doc: Doc) -> list[str]:
    where = f"Issuer/{doc.get('metadata', {}).get('name')}"
    problems = [f"{where}: {p}" for p in ISSUER.problems(doc, "")]
    if not problems and len(doc["spec"]) != 1:
        problems.append(f"{where}: exactly one issuer type (selfSigned, ca, ...) must be set")
    return problems


def dns_matches(pattern: str, host: str) -> bool:
    """A certificate's DNS name covers `host` the way gRPC checks it: exactly, or a wildcard standing for
    the whole first label of a name under a domain of at least two labels (*.b.c covers a.b.c only)."""
    if not pattern.startswith("*."):
        return pattern == host.lower()
    base = pattern[2:]
    first, _, rest = host.lower().partition(".")
    return "." in base and rest == base and bool(first)


def _tls_mount(w: Workload, container: Doc, env: Mapping[str, str]) -> tuple[list[str], str | None]:
    """Problems with the container's TLS files, and the Secret they come from."""
    where = f"{w} container {container['name']}"
    given = {name: env[name] for name in TLS_FILES if env.get(name)}
    if not given:
        return [
            f"{where}: no TLS files (FELT_TLS_CERT_FILE, _KEY_FILE, _CA_FILE): it would serve plaintext"
        ], None
    missing = sorted(set(TLS_FILES) - set(given))
    if missing:
        return [
            f"{where}: TLS needs all of FELT_TLS_CERT_FILE, _KEY_FILE, _CA_FILE (missing {missing})"
        ], None
    volumes = {v["name"]: v for v in w.pod.get("volumes", [])}
    problems, secrets = [], set()
    for name, path in sorted(given.items()):
        directory, _, file = path.rpartition("/")
        mount = next(
            (m for m in container.get("volumeMounts", []) if m["mountPath"].rstrip("/") == directory), None
        )
        volume = volumes.get(mount["name"]) if mount else None
        if mount is None or volume is None or "secret" not in volume:
            problems.append(f"{where}: {name}={path} is not on a Secret volume")
            continue
        if mount.get("subPath"):
            problems.append(f"{where}: {name}: a subPath mount never sees a renewed certificate")
        items = {i["path"]: i["key"] for i in volume["secret"].get("items", [])}
        if items.get(file, file) != TLS_FILES[name]:
            problems.append(f"{where}: {name}={path} is not cert-manager's {TLS_FILES[name]}")
        secrets.add(volume["secret"]["secretName"])
    if len(secrets) > 1:
        problems.append(
            f"{where}: the TLS files come from several Secrets {sorted(secrets)}: one certificate"
        )
    return problems, next(iter(secrets), None)


def _dialed_hosts(docs: list[Doc], namespace: str) -> dict[str, set[str]]:
    """The host names containers dial each Felt service at: FELT_<SERVICE>_ADDRESS, and a table shard's
    advertised internal address (the other services follow a moved table there), with the pod's name and
    namespace filled in."""
    dialed: dict[str, set[str]] = {}
    for w in workloads(docs):
        for c in w.pod.get("containers", []):
            env = environment(c, docs)
            for name, value in env.items():
                if name.startswith("FELT_") and name.endswith("_ADDRESS") and name.count("_") == 2:
                    target = name.split("_")[1].lower()
                    dialed.setdefault(target, set()).add(value.rpartition(":")[0])
            advertised = env.get("FELT_TABLE_ADVERTISE_INTERNAL_ADDRESS", "")
            if advertised and felt_service_of(c) == "table":
                for k in range(int(w.doc["spec"].get("replicas", 1))):
                    host = advertised.rpartition(":")[0]
                    host = host.replace("$(POD_NAME)", f"{w.name}-{k}").replace("$(POD_NAMESPACE)", namespace)
                    dialed.setdefault("table", set()).add(host)
    return dialed


def check_tls(docs: list[Doc], expected: bool, namespace: str) -> list[str]:
    """Certificates and the TLS files of every Felt container (`expected`: the overlay serves TLS)."""
    # A Certificate of the wrong shape is reported by the schema check (certificate_shape); skipped here.
    certificates = {
        d["metadata"]["name"]: d for d in docs if d.get("kind") == "Certificate" and not certificate_shape(d)
    }
    by_secret = {c["spec"]["secretName"]: c for c in certificates.values()}
    problems: list[str] = []
    mounted_by: dict[str, set[str]] = {}
    for w in workloads(docs):
        for c in w.pod.get("containers", []):
            service = felt_service_of(c)
            if service is None:
                continue
            env = environment(c, docs)
            if not expected and not any(env.get(name) for name in TLS_FILES):
                continue
            found, secret = _tls_mount(w, c, env)
            problems += found
            if secret is None:
                continue
            mounted_by.setdefault(secret, set()).add(service)
            certificate = by_secret.get(secret)
            if certificate is None:
                problems.append(f"{w}: its TLS Secret {secret!r} is made by no Certificate in the render")
                continue
            names = certificate["spec"].get("dnsNames", [])
            if not names or names[0] != service:
                problems.append(
                    f"Certificate/{certificate['metadata']['name']}: mounted by {service}, so its first DNS "
                    f"name must be {service!r} (the subject of its service tokens), not {names[:1]}"
                )
    dialed = _dialed_hosts(docs, namespace)
    for name, certificate in sorted(certificates.items()):
        spec, where = certificate["spec"], f"Certificate/{name}"
        if spec.get("isCA"):
            issuers = [
                d
                for d in docs
                if d.get("kind") == "Issuer"
                and d["spec"].get("ca", {}).get("secretName") == spec["secretName"]
            ]
            if not issuers:
                problems.append(f"{where}: a CA certificate no Issuer signs with")
            continue
        users = mounted_by.get(spec["secretName"], set())
        if not users:
            problems.append(f"{where}: its Secret {spec['secretName']} is mounted by no Felt service")
        elif len(users) > 1:
            problems.append(
                f"{where}: its Secret is mounted by {sorted(users)}: each could pass for the others"
            )
        missing = sorted(REQUIRED_USAGES - set(spec.get("usages", [])))
        if missing:
            problems.append(f"{where}: usages must include {missing} (mutual TLS: it serves and it calls)")
        service = (spec.get("dnsNames") or [""])[0]
        for host in sorted(dialed.get(service, set()) | {service, f"{service}.{namespace}.svc"}):
            if not any(dns_matches(pattern, host) for pattern in spec.get("dnsNames", [])):
                problems.append(f"{where}: callers dial {host!r}, which none of its DNS names covers")
        issuer = spec["issuerRef"]
        # The operator's Issuer lives outside git, in the namespace: only its name can be checked.
        unknown = find(docs, "Issuer", issuer["name"]) is None and issuer["name"] != EXTERNAL_ISSUER
        if issuer.get("kind", "Issuer") == "Issuer" and unknown:
            problems.append(f"{where}: Issuer {issuer['name']!r} is neither rendered nor {EXTERNAL_ISSUER!r}")
    return problems
