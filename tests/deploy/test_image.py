"""The Dockerfile: static checks (deploy/validate/dockerfile.py) and, without Docker, its build stage's
RUN steps executed on exactly the files its COPY lines take from the build context (after .dockerignore),
then `felt serve` from the resulting virtualenv answering gRPC health like the kubelet's probe."""

from __future__ import annotations

import fnmatch
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from servicekit import testing

from deploy.validate import dockerfile, layout, suite

DOCKERFILE = layout.REPO / "Dockerfile"
DOCKERIGNORE = layout.REPO / ".dockerignore"


def test_dockerfile_passes_the_checks() -> None:
    assert suite.check_docker().problems == []


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "FROM python:3.11-slim\n",
            "FROM python:3.12-slim\n",
            "every stage must build FROM python:3.11-slim",
        ),
        ("USER 10001:10001", "USER felt", "numeric USER 10001"),
        ("USER 10001:10001", "USER 0", "numeric USER 10001"),
        ('ENTRYPOINT ["felt", "serve"]', 'ENTRYPOINT ["python", "-m", "felt"]', "ENTRYPOINT must be"),
        ("build-venv.sh app", "build-venv.sh deps", "C extension (handeval._core) is never built"),
    ],
)
def test_dockerfile_checker_catches(old: str, new: str, expected: str, tmp_path: Path) -> None:
    text = DOCKERFILE.read_text()
    assert old in text
    (tmp_path / "Dockerfile").write_text(text.replace(old, new))
    problems = dockerfile.check_dockerfile(tmp_path / "Dockerfile", DOCKERIGNORE, layout.RUN_AS_USER)
    assert any(expected in p for p in problems), problems


def test_dockerignore_checker_catches_local_state_and_ignored_sources(tmp_path: Path) -> None:
    (tmp_path / ".dockerignore").write_text(DOCKERIGNORE.read_text().replace(".venv\n", "") + "libs\n")
    problems = dockerfile.check_dockerfile(DOCKERFILE, tmp_path / ".dockerignore", layout.RUN_AS_USER)
    assert any("must exclude .venv" in p for p in problems)
    assert any("COPY libs but .dockerignore excludes it" in p for p in problems)


def _ignored(relative: str, patterns: list[str]) -> bool:
    for pattern in patterns:
        bare = pattern.removeprefix("**/")
        if fnmatch.fnmatch(relative, pattern) or relative == pattern or relative.startswith(pattern + "/"):
            return True
        if pattern.startswith("**/") and any(fnmatch.fnmatch(part, bare) for part in relative.split("/")):
            return True
    return False


def _build_context_copy(destination: Path) -> None:
    """What the build stage's COPY lines see: the repository minus .dockerignore."""
    patterns = [
        line.strip()
        for line in DOCKERIGNORE.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    steps = dockerfile.instructions(DOCKERFILE.read_text())
    build_stage = steps[: [i for i, (w, _) in enumerate(steps) if w == "FROM"][1]]
    for word, args in build_stage:
        if word != "COPY" or args.startswith("--from"):
            continue
        *sources, _target = args.split()
        for source in sources:
            src = layout.REPO / source
            files = [src] if src.is_file() else [p for p in src.rglob("*") if p.is_file()]
            for path in files:
                relative = path.relative_to(layout.REPO).as_posix()
                if _ignored(relative, patterns):
                    continue
                (destination / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, destination / relative)


@pytest.mark.slow
def test_build_stage_steps_produce_a_working_felt(tmp_path: Path) -> None:
    src, prefix = tmp_path / "src", tmp_path / "opt-felt"
    src.mkdir()
    _build_context_copy(src)
    assert not (src / "libs" / "poker").exists() and not list(src.rglob("*.so"))
    steps = dockerfile.instructions(DOCKERFILE.read_text())
    build_stage = steps[: [i for i, (w, _) in enumerate(steps) if w == "FROM"][1]]
    env = {**os.environ, "PYTHON": sys.executable, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    ran = 0
    for word, args in build_stage:
        if word != "RUN" or args.startswith("apt-get"):  # the compiler comes from the host here
            continue
        command = args.replace("/opt/felt", str(prefix)).replace("/src", str(src))
        subprocess.run(["sh", "-c", command], cwd=src, env=env, check=True, timeout=600)
        ran += 1
    assert ran >= 2
    # The C extension and the Naiko core compiled by mypyc were built into the virtualenv, not borrowed
    # from the work tree; mypy, needed only to build, is not in it.
    modules = ("handeval._core", "pokerrules.naiko.state", "pokerrules.naiko.rules")
    where = subprocess.run(
        [
            str(prefix / "bin" / "python"),
            "-c",
            "import importlib, importlib.util; "
            f"print(*(importlib.import_module(m).__file__ for m in {modules!r})); "
            "print(importlib.util.find_spec('mypy') is None)",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    ).stdout.split()
    assert where[-1] == "True", "mypy is installed in the image's virtualenv"
    for module, path in zip(modules, where, strict=False):
        assert path.startswith(str(prefix)) and path.endswith(".so"), (module, path)
    for name in ("evaluator", "dealer", "wallet"):
        _serve_from(prefix, name, tmp_path)


def _serve_from(prefix: Path, name: str, tmp_path: Path) -> None:
    data = tmp_path / f"data-{name}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FELT_", "WALLET_", "PYTHONPATH"))}
    env.update(
        {
            "FELT_HOST": "127.0.0.1",
            "FELT_DATA_DIR": str(data),
            "PYTHONDONTWRITEBYTECODE": "1",
            "FELT_SHUTDOWN_GRACE_SECONDS": "2",
        }
    )
    # The output goes to a file, never to a pipe nobody reads: a full pipe would block the service's
    # logging, and with it its drain (CI once saw the wallet miss its 30 s exit that way, at load 10).
    log_path = tmp_path / f"serve-{name}.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [str(prefix / "bin" / "felt"), "serve", name, "--port", "0", "--metrics-port", "0"],
            env=env,
            cwd=tmp_path,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )
    try:
        deadline = time.monotonic() + 120
        port = None
        while port is None and time.monotonic() < deadline:
            for line in log_path.read_text().splitlines():
                if " listening on " in line:
                    port = int(line.split(" listening on ")[1].split()[0].rsplit(":", 1)[1])
                    break
            if port is None:
                if proc.poll() is not None:
                    pytest.fail(f"felt serve {name} exited {proc.returncode}: {log_path.read_text()[-2000:]}")
                time.sleep(0.1)
        assert port is not None, log_path.read_text()[-2000:]
        # TLS from the development CA the service made in its data directory (servicekit.devca).
        with testing.public_channel(f"127.0.0.1:{port}", felt_up_dir=data) as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=30)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=90) == 0, log_path.read_text()[-2000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
