"""The Dockerfile: python:3.11-slim, the C extension built, a numeric non-root user that matches the
manifests' runAsUser, `felt serve` as the entrypoint, and a .dockerignore that keeps local state out."""

from __future__ import annotations

import json
import re
from pathlib import Path

BASE_IMAGE = "python:3.11-slim"
MUST_IGNORE = (".git", ".venv", ".felt-data", "libs/poker", "**/*.so")


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    joined = re.sub(r"\\\n", " ", text)
    out = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def check_dockerfile(dockerfile: Path, dockerignore: Path, run_as_user: int) -> list[str]:
    problems = []
    steps = instructions(dockerfile.read_text(encoding="utf-8"))
    froms = [args.split()[0] for word, args in steps if word == "FROM"]
    if not froms or any(image != BASE_IMAGE for image in froms):
        problems.append(f"Dockerfile: every stage must build FROM {BASE_IMAGE} (found {froms})")
    final = steps[max(i for i, (word, _) in enumerate(steps) if word == "FROM") :]
    users = [args for word, args in final if word == "USER"]
    if not users or users[-1].split(":")[0] != str(run_as_user):
        problems.append(
            f"Dockerfile: the final stage must run as numeric USER {run_as_user} (the manifests' uid)"
        )
    entry = [args for word, args in final if word == "ENTRYPOINT"]
    if not entry or json.loads(entry[-1]) != ["felt", "serve"]:
        problems.append('Dockerfile: ENTRYPOINT must be ["felt", "serve"]')
    runs = " ".join(args for word, args in steps if word == "RUN")
    if "build-venv.sh app" not in runs and "build_ext" not in runs:
        problems.append("Dockerfile: the C extension (handeval._core) is never built")
    copied = " ".join(args for word, args in steps if word == "COPY")
    script = "deploy/docker/build-venv.sh"
    if script in runs and script not in copied:
        problems.append(f"Dockerfile: runs {script} without copying it")
    ignored = {line.strip() for line in dockerignore.read_text(encoding="utf-8").splitlines()}
    for pattern in MUST_IGNORE:
        if pattern not in ignored:
            problems.append(f".dockerignore: must exclude {pattern}")
    for source in copied.split():
        if source in ignored:
            problems.append(f"Dockerfile: COPY {source} but .dockerignore excludes it")
    return problems
