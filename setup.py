"""Build script: packages under libs/ and services/, and the evaluator's C extension."""

from setuptools import Extension, find_namespace_packages, find_packages, setup

libs_packages = find_packages("libs") + find_namespace_packages("libs", include=["poker", "poker.*"])
service_packages = ["services", *(f"services.{p}" for p in find_packages("services"))]

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
        )
    ],
)
