#!/usr/bin/env bash
# A/B of two errand binaries, alternating (the machine is noisy: compare
# within one run only):
#   bench/ab.sh <errand-A> <errand-B> [pairs=3] [jobs=40000]
# AB_WHAT=drain (the default): each drain on a fresh database migrated by the
# binary under test, <jobs> no-op jobs over AB_TENANTS tenants (default 32; bench/drain.sh's
# backlog), one process at the shipped defaults. Prints jobs/s, the commits
# it took, and the CPU seconds of errand and of the PostgreSQL backends,
# which tell whether the drain was bound by CPU or by the latency of its
# pipeline.
# AB_WHAT=through: the same requests with the jobs run (see through()).
# AB_WHAT=create: creation through the API, an API-only process (the jobs
# wait), errand-loadgen's create phase with <jobs> requests from 32 clients
# (build it first: cargo build --release --features bench --bin errand-loadgen),
# with the CPU per request of errand and of the PostgreSQL backends.
# Each side runs with its own config.toml and settings: AB_CONFIG_A/B (default
# ./config.toml), AB_ENV_A/B (NAME=value words, e.g. turning rate limits off
# for a binary that has them), and AB_SQL_A/B: SQL run on the database once
# migrated (a drain's: once its backlog is in), before errand starts (e.g.
# webhook endpoints for every tenant of the backlog). E.g. the previous commit's binary:
#   git worktree add /tmp/old HEAD~1 && (cd /tmp/old && cargo build --release --bin errand)
#   AB_CONFIG_A=/tmp/old/config.toml bench/ab.sh $CARGO_TARGET_DIR/release/errand-old ...
# (copy the old binary aside first: both worktrees build into one target directory).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
a=$1 b=$2 pairs=${3:-3} jobs=${4:-40000}
SECRET=bench-secret-that-is-long-enough-0123456789
errand_bench_database_server
# errand reads DATABASE_URL before its own variables: this run's databases are its own.
unset DATABASE_URL
base=${ERRAND_PG_SERVER%/postgres}
source bench/drain.sh
db=errand_ab_$$
errand_pid=""
cleanup() {
  if [ -n "$errand_pid" ]; then kill -TERM "$errand_pid" 2>/dev/null; wait "$errand_pid" 2>/dev/null || true; fi
  psql "$base/postgres" -Xqc "DROP DATABASE IF EXISTS $db WITH (FORCE)" 2>/dev/null || true
  errand_stop_private_cluster
}
trap cleanup EXIT
commits() { psql "$base/$db" -XAtqc "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"; }
# Side $1's config file and settings: sets cfg and envs.
side() {
  if [ "$1" = A ]; then cfg=${AB_CONFIG_A:-config.toml}; read -ra envs <<<"${AB_ENV_A:-}"
  else cfg=${AB_CONFIG_B:-config.toml}; read -ra envs <<<"${AB_ENV_B:-}"; fi
  # sslmode=disable: a local server, as before errand spoke TLS (an older binary reads it too).
  envs+=(RUST_LOG=warn "ERRAND_DATABASE__URL=$base/$db?sslmode=disable" "ERRAND_AUTH__JWT_SECRET=$SECRET")
}
# Side $1's SQL (AB_SQL_A/B), if any, on the database under test.
side_sql() {
  local sql
  if [ "$1" = A ]; then sql=${AB_SQL_A:-}; else sql=${AB_SQL_B:-}; fi
  if [ -n "$sql" ]; then psql "$base/$db" -Xqc "$sql"; fi
}
create() {
  local errand=$1 label=$2 fifo line cfg envs pg0 pg1 ticks
  psql "$base/postgres" -Xqc "CREATE DATABASE $db"
  side "$label"
  env "${envs[@]}" "$errand" --config "$cfg" migrate >/dev/null
  side_sql "$label"
  fifo=$(mktemp -u); mkfifo "$fifo"
  env "${envs[@]}" ERRAND_WORKERS__GLOBAL_LIMIT=0 ERRAND_HTTP__BIND=127.0.0.1:0 "$errand" --config "$cfg" serve >"$fifo" 2>/dev/null &
  errand_pid=$!
  read -r line <"$fifo"; rm -f "$fifo"
  pg0=$(errand_postgres_ticks)
  line=$("${CARGO_TARGET_DIR:-target}/release/errand-loadgen" --url "http://${line##* }" --secret "$SECRET" \
    --run-id "ab-$label-$RANDOM" --phases create --requests "$jobs")
  ticks=$(errand_process_ticks "$errand_pid"); pg1=$(errand_postgres_ticks)
  kill -TERM "$errand_pid"; wait "$errand_pid" 2>/dev/null || true; errand_pid=""
  # CPU per request (µs) steadies a comparison that throughput alone, on a noisy machine, does not.
  echo "$label $line errand_cpu_us_per_req=$((ticks * 10000 / jobs)) postgres_cpu_us_per_req=$(((pg1 - pg0) * 10000 / jobs))"
  psql "$base/postgres" -Xqc "DROP DATABASE $db WITH (FORCE)"
}
# Creation and running together: a process with workers, <jobs> requests
# from 32 clients and their jobs run; from the first request to the last
# job's end (the loadgen's create and wait phases). What a drain of a
# backlog inserted by SQL cannot measure: params sealed as they are
# recorded, then opened as they are claimed.
through() {
  local errand=$1 label=$2 fifo line cfg envs t0 t1
  psql "$base/postgres" -Xqc "CREATE DATABASE $db"
  side "$label"
  env "${envs[@]}" "$errand" --config "$cfg" migrate >/dev/null
  side_sql "$label"
  fifo=$(mktemp -u); mkfifo "$fifo"
  env "${envs[@]}" ERRAND_HTTP__BIND=127.0.0.1:0 "$errand" --config "$cfg" serve >"$fifo" 2>/dev/null &
  errand_pid=$!
  read -r line <"$fifo"; rm -f "$fifo"
  t0=$(date +%s%N)
  line=$("${CARGO_TARGET_DIR:-target}/release/errand-loadgen" --url "http://${line##* }" --secret "$SECRET" \
    --run-id "ab-$label-$RANDOM" --phases create,wait --requests "$jobs")
  t1=$(date +%s%N)
  kill -TERM "$errand_pid"; wait "$errand_pid" 2>/dev/null || true; errand_pid=""
  echo "$label $line through_jobs_per_s=$((jobs * 1000000000 / (t1 - t0)))"
  psql "$base/postgres" -Xqc "DROP DATABASE $db WITH (FORCE)"
}
# CPU ticks (1/100 s) as seconds, e.g. 123 -> 1.23.
seconds() { printf '%d.%02d' $(($1 / 100)) $(($1 % 100)); }
drain() {
  local errand=$1 label=$2 pg0 pg1 x0 x1 started ticks line cfg envs
  psql "$base/postgres" -Xqc "CREATE DATABASE $db"
  side "$label"
  env "${envs[@]}" "$errand" --config "$cfg" migrate >/dev/null
  errand_drain_insert "$base/$db" "$jobs" "${AB_TENANTS:-32}" noop '{}'
  side_sql "$label"
  pg0=$(errand_postgres_ticks); x0=$(commits)
  started=$(psql "$base/$db" -XAtqc "SELECT clock_timestamp()")
  env "${envs[@]}" ERRAND_HTTP__BIND=127.0.0.1:0 "$errand" --config "$cfg" serve >/dev/null 2>&1 &
  errand_pid=$!
  line=$(errand_drain_timed "$base/$db" "$started" "$label")
  ticks=$(errand_process_ticks "$errand_pid")
  pg1=$(errand_postgres_ticks); x1=$(commits)
  kill -TERM "$errand_pid"; wait "$errand_pid" 2>/dev/null || true; errand_pid=""
  echo "$line commits=$((x1 - x0)) errand_cpu_s=$(seconds "$ticks") postgres_cpu_s=$(seconds $((pg1 - pg0)))"
  psql "$base/postgres" -Xqc "DROP DATABASE $db WITH (FORCE)"
}
what=${AB_WHAT:-drain}
for ((i = 1; i <= pairs; i++)); do
  "$what" "$a" "A"
  "$what" "$b" "B"
done
