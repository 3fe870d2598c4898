# graphile-worker, the peer scripts/bench compares errand's drain with.
# Meant to be sourced (after scripts/lib.sh); defines
#   errand_bench_graphile <database-url> <jobs>
# which installs the pinned graphile-worker (bench/graphile/package-lock.json)
# under the tools cache (errand_npm_tool), then runs bench/graphile/drain.mjs
# on that database (fresh and empty: it runs graphile-worker's migrations
# there) and prints its line: graphile-worker jobs=<N> seconds=<S> jobs_per_s=<R>

ERRAND_BENCH_GRAPHILE_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

errand_bench_graphile() {
  local url=$1 jobs=$2 dir
  dir=$(errand_npm_tool graphile "$ERRAND_BENCH_GRAPHILE_SRC" node_modules/.bin/graphile-worker \
    "the drain benchmark's peer") || return 1
  cp "$ERRAND_BENCH_GRAPHILE_SRC/drain.mjs" "$dir/"
  (cd "$dir" && node drain.mjs "$url" "$jobs")
}
