#!/usr/bin/env bash
# Runs the worker conformance suite against one worker package's adapter:
#   clients/conformance/run.sh <python|typescript> [pytest arguments]
# Needs ERRAND_BIN (the errand binary) and DATABASE_URL (a PostgreSQL server
# this user may create databases on; each test makes its own).
# `clients/conformance/run.sh --lint` checks the suite's own Python instead
# (ruff and mypy, as pyproject.toml here says; no errand needed).
#
# The suite is pytest, run in the Python package's virtualenv (its venv.sh)
# with the Python package's tests/harness.py on the path: one harness starts
# errand for both suites. The package chosen only changes the adapter
# started (README.md: the contract between suite and adapter).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
package=${1:-}
shift || true
venv="$("$repo/clients/python/venv.sh")"
if [ "$package" = --lint ]; then
    cd "$here"
    export RUFF_CACHE_DIR="$venv/ruff-cache-conformance" MYPY_CACHE_DIR="$venv/mypy-cache-conformance"
    "$venv/bin/ruff" check
    "$venv/bin/ruff" format --check
    exec "$venv/bin/mypy"
fi
: "${ERRAND_BIN:?set ERRAND_BIN to the errand binary}"
: "${DATABASE_URL:?set DATABASE_URL to a PostgreSQL server the tests may create databases on}"

case "$package" in
    python)
        adapter="[\"$venv/bin/python\", \"$repo/clients/python/conformance_adapter.py\"]"
        ;;
    typescript)
        "$repo/clients/typescript/run-tests.sh" --build
        adapter="[\"node\", \"$repo/clients/typescript/dist/conformance/adapter.js\"]"
        ;;
    *)
        echo "usage: clients/conformance/run.sh <python|typescript|--lint> [pytest arguments]" >&2
        exit 2
        ;;
esac

cd "$here"
# No __pycache__ left in the checkout (harness.py is imported from clients/python/tests).
export PYTHONDONTWRITEBYTECODE=1
export ERRAND_CONFORMANCE_ADAPTER=$adapter ERRAND_CONFORMANCE_PACKAGE=$package
PYTHONPATH="$repo/clients/python/tests" exec "$venv/bin/python" -m pytest "$@"
