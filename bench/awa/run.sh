# awa, the second peer scripts/bench compares errand's drain with (beside
# graphile-worker): a PostgreSQL job queue with a Rust core, driven here from
# its Python SDK. Meant to be sourced (after scripts/lib.sh); defines
#   errand_bench_awa <database-url> <jobs>
# which installs the pinned awa-pg (bench/awa/requirements.txt) into a
# virtualenv under the tools cache (one per hash of that file; the system's
# python3 and pip make it), then runs bench/awa/drain.py with it on that
# database (fresh and empty: it runs awa's migrations there) and prints its line:
#   awa jobs=<N> seconds=<S> jobs_per_s=<R> busy_seconds=<B> busy_jobs_per_s=<Q> cpu_us_per_job=<U>
# with 10 workers on the queue (awa-pg's default for a queue, and
# graphile-worker's concurrency in its drain), or ERRAND_BENCH_AWA_WORKERS;
# and errand_bench_awa_versions, which prints "awa <v> on Python <v>".
# For the sustained-load benchmark (issue 42),
#   errand_bench_awa_sustained <database-url> <rate> <seconds> <out.csv>
# runs bench/awa/sustained.py the same way (on a fresh database: a paced
# producer of <rate> no-op jobs a second for <seconds>, the latency of each
# written to <out.csv>; see that file), and
#   errand_bench_awa_tables
# prints the tables to watch (schema-qualified, one line), for the sampler.

ERRAND_BENCH_AWA_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# Installs the pinned awa-pg (once per requirements.txt) and prints the virtualenv's path.
errand_bench_awa_env() {
  local tools=${ERRAND_TOOLS_DIR:-$HOME/.cache/errand-tools} dir
  if ! command -v python3 >/dev/null 2>&1; then
    errand_log "python3 (with venv) is needed to install awa (the drain benchmark's peer): apt-get install python3 python3-venv"
    return 1
  fi
  dir="$tools/awa-$(sha256sum "$ERRAND_BENCH_AWA_SRC/requirements.txt" | cut -c1-12)"
  if [ ! -f "$dir/.ready" ]; then
    errand_log "installing awa into $dir"
    rm -rf "$dir"
    python3 -m venv "$dir" || { errand_log "python3 -m venv failed: apt-get install python3-venv"; return 1; }
    "$dir/bin/pip" install --quiet --disable-pip-version-check -r "$ERRAND_BENCH_AWA_SRC/requirements.txt" \
      || { errand_log "pip install of awa failed"; return 1; }
    touch "$dir/.ready"
  fi
  printf '%s\n' "$dir"
}

errand_bench_awa() {
  local url=$1 jobs=$2 dir
  dir=$(errand_bench_awa_env) || return 1
  "$dir/bin/python" "$ERRAND_BENCH_AWA_SRC/drain.py" "$url" "$jobs" "${ERRAND_BENCH_AWA_WORKERS:-10}"
}

# The version pinned in bench/awa/requirements.txt and the system's Python
# (the virtualenv's), as "awa <v> on Python <v>".
errand_bench_awa_versions() {
  printf 'awa %s on Python %s\n' \
    "$(sed -n 's/^awa-pg==\(.*\)/\1/p' "$ERRAND_BENCH_AWA_SRC/requirements.txt")" \
    "$(python3 -c 'import platform; print(platform.python_version())' 2>/dev/null || echo unknown)"
}

errand_bench_awa_sustained() {
  local url=$1 rate=$2 seconds=$3 out=$4 dir
  mkdir -p "$(dirname "$out")"
  dir=$(errand_bench_awa_env) || return 1
  "$dir/bin/python" "$ERRAND_BENCH_AWA_SRC/sustained.py" "$url" "$rate" "$seconds" "$out" "${ERRAND_BENCH_AWA_WORKERS:-10}"
}

# The tables a job passes through and the ring state updated all the time
# (sustained.py says where it read that). The first seven are partitioned: sum
# their leaves, pg_partition_tree(<table>) where isleaf.
errand_bench_awa_tables() {
  echo "awa.ready_entries awa.ready_segments awa.ready_claim_attempt_batches awa.lease_claims" \
    "awa.lease_claim_closure_batches awa.receipt_completion_batches awa.done_entries" \
    "awa.queue_terminal_rollups awa.queue_ring_state awa.lease_ring_state awa.claim_ring_state awa.queue_claimer_state awa.queue_claimer_leases"
}
