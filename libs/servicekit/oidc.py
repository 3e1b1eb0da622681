"""Players from OpenID Connect providers: their access tokens verified against each provider's JWKS.

A platform signs its players in with its own identity provider and Felt trusts the tokens it issues
(FELT_OIDC_PROVIDERS: issuer, audience, the claim holding the player id; several providers at once, for a
platform moving from one to another). A token names its provider in `iss` and its key in `kid`; the keys
come from the provider's JWKS (its URL given, or found in the discovery document) and are kept:

- a token naming a `kid` not in the cache, or the cache older than `cache_seconds`, fetches the JWKS
  again, but at most once every `refresh_interval_seconds` per provider: a flood of made-up kids costs
  the provider one request an interval, and is refused from the cache meanwhile;
- when the JWKS cannot be fetched the cached keys keep verifying (a provider's outage does not sign every
  player out); a key gone from a JWKS fetched since is no longer trusted, remembered tokens included.

Only RS256, ES256 and EdDSA are accepted, and only with a key of that type. A provider's token always
names a player: services and operators use Felt's own keys (servicekit.keyset).
"""

from __future__ import annotations

import ipaddress
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any

import jwt
import prometheus_client

from servicekit import auth
from servicekit.config import ConfigError, OidcProvider
from servicekit.logging import get_logger

DISCOVERY_PATH = "/.well-known/openid-configuration"
MAX_DOCUMENT_BYTES = 1024 * 1024  # a JWKS or discovery document larger than this is refused

JWKS_FETCHES = prometheus_client.Counter(
    "felt_oidc_jwks_fetches_total",
    "Fetches of an OpenID Connect provider's JWKS (with its discovery document when no jwks_url is set), "
    "by result: ok, or failed (the cached keys keep verifying).",
    ["issuer", "result"],
)
JWKS_KEYS = prometheus_client.Gauge(
    "felt_oidc_jwks_keys",
    "Signing keys of an OpenID Connect provider held in the cache.",
    ["issuer"],
    multiprocess_mode="livemax",
)


class FetchFailed(Exception):
    """A provider's document could not be fetched or read."""


Fetch = Callable[[str, float], dict[str, Any]]


def fetch_json(url: str, timeout: float) -> dict[str, Any]:
    """GET `url` as a JSON object (at most MAX_DOCUMENT_BYTES), or FetchFailed."""
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read(MAX_DOCUMENT_BYTES + 1)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise FetchFailed(f"{url}: {exc}") from None
    if len(body) > MAX_DOCUMENT_BYTES:
        raise FetchFailed(f"{url}: larger than {MAX_DOCUMENT_BYTES} bytes")
    try:
        document = json.loads(body)
    except ValueError as exc:
        raise FetchFailed(f"{url}: not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise FetchFailed(f"{url}: not a JSON object")
    return document


def check_url(url: str, production: bool) -> None:
    """Provider URLs are https, except (in development, or on the host itself) plain http."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme == "https" and parsed.hostname:
        return
    if parsed.scheme == "http" and parsed.hostname:
        try:
            loopback = parsed.hostname == "localhost" or ipaddress.ip_address(parsed.hostname).is_loopback
        except ValueError:
            loopback = False
        if not production or loopback:
            return
    raise ConfigError(f"FELT_OIDC_PROVIDERS: {url!r} must be an https URL")


class ProviderKeys:
    """One provider's signing keys, fetched from its JWKS and kept (see the module's docstring)."""

    def __init__(
        self, provider: OidcProvider, clock: Callable[[], float] = time.monotonic, fetch: Fetch = fetch_json
    ) -> None:
        self.provider = provider
        self._clock = clock
        self._fetch = fetch
        self._keys: dict[str | None, jwt.PyJWK] = {}
        self._expires_at = float("-inf")
        self._attempted_at: float | None = None
        self._discovered: str | None = None
        self._fetching = threading.Lock()
        self._log = get_logger(issuer=provider.issuer)

    def get(self, kid: str | None) -> jwt.PyJWK | None:
        """The key `kid` names (a token without a kid: the provider's only key), fetching the JWKS again
        when the cache is stale or lacks `kid` and the last fetch is an interval old."""
        key = self._find(kid)
        if key is not None:
            if self._clock() >= self._expires_at:
                self._refresh(wait=False)  # one caller fetches; the others go on with the cached keys
                key = self._find(kid)  # gone from the JWKS just fetched: no longer trusted
            return key
        self._refresh(wait=True)
        return self._find(kid)

    def warm(self) -> None:
        """A first fetch (a service starting), so the first player's call does not wait for it."""
        self._refresh(wait=True)

    def trusts(self, kid: str | None) -> bool:
        """Whether `kid` is in the cached JWKS (no fetch: a remembered token's check)."""
        return self._find(kid) is not None

    def _find(self, kid: str | None) -> jwt.PyJWK | None:
        keys = self._keys
        if kid is None:
            return next(iter(keys.values())) if len(keys) == 1 else None
        return keys.get(kid)

    def _due(self) -> bool:
        at = self._attempted_at
        return at is None or self._clock() - at >= self.provider.refresh_interval_seconds

    def _refresh(self, wait: bool) -> None:
        """Fetch the keys if the last attempt is an interval old; `wait`: for a fetch under way too (a
        token naming a kid the cache lacks), else go on at once with the cached keys."""
        if not wait and (not self._due() or self._fetching.locked()):
            return  # fetched lately, or being fetched: the cached keys it is
        with self._fetching:
            if not self._due():  # fetched (or tried) within the interval, maybe while this one waited
                return
            self._attempted_at = self._clock()
            try:
                keys = self._fetch_keys()
            except FetchFailed as exc:
                JWKS_FETCHES.labels(self.provider.issuer, "failed").inc()
                self._discovered = None  # found again next time: the provider may have moved its JWKS
                self._log.warning("oidc_jwks_fetch_failed", error=str(exc), cached_keys=len(self._keys))
                return
            JWKS_FETCHES.labels(self.provider.issuer, "ok").inc()
            JWKS_KEYS.labels(self.provider.issuer).set(len(keys))
            if set(keys) != set(self._keys):
                self._log.info("oidc_jwks_keys", kids=sorted(str(k) for k in keys))
            self._keys = keys
            self._expires_at = self._clock() + self.provider.cache_seconds

    def _jwks_url(self) -> str:
        if self.provider.jwks_url:
            return self.provider.jwks_url
        if self._discovered is None:
            url = self.provider.issuer.rstrip("/") + DISCOVERY_PATH
            document = self._fetch(url, self.provider.timeout_seconds)
            # OpenID Connect Discovery 1.0, 4.3: the document's issuer is exactly the one configured.
            if document.get("issuer") != self.provider.issuer:
                raise FetchFailed(f"{url}: names the issuer {document.get('issuer')!r}")
            jwks_uri = document.get("jwks_uri")
            if not isinstance(jwks_uri, str) or not jwks_uri:
                raise FetchFailed(f"{url}: has no jwks_uri")
            self._discovered = jwks_uri
        return self._discovered

    def _fetch_keys(self) -> dict[str | None, jwt.PyJWK]:
        url = self._jwks_url()
        document = self._fetch(url, self.provider.timeout_seconds)
        keys: dict[str | None, jwt.PyJWK] = {}
        for data in document.get("keys") or []:
            if not isinstance(data, dict) or data.get("use", "sig") != "sig":
                continue  # encryption keys, and what is not a key
            try:
                key = jwt.PyJWK(data)
            except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError, TypeError):
                continue  # a key type or algorithm Felt does not verify with
            if key.algorithm_name in self.provider.algorithms:
                keys[key.key_id] = key
        if not keys:
            raise FetchFailed(f"{url}: no signing key Felt can use ({', '.join(self.provider.algorithms)})")
        return keys


