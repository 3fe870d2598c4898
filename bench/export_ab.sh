#!/usr/bin/env bash
# One export under two settings, alternating:
#   EXPORT_ENV_A="NAME=value …" EXPORT_ENV_B="…" bench/export_ab.sh [rows=1000000] [pairs=3] [format=csv]
# One release build, one seeded database on the bench's own cluster; the
# shipped sales export with side A's settings, then side B's, each in a
# fresh process (rows per second and peak memory from errand-loadgen).
# E.g. what sealing the local backend's files costs (issue 44):
#   EXPORT_ENV_A=ERRAND_STORAGE__SEAL_FILES=false EXPORT_ENV_B=ERRAND_STORAGE__SEAL_FILES=true bench/export_ab.sh
# and what reading in transactions of at most a second costs beside one read:
#   EXPORT_ENV_A=ERRAND_JOB_TYPES__EXPORT_SALES_REPORT__EXPORT__MAX_TRANSACTION=never \
#   EXPORT_ENV_B=ERRAND_JOB_TYPES__EXPORT_SALES_REPORT__EXPORT__MAX_TRANSACTION=1s bench/export_ab.sh 5000000 2
# Build first: cargo build --release --features bench --bin errand --bin errand-loadgen
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
rows=${1:-1000000} pairs=${2:-3} format=${3:-csv}
SECRET=bench-secret-that-is-long-enough-0123456789
bin=${CARGO_TARGET_DIR:-target}/release
errand_bench_database_server
unset DATABASE_URL
base=${ERRAND_PG_SERVER%/postgres}
db=errand_export_ab_$$
dir=$(mktemp -d)
errand_pid=""
cleanup() {
  if [ -n "$errand_pid" ]; then kill -TERM "$errand_pid" 2>/dev/null; wait "$errand_pid" 2>/dev/null || true; fi
  psql "$base/postgres" -Xqc "DROP DATABASE IF EXISTS $db WITH (FORCE)" 2>/dev/null || true
  rm -rf "$dir"
  errand_stop_private_cluster
}
trap cleanup EXIT
psql "$base/postgres" -Xqc "CREATE DATABASE $db"
ERRAND_DATABASE__URL="$base/$db?sslmode=disable" ERRAND_AUTH__JWT_SECRET=$SECRET "$bin/errand" migrate >/dev/null
ERRAND_DATABASE__URL="$base/$db?sslmode=disable" "$bin/errand" demo seed --tenants 1 --rows "$rows" >/dev/null
# Side $1 (A or B): one export with its settings, timed by the load generator.
run() {
  local fifo line envs
  if [ "$1" = A ]; then read -ra envs <<<"${EXPORT_ENV_A:-}"; else read -ra envs <<<"${EXPORT_ENV_B:-}"; fi
  fifo=$(mktemp -u); mkfifo "$fifo"
  env RUST_LOG=warn ERRAND_DATABASE__URL="$base/$db?sslmode=disable" ERRAND_HTTP__BIND=127.0.0.1:0 \
    ERRAND_AUTH__JWT_SECRET=$SECRET ERRAND_STORAGE__LOCAL_DIR="$dir" \
    ERRAND_RATE_LIMITS__PER_USER=unlimited ERRAND_RATE_LIMITS__CREATES_PER_USER=unlimited "${envs[@]}" \
    "$bin/errand" serve >"$fifo" &
  errand_pid=$!
  read -r line <"$fifo"; rm -f "$fifo"
  line=$("$bin/errand-loadgen" --url "http://${line##* }" --secret "$SECRET" --run-id "seal-$1-$RANDOM" \
    --phases export --export-format "$format" --server-pid "$errand_pid")
  kill -TERM "$errand_pid"; wait "$errand_pid" 2>/dev/null || true; errand_pid=""
  echo "$1 ${envs[*]} $line"
  rm -rf "${dir:?}"/*
}
for ((i = 1; i <= pairs; i++)); do
  run A
  run B
done
