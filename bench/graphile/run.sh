# graphile-worker, the peer scripts/bench compares errand's drain with.
# Meant to be sourced (after scripts/lib.sh); defines
#   errand_bench_graphile <database-url> <jobs>
# which installs the pinned graphile-worker (bench/graphile/package-lock.json)
# under the tools cache, then runs bench/graphile/drain.mjs on that database
# (fresh and empty: it runs graphile-worker's migrations there) and prints its
# line: graphile-worker jobs=<N> seconds=<S> jobs_per_s=<R>

ERRAND_BENCH_GRAPHILE_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
declare -F errand_log >/dev/null || errand_log() { printf 'errand: %s\n' "$*" >&2; }

errand_bench_graphile() {
  local url=$1 jobs=$2
  local tools=${ERRAND_TOOLS_DIR:-$HOME/.cache/errand-tools}
  local src=$ERRAND_BENCH_GRAPHILE_SRC lock_hash dir
  if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
    errand_log "node and npm are needed to run graphile-worker (the drain benchmark's peer): apt-get install nodejs npm"
    return 1
  fi
  lock_hash=$(sha256sum "$src/package-lock.json" | cut -c1-12)
  dir="$tools/graphile-$lock_hash"
  if [ ! -x "$dir/node_modules/.bin/graphile-worker" ]; then
    errand_log "installing graphile-worker into $dir"
    mkdir -p "$dir"
    cp "$src/package.json" "$src/package-lock.json" "$dir/"
    (cd "$dir" && npm ci --no-audit --no-fund --silent) || { errand_log "npm ci of graphile-worker failed"; return 1; }
  fi
  cp "$src/drain.mjs" "$dir/"
  (cd "$dir" && node drain.mjs "$url" "$jobs")
}