class TrustedIssuers:
    """The providers Felt accepts player tokens from, by issuer (auth.Issuers)."""

    def __init__(
        self,
        providers: Sequence[OidcProvider],
        production: bool = False,
        clock: Callable[[], float] = time.monotonic,
        fetch: Fetch = fetch_json,
    ) -> None:
        for provider in providers:
            for url in (provider.issuer, provider.jwks_url):
                if url:
                    check_url(url, production)
        self._by_issuer = {p.issuer: ProviderKeys(p, clock, fetch) for p in providers}

    def __contains__(self, issuer: object) -> bool:
        return issuer in self._by_issuer

    def keys_of(self, issuer: str) -> ProviderKeys:
        return self._by_issuer[issuer]

    def warm_up(self) -> None:
        """Fetch every provider's keys now, in the background (a service starting up)."""
        for keys in self._by_issuer.values():
            threading.Thread(target=keys.warm, name="oidc-warm-up", daemon=True).start()

    def verify(self, token: str, header: dict[str, Any], issuer: str, now: float) -> auth.Verified:
        keys = self._by_issuer[issuer]
        provider = keys.provider
        algorithm = header.get("alg")
        if algorithm not in provider.algorithms:
            raise auth.invalid(
                f"its algorithm {auth.shown(algorithm)} is not one of {list(provider.algorithms)}"
            )
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise auth.invalid("its kid is not a string")
        key = keys.get(kid)
        if key is None:
            raise auth.invalid(f"it is signed with no key of {issuer}'s JWKS (kid {auth.shown(kid)})")
        if key.algorithm_name != algorithm:
            raise auth.invalid(
                f"its algorithm {auth.shown(algorithm)} is not its key's ({key.algorithm_name})"
            )
        try:
            claims = jwt.decode(
                token,
                key.key,
                algorithms=[algorithm],
                audience=provider.audience,
                issuer=issuer,
                options={
                    "require": ["exp", "iss", "aud"],
                    "verify_exp": False,
                    "verify_iat": False,
                    "verify_nbf": False,
                },
            )
        except jwt.InvalidTokenError as exc:
            raise auth.invalid(str(exc)) from None
        expires = auth.check_times(claims, now, iat_required=False)
        caller = auth.checked_caller(claims.get(provider.player_claim), auth.Role.PLAYER)
        return auth.Verified(caller, expires, lambda: keys.trusts(kid))
