#!/usr/bin/env bash
# Runs the Python worker's tests against a real errand.
#
# Needs ERRAND_BIN (the errand binary to test against) and DATABASE_URL (a
# PostgreSQL server this user may create databases on; each test makes its
# own). The virtualenv lives in the tools cache, made once per
# pyproject.toml and checkout: the package is installed editable (edits to
# its source need no reinstall), so a venv points at one checkout's source,
# and a clone elsewhere (CI's) must not reuse it. Extra arguments go to
# pytest, e.g. `clients/python/run-tests.sh -k upload`.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
: "${ERRAND_BIN:?set ERRAND_BIN to the errand binary}"
: "${DATABASE_URL:?set DATABASE_URL to a PostgreSQL server the tests may create databases on}"

# The test tools are pinned to exact versions; bump them here (the venv's key changes with them).
# standardwebhooks is the Standard Webhooks reference library: the webhook tests check errand's
# deliveries with it as well as with the package's own verify_webhook.
pytest_version="8.4.2"
standardwebhooks_version="1.1.0"
key="$( (cat "$here/pyproject.toml"; echo "pytest==$pytest_version standardwebhooks==$standardwebhooks_version $here") | sha256sum | cut -c1-12)"
venv="${ERRAND_TOOLS_DIR:-$HOME/.cache/errand-tools}/python-worker-$key"

if [ ! -f "$venv/.ready" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -e "$here" \
        "pytest==$pytest_version" "standardwebhooks==$standardwebhooks_version"
    # Written last: a venv whose install was interrupted is made again.
    touch "$venv/.ready"
fi

cd "$here"
exec "$venv/bin/python" -m pytest "$@"
