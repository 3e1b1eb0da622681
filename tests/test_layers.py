"""The layers hold (ARCHITECTURE "Layers"): the cores are pure, and services share only the wire.

- No service imports another service's package: what one service needs of another (its client, its
  retry policy) lives in servicekit, and the contract is the protos.
- The functional cores and the refusal type import no gRPC, no servicekit and no service, so they stay
  testable and replayable without a network.
- Nothing in libs/ imports a service, except the `felt` command line, which runs them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PURE = ("refusal", "pokerrules", "ledger", "dealing", "handeval")
NOT_IN_A_CORE = ("grpc", "grpc_status", "grpc_health", "google.rpc", "servicekit", "services", "poker")


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _services() -> list[str]:
    return sorted(p.name for p in (ROOT / "services").iterdir() if (p / "__init__.py").exists())


@pytest.mark.parametrize("service", _services())
def test_no_service_imports_another_services_package(service: str) -> None:
    others = [f"services.{name}" for name in _services() if name != service]
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in sorted((ROOT / "services" / service).rglob("*.py"))
        for line, module in _imports(path)
        if any(_under(module, other) for other in others)
    ]
    assert found == []


@pytest.mark.parametrize("core", PURE)
def test_the_cores_import_no_network_or_platform(core: str) -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in sorted((ROOT / "libs" / core).rglob("*.py"))
        for line, module in _imports(path)
        if any(_under(module, banned) for banned in NOT_IN_A_CORE)
    ]
    assert found == []


def test_libraries_import_no_service() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in sorted((ROOT / "libs").rglob("*.py"))
        if path.relative_to(ROOT / "libs").parts[0] not in ("felt", "poker")
        for line, module in _imports(path)
        if _under(module, "services")
    ]
    assert found == []


def test_the_layer_checks_see_imports() -> None:
    """The checks have teeth: today's table service would fail the first one before its clients moved."""
    sample = ROOT / "libs" / "servicekit" / "errors.py"
    assert any(module == "grpc" for _, module in _imports(sample))
