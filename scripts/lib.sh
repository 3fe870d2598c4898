# Shared by scripts/run and scripts/test: find or start a PostgreSQL server.
#
# errand_database_server sets ERRAND_PG_SERVER to a URL of a reachable server
# (without a database name), trying in order:
#   1. DATABASE_URL, when given (its database part is replaced by callers);
#   2. a server on 127.0.0.1:5432 that lets user postgres in;
#   3. a private throw-away cluster made with the system's initdb/pg_ctl,
#      on port ${ERRAND_PG_PORT:-55432}, stopped and removed by errand_stop_private_cluster.
# ERRAND_PG=private skips 1 and 2; ERRAND_PG_PROFILE picks its settings
# (errand_pg_settings), and benchmarks use errand_bench_database_server.

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/errand-target}

ERRAND_PG_DIR=${ERRAND_PG_DIR:-${TMPDIR:-/tmp}/errand-pg-$(id -u)-$$}
ERRAND_PG_PORT=${ERRAND_PG_PORT:-55432}
ERRAND_PG_STARTED=""

errand_log() { printf 'errand: %s\n' "$*" >&2; }

# CPU ticks (user and system, 1/100 s) process <pid> has used; fails if it
# is gone.
errand_process_ticks() {
  local fields
  fields=$(cut -d' ' -f14,15 "/proc/$1/stat" 2>/dev/null) || return 1
  echo $((${fields% *} + ${fields#* }))
}

# CPU ticks (user and system) of the PostgreSQL processes running now: the
# benchmarks read it before and after (a drain's backends are still running).
errand_postgres_ticks() {
  local total=0 pid ticks
  for pid in $(pgrep -x postgres); do
    ticks=$(errand_process_ticks "$pid") || continue
    total=$((total + ticks))
  done
  echo "$total"
}

errand_pg_bin() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  if [ -z "$dir" ]; then
    errand_log "no PostgreSQL server binaries found (install Debian's postgresql package) and no DATABASE_URL given"
    return 1
  fi
  printf '%s' "$dir"
}

errand_can_connect() {
  command -v psql >/dev/null 2>&1 || return 1
  psql "$1" -XAtqc 'SELECT 1' >/dev/null 2>&1
}

# A private cluster's settings. Quick (the default) for tests and
# `scripts/run`: nothing there must outlive a crash of the machine, so no
# fsync. Production (ERRAND_PG_PROFILE=production) for benchmarks: as a
# deployment runs PostgreSQL, autovacuum on, every commit synced, full page
# writes; BENCHMARKS.md states these settings.
errand_pg_settings() {
  if [ "${ERRAND_PG_PROFILE:-quick}" = production ]; then
    printf '%s' "-c fsync=on -c synchronous_commit=on -c full_page_writes=on -c autovacuum=on -c shared_buffers=512MB"
  else
    printf '%s' "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  fi
}

# ERRAND_PG_EXTRA_SETTINGS: more `-c name=value` words for the server (e.g.
# a benchmark's pg_stat_statements).
errand_start_private_cluster() {
  local pgbin as_pg=()
  pgbin=$(errand_pg_bin) || return 1
  # initdb and postgres refuse to run as root.
  if [ "$(id -u)" = 0 ]; then as_pg=(runuser -u postgres --); fi
  mkdir -p "$ERRAND_PG_DIR"
  [ "$(id -u)" = 0 ] && chown postgres: "$ERRAND_PG_DIR"
  errand_log "starting a private PostgreSQL cluster in $ERRAND_PG_DIR on port $ERRAND_PG_PORT"
  "${as_pg[@]}" "$pgbin/initdb" -D "$ERRAND_PG_DIR/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync >"$ERRAND_PG_DIR/initdb.log" 2>&1 \
    || { errand_log "initdb failed: see $ERRAND_PG_DIR/initdb.log"; return 1; }
  "${as_pg[@]}" "$pgbin/pg_ctl" -D "$ERRAND_PG_DIR/data" -l "$ERRAND_PG_DIR/server.log" -w -t 60 start -o \
    "-p $ERRAND_PG_PORT -k $ERRAND_PG_DIR -c listen_addresses=127.0.0.1 -c max_connections=300 $(errand_pg_settings) ${ERRAND_PG_EXTRA_SETTINGS:-}" >/dev/null \
    || { errand_log "the private cluster did not start: see $ERRAND_PG_DIR/server.log"; return 1; }
  ERRAND_PG_STARTED=1
}

errand_stop_private_cluster() {
  [ -n "$ERRAND_PG_STARTED" ] || return 0
  local pgbin as_pg=()
  pgbin=$(errand_pg_bin) || return 0
  if [ "$(id -u)" = 0 ]; then as_pg=(runuser -u postgres --); fi
  "${as_pg[@]}" "$pgbin/pg_ctl" -D "$ERRAND_PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$ERRAND_PG_DIR"
  ERRAND_PG_STARTED=""
}

# Sets ERRAND_PG_SERVER to a URL of the server, with the database `postgres`.
errand_database_server() {
  if [ "${ERRAND_PG:-}" != private ] && [ -n "${DATABASE_URL:-}" ]; then
    ERRAND_PG_SERVER=$DATABASE_URL
  elif [ "${ERRAND_PG:-}" != private ] && errand_can_connect "postgres://postgres@127.0.0.1:5432/postgres"; then
    ERRAND_PG_SERVER="postgres://postgres@127.0.0.1:5432/postgres"
  else
    errand_start_private_cluster || return 1
    ERRAND_PG_SERVER="postgres://postgres@127.0.0.1:$ERRAND_PG_PORT/postgres"
  fi
  errand_log "using PostgreSQL at ${ERRAND_PG_SERVER%%\?*}"
}

# The bench's own cluster (errand_bench_database_server) with
# pg_stat_statements loaded, every nested statement tracked ("$@": more
# settings, e.g. -c pg_stat_statements.track_planning=on), and its extension
# made; sets base to the server's URL without a database. For bench/held.sh
# and bench/profile.sh.
errand_bench_statements_server() {
  ERRAND_PG_EXTRA_SETTINGS="-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all $*"
  export ERRAND_PG_EXTRA_SETTINGS
  errand_bench_database_server
  # errand reads DATABASE_URL before its own variables: the bench's databases are its own.
  unset DATABASE_URL
  base=${ERRAND_PG_SERVER%/postgres}
  psql "$base/postgres" -Xqc "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null \
    || { echo "$0: pg_stat_statements must be loaded (shared_preload_libraries)" >&2; exit 1; }
}

# Benchmarks' server: a private cluster of their own with the production
# settings (above), on a port of its own, so that errand and its peers are
# measured as they would run; BENCH_PG=shared measures on the server
# errand_database_server finds instead (the machine's own, which may run
# with autovacuum off, as this one's CI settings do).
errand_bench_database_server() {
  if [ "${BENCH_PG:-own}" != shared ]; then
    ERRAND_PG=private ERRAND_PG_PROFILE=production ERRAND_PG_PORT=${ERRAND_BENCH_PG_PORT:-55433}
    export ERRAND_PG ERRAND_PG_PROFILE ERRAND_PG_PORT
  fi
  errand_database_server
}

# Installs an npm package pinned by <dir>/package.json and package-lock.json
# under the tools cache (once per lock file) and prints where it went:
#   errand_npm_tool <name> <dir> <bin> [why]
# <bin> is a path inside the install that shows it is complete; [why] says
# what needs it, for the message when npm is missing.
errand_npm_tool() {
  local name=$1 src=$2 bin=$3 why=${4:-errand}
  local tools=${ERRAND_TOOLS_DIR:-$HOME/.cache/errand-tools}
  local dir
  if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
    errand_log "node and npm are needed to install $name ($why): apt-get install nodejs npm"
    return 1
  fi
  dir="$tools/$name-$(sha256sum "$src/package-lock.json" | cut -c1-12)"
  if [ ! -e "$dir/$bin" ]; then
    errand_log "installing $name into $dir"
    mkdir -p "$dir"
    cp "$src/package.json" "$src/package-lock.json" "$dir/"
    (cd "$dir" && npm ci --no-audit --no-fund --silent) || { errand_log "npm ci of $name failed"; return 1; }
  fi
  printf '%s\n' "$dir"
}

# Installs the pinned maildev (tools/maildev/package-lock.json) under the tools
# cache and exports ERRAND_TEST_MAILDEV, the SMTP server the email tests start.
errand_install_maildev() {
  local dir
  dir=$(errand_npm_tool maildev tools/maildev node_modules/.bin/maildev "the SMTP server of the email tests") || return 1
  export ERRAND_TEST_MAILDEV="$dir/node_modules/.bin/maildev"
}

# Installs Debian's <package> at <version> when the mirror still has it, else
# its current version (Debian replaces builds with security releases, so an
# exact pin would stop installing), as root; <what> says what needs it.
errand_apt_install() {
  local package=$1 version=$2 what=$3
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    errand_log "$what needs $package: apt-get install $package (as root)"
    return 1
  fi
  errand_log "installing $package from apt (once)"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package=$version" >/dev/null 2>&1 ||
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null ||
    { errand_log "apt-get install $package failed"; return 1; }
}

# Chromium and the pinned playwright-core that drives it, for the browser
# tests (tests/browser). Chromium is Debian's package: the version below when
# the mirror still has it, else the current one (Debian replaces browser
# builds with each security release, so an exact pin would stop installing).
# Exports ERRAND_TEST_CHROMIUM and ERRAND_TEST_PLAYWRIGHT (the npm install).
ERRAND_CHROMIUM_VERSION=156.0.8078.114-1~deb12u1
errand_install_browser() {
  if [ -z "${ERRAND_TEST_CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1; then
    errand_apt_install chromium "$ERRAND_CHROMIUM_VERSION" "the browser tests" || return 1
  fi
  export ERRAND_TEST_CHROMIUM=${ERRAND_TEST_CHROMIUM:-$(command -v chromium)}
  ERRAND_TEST_PLAYWRIGHT=$(errand_npm_tool playwright-core tests/browser node_modules/playwright-core/package.json \
    "the browser tests") || return 1
  export ERRAND_TEST_PLAYWRIGHT
}

# PgBouncer (Debian's, this version when the mirror has it) for the tests of
# errand behind it. Exports ERRAND_TEST_PGBOUNCER. The package's own service
# is not started (no init runs here); the tests start their own.
ERRAND_PGBOUNCER_VERSION=1.18.0-1+deb12u1
errand_install_pgbouncer() {
  if [ -z "${ERRAND_TEST_PGBOUNCER:-}" ] && [ ! -x /usr/sbin/pgbouncer ]; then
    errand_apt_install pgbouncer "$ERRAND_PGBOUNCER_VERSION" "the PgBouncer tests" || return 1
  fi
  export ERRAND_TEST_PGBOUNCER=${ERRAND_TEST_PGBOUNCER:-/usr/sbin/pgbouncer}
}

# promtool (Debian's prometheus package, this version when the mirror has
# it) to check docs/prometheus/alerts.yml and run its unit tests. Exports
# ERRAND_TEST_PROMTOOL. The package's own Prometheus service is not started
# (no init runs here).
ERRAND_PROMETHEUS_VERSION=2.42.0+ds-5+deb12u1
errand_install_promtool() {
  if [ -z "${ERRAND_TEST_PROMTOOL:-}" ] && [ ! -x /usr/bin/promtool ]; then
    errand_apt_install prometheus "$ERRAND_PROMETHEUS_VERSION" "the alert rules' checks" || return 1
  fi
  export ERRAND_TEST_PROMTOOL=${ERRAND_TEST_PROMTOOL:-/usr/bin/promtool}
}

# Installs the packages pinned in <src>/requirements.txt into a virtualenv
# under the tools cache, one per requirements file's hash, unless <bin> is
# there already, and prints the virtualenv's folder; <why> says what needs it.
# A failed install leaves nothing behind, so the next run tries again.
errand_pip_tool() {
  local name=$1 src=$2 bin=$3 why=$4
  local tools=${ERRAND_TOOLS_DIR:-$HOME/.cache/errand-tools}
  local dir
  if ! command -v python3 >/dev/null 2>&1; then
    errand_log "python3 (with venv) is needed for $why: apt-get install python3 python3-venv"
    return 1
  fi
  dir="$tools/$name-$(sha256sum "$src/requirements.txt" | cut -c1-12)"
  if [ ! -x "$dir/$bin" ]; then
    errand_log "installing $name into $dir"
    rm -rf "$dir"
    python3 -m venv "$dir" || { errand_log "python3 -m venv failed: apt-get install python3-venv"; return 1; }
    "$dir/bin/pip" install --quiet --disable-pip-version-check -r "$src/requirements.txt" \
      || { rm -rf "$dir"; errand_log "pip install of $name failed"; return 1; }
  fi
  printf '%s\n' "$dir"
}

# Installs the pinned packages of the Web Push tests' push service stub
# (tools/pushstub/requirements.txt) and exports ERRAND_TEST_PUSH_PYTHON, the
# python that runs tools/pushstub/stub.py.
errand_install_pushstub() {
  local dir
  dir=$(errand_pip_tool pushstub tools/pushstub bin/python "the Web Push tests") || return 1
  export ERRAND_TEST_PUSH_PYTHON="$dir/bin/python"
}

# Installs the pinned schemathesis (tools/schemathesis/requirements.txt) and
# exports ERRAND_TEST_SCHEMATHESIS, the `st` command the API contract test
# runs against a real errand.
errand_install_schemathesis() {
  local dir
  dir=$(errand_pip_tool schemathesis tools/schemathesis bin/st "the API contract test") || return 1
  export ERRAND_TEST_SCHEMATHESIS="$dir/bin/st"
}

# The previous release, for the upgrade test (tests/api/upgrade.rs): its tag,
# and the commit the tag names (a clone may come without tags). Until a
# second release is tagged, main is tested against 0.1.0.
ERRAND_PREVIOUS_RELEASE=v0.1.0
ERRAND_PREVIOUS_RELEASE_COMMIT=0ab84b320da674d713c4633438c6cfbeba522ed2

# Builds the previous release's errand once (from the commit, exported with
# git archive, into a target dir of its own so that this checkout's build
# is not overwritten) and keeps it with its config.toml in the tools cache;
# exports ERRAND_TEST_PREVIOUS_RELEASE, that folder.
errand_build_previous_release() {
  local tag=$ERRAND_PREVIOUS_RELEASE commit=$ERRAND_PREVIOUS_RELEASE_COMMIT
  local tools=${ERRAND_TOOLS_DIR:-$HOME/.cache/errand-tools}
  local dir="$tools/errand-$tag-${commit:0:12}"
  local target=${ERRAND_RELEASE_TARGET_DIR:-$HOME/.cache/errand-release-target}
  if [ ! -x "$dir/errand" ]; then
    if ! git cat-file -e "$commit^{commit}" 2>/dev/null; then
      errand_log "the commit of $tag ($commit) is not in this clone: git fetch --unshallow, or fetch the tag"
      return 1
    fi
    local tagged
    if tagged=$(git rev-parse -q --verify "refs/tags/$tag^{commit}") && [ "$tagged" != "$commit" ]; then
      errand_log "tag $tag names $tagged, scripts/lib.sh says $commit: which is the release?"
      return 1
    fi
    local src
    src=$(mktemp -d)
    git archive "$commit" | tar -x -C "$src"
    errand_log "building errand $tag once, for the upgrade test (into $target)"
    if ! (cd "$src" && ERRAND_GIT_COMMIT=${commit:0:12} CARGO_TARGET_DIR=$target cargo build --quiet --bin errand); then
      rm -rf "$src"
      return 1
    fi
    rm -rf "$dir.part" && mkdir -p "$dir.part"
    cp "$target/debug/errand" "$src/config.toml" "$dir.part/"
    rm -rf "$src"
    # Renamed last: a build interrupted before leaves no folder that looks done.
    mv "$dir.part" "$dir"
  fi
  export ERRAND_TEST_PREVIOUS_RELEASE=$dir
}
