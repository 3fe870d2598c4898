#!/usr/bin/env bash
# What a snapshot held open by another client costs each of errand's
# statements (issue 42's open transaction, taken apart):
#   bench/held.sh <errand> [rate=400] [seconds=200] [hold=160]
# Two runs on fresh databases of the bench's own cluster (pg_stat_statements
# loaded, every nested statement tracked): errand-loadgen's paced producer
# at <rate> jobs/s for <seconds>, 32 clients; from 20 s in, for <hold>
# seconds, the first run leaves nothing open, the second a `pg_sleep` on
# errand's database (a statement running holds its snapshot, as an open
# transaction does). Each prints the statements that took longest over
# those <hold> seconds (calls, total and per call, buffers read a call) and
# the start latency over the whole run (each job's created_at to its
# started_at). Build first: cargo build --release --features bench --bin errand --bin errand-loadgen
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
errand=$1 rate=${2:-400} seconds=${3:-200} hold=${4:-160}
SECRET=bench-secret-that-is-long-enough-0123456789
errand_bench_statements_server
db="" errand_pid="" holder=""
cleanup() {
  if [ -n "$holder" ]; then kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null || true; fi
  if [ -n "$errand_pid" ]; then kill -TERM "$errand_pid" 2>/dev/null; wait "$errand_pid" 2>/dev/null || true; fi
  if [ -n "$db" ]; then psql "$base/postgres" -Xqc "DROP DATABASE IF EXISTS $db WITH (FORCE)" 2>/dev/null || true; fi
  errand_stop_private_cluster
}
trap cleanup EXIT
run() {
  local label=$1 fifo line url loadgen
  db=errand_held_$$_$label
  psql "$base/postgres" -Xqc "CREATE DATABASE $db"
  local envs=(RUST_LOG=warn "ERRAND_DATABASE__URL=$base/$db?sslmode=disable" "ERRAND_AUTH__JWT_SECRET=$SECRET"
    ERRAND_RATE_LIMITS__PER_USER=unlimited ERRAND_RATE_LIMITS__CREATES_PER_USER=unlimited
    ERRAND_RATE_LIMITS__PER_TENANT=unlimited)
  env "${envs[@]}" "$errand" --config config.toml migrate >/dev/null
  fifo=$(mktemp -u); mkfifo "$fifo"
  env "${envs[@]}" ERRAND_HTTP__BIND=127.0.0.1:0 "$errand" --config config.toml serve >"$fifo" 2>/dev/null &
  errand_pid=$!
  read -r line <"$fifo"; rm -f "$fifo"
  url="http://${line##* }"
  "${CARGO_TARGET_DIR:-target}/release/errand-loadgen" --url "$url" --secret "$SECRET" --run-id "held-$label-$$" \
    --phases paced --rate "$rate" --seconds "$seconds" >/dev/null &
  loadgen=$!
  sleep 20
  psql "$base/postgres" -XAtqc "SELECT pg_stat_statements_reset()" >/dev/null
  if [ "$label" = held ]; then psql "$base/$db" -XAtqc "SELECT pg_sleep($hold)" >/dev/null & holder=$!; fi
  sleep "$hold"
  echo "== $label: $rate jobs/s, statements over the $hold s from 20 s in"
  psql "$base/postgres" -XAF' ' -c "
    SELECT calls, round(total_exec_time) AS ms, round((total_exec_time / greatest(calls, 1))::numeric, 3) AS ms_a_call,
           shared_blks_hit / greatest(calls, 1) AS buffers_a_call, left(regexp_replace(query, '\s+', ' ', 'g'), 70) AS statement
    FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$db')
    ORDER BY total_exec_time DESC LIMIT 10"
  wait "$loadgen"
  if [ -n "$holder" ]; then wait "$holder" || true; holder=""; fi
  kill -TERM "$errand_pid"; wait "$errand_pid" 2>/dev/null || true; errand_pid=""
  psql "$base/$db" -XAtc "
    SELECT format('== %s: start latency jobs=%s p50=%sms p99=%sms max=%sms', '$label', count(*),
                  round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1),
                  round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 1), round(max(ms)::numeric, 1))
    FROM (SELECT extract(epoch FROM started_at - created_at) * 1000 AS ms FROM jobs WHERE started_at IS NOT NULL) s"
  psql "$base/postgres" -Xqc "DROP DATABASE $db WITH (FORCE)"; db=""
}
run free
run held
