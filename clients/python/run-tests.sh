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
# The virtualenv (venv.sh: in the tools cache, pinned tools) is shared by
# linters and tests (mypy checks the tests against the pytest and
# standardwebhooks they run with) and by the conformance suite.
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

venv="$("$here/venv.sh")"

cd "$here"
if $lint; then
    # Their caches live with the venv, not in the checkout.
    export RUFF_CACHE_DIR="$venv/ruff-cache" MYPY_CACHE_DIR="$venv/mypy-cache"
    "$venv/bin/ruff" check
    "$venv/bin/ruff" format --check
    exec "$venv/bin/mypy"
fi
exec "$venv/bin/python" -m pytest "$@"
