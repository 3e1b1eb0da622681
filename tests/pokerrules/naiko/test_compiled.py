"""The Naiko core runs compiled by mypyc (setup.py), from its current sources; and the same modules run as
plain Python pass the same rule tests, so the compiled build and the source never mean different things."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pokerrules
from pokerrules.naiko import rules, state

REPO = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
COMPILED = (state, rules)


def test_the_naiko_core_is_the_compiled_build_of_its_current_sources() -> None:
    package = Path(pokerrules.__file__).parent
    sources = [package / "naiko" / "state.py", package / "naiko" / "rules.py"]
    for module in COMPILED:
        assert Path(module.__file__ or "").suffix == ".so", (
            f"{module.__name__} runs as plain Python: build it with `make ext`"
        )
    built = [Path(m.__file__ or "") for m in COMPILED] + list(package.parent.glob("felt_naiko__mypyc*.so"))
    assert len(built) == 3, built
    newest_source = max(s.stat().st_mtime for s in sources)
    for path in built:
        assert path.stat().st_mtime >= newest_source, (
            f"{path.name} is older than the Naiko sources: the tests would run stale code; run `make ext`"
        )


def test_the_plain_python_core_passes_the_naiko_rule_tests(tmp_path: Path) -> None:
    """The same tests on a copy of `pokerrules` without the compiled modules (everything else, the
    evaluator's C extension included, is imported from the checkout as usual)."""
    copy = tmp_path / "pokerrules"
    shutil.copytree(
        Path(pokerrules.__file__).parent, copy, ignore=shutil.ignore_patterns("*.so", "__pycache__")
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"}
    where = subprocess.run(
        [
            sys.executable,
            "-c",
            "import pokerrules.naiko.rules as r, pokerrules.naiko.state as s; print(r.__file__, s.__file__)",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert where == [str(copy / "naiko" / "rules.py"), str(copy / "naiko" / "state.py")]
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            str(HERE),
            f"--ignore={Path(__file__)}",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout.splitlines()[-1], run.stdout[-500:]
