"""Where the deployment files are, and what each overlay promises."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
RULE_FILES = sorted((DEPLOY / "prometheus" / "rules").glob("*.yml"))
RULE_TESTS = sorted((DEPLOY / "prometheus" / "tests").glob("*.yml"))
SCRAPE_CONFIG = DEPLOY / "prometheus" / "prometheus.yml"
DASHBOARDS = sorted((DEPLOY / "grafana" / "dashboards").glob("*.json"))
OPERATOR = DEPLOY / "k8s" / "monitoring"  # the Prometheus Operator's PodMonitor and PrometheusRules
RUN_AS_USER = 10001


@dataclass(frozen=True)
class Overlay:
    name: str
    path: Path
    # Secrets created outside git (docs/operations.md says how), referenced by name only.
    external_secrets: frozenset[str]
    production: bool
    # Browsers reach the doors through a Gateway (HTTPRoutes of deploy/k8s/components/browser-routes).
    browser_routes: bool = True
    # Every Felt container serves TLS from a cert-manager Certificate (deploy/k8s/components/tls).
    tls: bool = True


# felt-auth: the public key every service verifies tokens with; felt-auth-signing: its private key, for the
# table service, which mints its own service token for the dealer and the wallet.
AUTH_SECRETS = frozenset({"felt-auth", "felt-auth-signing"})
OVERLAYS = (
    # The base renders core Kubernetes kinds only: it applies where no Gateway API or cert-manager CRDs are.
    Overlay("base", DEPLOY / "k8s" / "base", AUTH_SECRETS | {"felt-wallet-database"}, False, False, False),
    Overlay("dev", DEPLOY / "k8s" / "overlays" / "dev", AUTH_SECRETS, False),
    Overlay(
        "production",
        DEPLOY / "k8s" / "overlays" / "production",
        AUTH_SECRETS | {"felt-wallet-database", "felt-table-database", "felt-tournament-database"},
        True,
    ),
)
