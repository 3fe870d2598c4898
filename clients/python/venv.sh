#!/usr/bin/env bash
# Makes (once) the virtualenv the Python package's tests, linters and the
# worker conformance suite (clients/conformance) run in, and prints its folder.
#
# It lives in the tools cache, made once per pyproject.toml, tool versions and
# checkout: the package is installed editable (edits to its source need no
# reinstall), so a venv points at one checkout's source, and a clone elsewhere
# (CI's) must not reuse it.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"

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
printf '%s\n' "$venv"
