#!/usr/bin/env bash
# Runs the Python worker's tests against a real errand; or, with --lint, its
# linters instead.
#
# Tests: need ERRAND_BIN (the errand binary to test against) and DATABASE_URL
# (a PostgreSQL server this user may create databases on; each test makes its
# own). Extra arguments go to pytest, e.g. `clients/python/run-tests.sh -k upload`.
#
# `clients/python/run-tests.sh --lint` (no other arguments) runs no test and
# needs neither: ruff (lint rules, then the formatting check) and mypy (strict
# for the package) over src/ and tests/, as configured in pyproject.toml. To
# mend formatting: `ruff format` in clients/python with the venv's ruff.
#
# The virtualenv lives in the tools cache, made once per pyproject.toml, tool
# versions and checkout: the package is installed editable (edits to its
# source need no reinstall), so a venv points at one checkout's source, and a
# clone elsewhere (CI's) must not reuse it. Linters and tests share it (mypy
# checks the tests against the pytest and standardwebhooks they run with).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
lint=false
if [ "${1:-}" = "--lint" ]; then
    lint=true
    shift
    if [ "$#" -gt 0 ]; then
        echo "run-tests.sh: --lint takes no other arguments" >&2
        exit 2
    fi
else
    : "${ERRAND_BIN:?set ERRAND_BIN to the errand binary}"
    : "${DATABASE_URL:?set DATABASE_URL to a PostgreSQL server the tests may create databases on}"
fi

# The test tools are pinned to exact versions; bump them here (the venv's key changes with them).
# standardwebhooks is the Standard Webhooks reference library: the webhook tests check errand's
# deliveries with it as well as with the package's own verify_webhook.
# mypy stays on 1.x: 2.0 cannot check as Python 3.9, the package's oldest (requires-python).
# OpenTelemetry's API and SDK (the package's optional `otel` extra, and the SDK's in-memory
# exporter) let the trace tests check the spans the worker makes; its other tests then run with
# the API installed and no SDK configured, and one of them as if it were not installed at all.
pytest_version="8.4.2"
standardwebhooks_version="1.1.0"
ruff_version="0.17.6"
mypy_version="1.20.2"
opentelemetry_version="1.45.2"
pins="pytest==$pytest_version standardwebhooks==$standardwebhooks_version ruff==$ruff_version mypy==$mypy_version"
pins="$pins opentelemetry-api==$opentelemetry_version opentelemetry-sdk==$opentelemetry_version"
key="$( (cat "$here/pyproject.toml"; echo "$pins $here") | sha256sum | cut -c1-12)"
venv="${ERRAND_TOOLS_DIR:-$HOME/.cache/errand-tools}/python-worker-$key"

if [ ! -f "$venv/.ready" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    # $pins unquoted on purpose: one argument per tool.
    # shellcheck disable=SC2086
    "$venv/bin/pip" install --quiet --disable-pip-version-check -e "$here" $pins
    # Written last: a venv whose install was interrupted is made again.
    touch "$venv/.ready"
fi

cd "$here"
if $lint; then
    # Their caches live with the venv, not in the checkout.
    export RUFF_CACHE_DIR="$venv/ruff-cache" MYPY_CACHE_DIR="$venv/mypy-cache"
    "$venv/bin/ruff" check
    "$venv/bin/ruff" format --check
    exec "$venv/bin/mypy"
fi
exec "$venv/bin/python" -m pytest "$@"
