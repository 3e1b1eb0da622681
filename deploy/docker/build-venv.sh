#!/bin/sh
# Build Felt into a self-contained virtualenv: the `make dev` steps without the development tools.
# Used by the Dockerfile, and by tests/deploy (on a copy of the tree) so the image's install is tested here.
#
#   build-venv.sh deps PREFIX [SRC]   pinned runtime packages from requirements.lock (cacheable layer)
#   build-venv.sh app  PREFIX [SRC]   generated protobuf code, then Felt itself with its C extension
#   build-venv.sh all  PREFIX [SRC]
#
# `app` writes SRC/libs/poker (generated code); run it on a copy, not on a developer's work tree.
set -eu
step=$1
prefix=$2
src=${3:-.}
python=${PYTHON:-python3}

deps() {
    test -x "$prefix/bin/python" || "$python" -m venv "$prefix"
    # Runtime pins are the part of requirements.lock above "# development".
    sed '/^# development/,$d' "$src/requirements.lock" > "$prefix/requirements.runtime.txt"
    "$prefix/bin/python" -m pip install --quiet -r "$prefix/requirements.runtime.txt"
}

app() {
    rm -rf "$src/libs/poker"
    mkdir -p "$src/libs/poker"
    protos=$(cd "$src/protos" && find poker -name '*.proto' | sed 's|^\./||' | sort)
    (cd "$src/protos" && "$prefix/bin/python" -m grpc_tools.protoc -I . --python_out=../libs \
        --pyi_out=../libs --grpc_python_out=../libs $protos)
    find "$src/libs/poker" -type d -exec touch {}/__init__.py \;
    # A regular (not editable) install: the wheel carries libs/, services/, the compiled handeval._core and
    # the Naiko core compiled by mypyc. Built in pip's isolated build environment, which installs the
    # pinned build requirements of pyproject.toml (mypy among them) for the build only: none of them
    # ends up in the virtualenv.
    "$prefix/bin/python" -m pip install --quiet --no-deps "$src"
}

case "$step" in
    deps) deps ;;
    app) app ;;
    all) deps; app ;;
    *) echo "usage: $0 deps|app|all PREFIX [SRC]" >&2; exit 2 ;;
esac
