#!/usr/bin/env bash
# Runs the TypeScript client's tests against a real errand; or, with --lint,
# its checks instead; or, with --generate, writes src/generated/openapi.ts afresh.
#
# Tests: need ERRAND_BIN (the errand binary to test against) and DATABASE_URL
# (a PostgreSQL server this user may create databases on; each test makes its
# own, a copy of a template migrated once per run). They compile the package
# and its tests with tsc into dist/ (gitignored) and run them with Node's test
# runner; extra arguments go to `node --test`, e.g.
# `clients/typescript/run-tests.sh --test-name-pattern upload`.
#
# `--lint` (no other arguments) needs neither: tsc --noEmit (strict, over
# src/, tests/, scripts/ and conformance/) and Biome (lint and formatting, as
# biome.json says; to mend formatting: node_modules/.bin/biome check --write).
#
# `--build` (needs neither): compiles into dist/ only (the conformance
# suite's adapter is dist/conformance/adapter.js).
#
# `--generate` (needs both): starts errand with the repository's config.toml,
# reads GET /openapi.json and writes src/generated/openapi.ts with
# openapi-typescript; a test fails while the committed file differs.
#
# The dev tools (package.json, pinned by package-lock.json) are installed by
# scripts/lib.sh's errand_npm_tool under ${ERRAND_TOOLS_DIR:-~/.cache/errand-tools},
# once per lock file, and linked here as node_modules (gitignored). The
# package itself has no runtime dependency.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
mode=test
case "${1:-}" in
    --lint | --generate | --build)
        mode=${1#--}
        shift
        if [ "$#" -gt 0 ]; then
            echo "run-tests.sh: --$mode takes no other arguments" >&2
            exit 2
        fi
        ;;
esac
if [ "$mode" = test ] || [ "$mode" = generate ]; then
    : "${ERRAND_BIN:?set ERRAND_BIN to the errand binary}"
    : "${DATABASE_URL:?set DATABASE_URL to a PostgreSQL server the tests may create databases on}"
fi

# shellcheck source=../../scripts/lib.sh
source "$repo/scripts/lib.sh"
tools=$(cd "$repo" && errand_npm_tool typescript-client clients/typescript node_modules/.bin/tsc \
    "the TypeScript client's checks and tests")
# A node_modules of the developer's own (npm ci here) is left alone.
if [ -L "$here/node_modules" ] || [ ! -e "$here/node_modules" ]; then
    ln -sfn "$tools/node_modules" "$here/node_modules"
fi

cd "$here"
if [ "$mode" = lint ]; then
    node_modules/.bin/tsc -p tsconfig.json --noEmit
    exec node_modules/.bin/biome ci .
fi

# A fresh build: a test file removed from tests/ must not keep running from dist/.
rm -rf dist
node_modules/.bin/tsc -p tsconfig.json
if [ "$mode" = build ]; then
    exit 0
fi
if [ "$mode" = generate ]; then
    exec node dist/scripts/generate-openapi.js
fi

# The template every test's database copies (tests/harness.ts), dropped on the way out.
template="errand_tsc_tpl_$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
database_url() { node -e 'const u = new URL(process.env.DATABASE_URL); u.pathname = "/" + process.argv[1]; console.log(u.href)' "$1"; }
psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -qc "CREATE DATABASE \"$template\"" >/dev/null
trap 'psql "$DATABASE_URL" -qc "DROP DATABASE IF EXISTS \"$template\" WITH (FORCE)" >/dev/null' EXIT
if ! migrated=$(env -u DATABASE_URL ERRAND_DATABASE__URL="$(database_url "$template")" \
    "$ERRAND_BIN" migrate --config "$repo/config.toml" 2>&1); then
    printf 'errand migrate failed:\n%s\n' "$migrated" >&2
    exit 1
fi
export ERRAND_TEST_TEMPLATE_DB=$template

# Two test files at once: most of a test's time is errand's lease and retry timing, not CPU.
node --test --test-concurrency="${ERRAND_TS_TEST_CONCURRENCY:-2}" "$@" dist/tests/*.test.js
