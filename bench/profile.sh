#!/usr/bin/env bash
# Where a drain's time goes (issue 42: "say what binds it, with the profile
# that shows it"):
#   bench/profile.sh <errand> [jobs=40000] [tenants=32]
# One drain of <jobs> no-op jobs over <tenants> tenants (bench/drain.sh's
# backlog), one process at the shipped defaults, on the bench's own cluster
# with pg_stat_statements loaded (every nested statement tracked), under
# `perf record` of the whole machine (software clock: the counters of this
# kind of machine are not offered to guests). Prints the drain's line, the
# statements that took longest (calls, ms a call, rows a call, buffers a
# call; planning apart), the CPU of errand and of PostgreSQL a job, and each process's
# hottest symbols. PROFILE_WHAT=create profiles creation instead:
# errand-loadgen's <jobs> requests from 32 clients to an API-only process
# (as `AB_WHAT=create bench/ab.sh`; build errand-loadgen too). The profile stays in $PROFILE_DIR (default
# /tmp/errand-profile) for `perf report -i`. PROFILE_SQL: SQL run on the
# database once the backlog is in, before errand starts (a change tried
# without a build, e.g. a function's settings); PROFILE_CONFIG: the
# config file (default config.toml; an older build's own, for one that
# does not know today's keys).
# Build first: cargo build --release --features bench --bin errand
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
errand=$1 jobs=${2:-40000} tenants=${3:-32} what=${PROFILE_WHAT:-drain} config=${PROFILE_CONFIG:-config.toml}
out=${PROFILE_DIR:-/tmp/errand-profile}
mkdir -p "$out"
command -v perf >/dev/null || { echo "bench/profile.sh: needs perf (Debian's linux-perf)" >&2; exit 1; }
SECRET=bench-secret-that-is-long-enough-0123456789
errand_bench_statements_server -c pg_stat_statements.track_planning=on
source bench/drain.sh
db=errand_profile_$$ errand_pid="" perf_pid=""
cleanup() {
  if [ -n "$perf_pid" ]; then kill -INT "$perf_pid" 2>/dev/null; wait "$perf_pid" 2>/dev/null || true; fi
  if [ -n "$errand_pid" ]; then kill -TERM "$errand_pid" 2>/dev/null; wait "$errand_pid" 2>/dev/null || true; fi
  psql "$base/postgres" -Xqc "DROP DATABASE IF EXISTS $db WITH (FORCE)" 2>/dev/null || true
  errand_stop_private_cluster
}
trap cleanup EXIT
envs=(RUST_LOG=warn "ERRAND_DATABASE__URL=$base/$db?sslmode=disable" "ERRAND_AUTH__JWT_SECRET=$SECRET")
psql "$base/postgres" -Xqc "CREATE DATABASE $db"
env "${envs[@]}" "$errand" --config "$config" migrate >/dev/null
if [ "$what" = drain ]; then errand_drain_insert "$base/$db" "$jobs" "$tenants" noop '{}'; fi
if [ -n "${PROFILE_SQL:-}" ]; then psql "$base/$db" -Xqc "$PROFILE_SQL"; fi
psql "$base/postgres" -XAtqc "SELECT pg_stat_statements_reset()" >/dev/null
pg0=$(errand_postgres_ticks)
perf record -F 499 -a -g -e cpu-clock -o "$out/perf.data" -- sleep 3600 >/dev/null 2>"$out/perf.log" &
perf_pid=$!
if [ "$what" = drain ]; then
  started=$(psql "$base/$db" -XAtqc "SELECT clock_timestamp()")
  env "${envs[@]}" ERRAND_HTTP__BIND=127.0.0.1:0 "$errand" --config "$config" serve >/dev/null 2>&1 &
  errand_pid=$!
  line=$(errand_drain_timed "$base/$db" "$started" "errand")
else
  fifo=$(mktemp -u); mkfifo "$fifo"
  env "${envs[@]}" ERRAND_WORKERS__GLOBAL_LIMIT=0 ERRAND_HTTP__BIND=127.0.0.1:0 ERRAND_RATE_LIMITS__PER_USER=unlimited \
    ERRAND_RATE_LIMITS__CREATES_PER_USER=unlimited ERRAND_RATE_LIMITS__PER_TENANT=unlimited \
    "$errand" --config "$config" serve >"$fifo" 2>/dev/null &
  errand_pid=$!
  read -r line <"$fifo"; rm -f "$fifo"
  line=$("${CARGO_TARGET_DIR:-target}/release/errand-loadgen" --url "http://${line##* }" --secret "$SECRET" \
    --run-id "profile-$$" --phases create --requests "$jobs")
fi
kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true; perf_pid=""
ticks=$(errand_process_ticks "$errand_pid"); pg1=$(errand_postgres_ticks)
kill -TERM "$errand_pid"; wait "$errand_pid" 2>/dev/null || true; errand_pid=""
echo "$line errand_cpu_us_per_job=$((ticks * 10000 / jobs)) postgres_cpu_us_per_job=$(((pg1 - pg0) * 10000 / jobs))"
echo "== statements, longest first (nested ones included: a function's statements are inside its own line)"
psql "$base/postgres" -XAF' ' -c "
  SELECT calls, round((total_exec_time / greatest(calls, 1))::numeric, 3) AS ms_a_call,
         round((total_plan_time / greatest(calls, 1))::numeric, 3) AS plan_ms_a_call,
         round(total_exec_time * 1000 / $jobs) AS us_a_job_or_request, rows / greatest(calls, 1) AS rows_a_call,
         shared_blks_hit / greatest(calls, 1) AS buffers_a_call, toplevel,
         left(regexp_replace(query, '\s+', ' ', 'g'), 90) AS statement
  FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$db')
  ORDER BY total_exec_time DESC LIMIT 25"
echo "== the machine's samples by command"
perf report -i "$out/perf.data" --no-children --sort comm --stdio -g none 2>/dev/null | grep -E '^ +[0-9.]+%' | head -8 || true
for comm in "$(basename "$errand")" postgres; do
  echo "== $comm: hottest symbols (self, % of its samples)"
  perf report -i "$out/perf.data" --comm "$comm" --no-children --sort symbol --stdio -g none 2>/dev/null \
    | grep -E '^ +[0-9.]+%' | head -25 || true
done
