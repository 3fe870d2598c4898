#!/usr/bin/env bash
# What sealing the local backend's files costs an export (issue 44):
#   bench/seal_files.sh [rows=1000000] [pairs=3] [format=csv]
# One release build, one seeded database on the bench's own cluster; the
# same export with storage.seal_files off (A) and on (B), alternating, each
# in a fresh process (rows per second and peak memory from errand-loadgen).
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
db=errand_seal_$$
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
# Side $1 (A: in clear, B: sealed): one export, timed by the load generator.
run() {
  local fifo line sealed
  if [ "$1" = A ]; then sealed=false; else sealed=true; fi
  fifo=$(mktemp -u); mkfifo "$fifo"
  RUST_LOG=warn ERRAND_DATABASE__URL="$base/$db?sslmode=disable" ERRAND_HTTP__BIND=127.0.0.1:0 \
    ERRAND_AUTH__JWT_SECRET=$SECRET ERRAND_STORAGE__LOCAL_DIR="$dir" ERRAND_STORAGE__SEAL_FILES=$sealed \
    ERRAND_RATE_LIMITS__PER_USER=unlimited ERRAND_RATE_LIMITS__CREATES_PER_USER=unlimited \
    "$bin/errand" serve >"$fifo" &
  errand_pid=$!
  read -r line <"$fifo"; rm -f "$fifo"
  line=$("$bin/errand-loadgen" --url "http://${line##* }" --secret "$SECRET" --run-id "seal-$1-$RANDOM" \
    --phases export --export-format "$format" --server-pid "$errand_pid")
  kill -TERM "$errand_pid"; wait "$errand_pid" 2>/dev/null || true; errand_pid=""
  echo "$1 sealed=$sealed $line"
  rm -rf "${dir:?}"/*
}
for ((i = 1; i <= pairs; i++)); do
  run A
  run B
done
