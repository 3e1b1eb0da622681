"""Build script: packages under libs/ and services/, the evaluator's C extension, and the Naiko powers'
core compiled with mypyc (the same typed Python, as C extension modules; see libs/pokerrules/naiko)."""

import os

from setuptools import Extension, find_namespace_packages, find_packages, setup

libs_packages = find_packages("libs") + find_namespace_packages("libs", include=["poker", "poker.*"])
service_packages = ["services", *(f"services.{p}" for p in find_packages("services"))]

# The Naiko modules compiled by mypyc: the powers' bookkeeping of every hand at a Naiko table. mypyc comes
# with mypy (requirements.lock; the image's build installs it for the build only). FELT_NO_MYPYC=1 skips
# it: the modules then run as plain Python, correct but slower (tests/pokerrules/naiko/test_compiled.py
# fails in a checkout built that way, so CI always runs the compiled core).
NAIKO_COMPILED = ["libs/pokerrules/naiko/state.py", "libs/pokerrules/naiko/rules.py"]


def naiko_extensions() -> list[Extension]:
    if os.environ.get("FELT_NO_MYPYC") == "1":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError as missing:
        raise SystemExit(
            "setup.py: mypyc (part of mypy, pinned in requirements.lock) is needed to build the Naiko core; "
            "install it, or set FELT_NO_MYPYC=1 to run that core as plain Python"
        ) from missing
    return mypycify(NAIKO_COMPILED, group_name="felt_naiko", opt_level="3")


setup(
    package_dir={"": "libs", "services": "services"},
    packages=sorted(set(libs_packages)) + service_packages,
    ext_modules=[
        Extension(
            "handeval._core",
            sources=["libs/handeval/core.c", "libs/handeval/equity.c", "libs/handeval/binding.c"],
            include_dirs=["libs/handeval"],
            depends=["libs/handeval/core.h"],
            extra_compile_args=["-O3", "-std=c11", "-Wall", "-Wextra", "-fno-strict-aliasing"],
        ),
        *naiko_extensions(),
    ],
)
