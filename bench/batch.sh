#!/usr/bin/env bash
# A batch of <items> no-op children, from its POST to its one notification,
# beside its peer in the same run: the same number of no-op jobs of one
# user, inserted as a backlog while the same process runs, until the last
# ends. Both are one user's work (the per-tenant limit bounds both alike);
# the difference is what a batch adds: its creation through the API (one
# request, one statement), the counts its children's ends keep, and its
# notification.
#   bench/batch.sh [errand binary] [pairs=3] [items=10000]
# Prints per run: seconds (on the database's clock: the batch's created_at,
# or the backlog's insert, to the notification, or the last finished_at)
# and children or jobs per second; then the POST's own time (curl).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
errand=${1:-${CARGO_TARGET_DIR:-target}/release/errand} pairs=${2:-3} items=${3:-10000}
SECRET=bench-secret-that-is-long-enough-0123456789
errand_bench_database_server
# errand reads DATABASE_URL before its own variables: this run's databases are its own.
unset DATABASE_URL
base=${ERRAND_PG_SERVER%/postgres}
db=errand_batch_$$
errand_pid=""
body=$(mktemp)
cleanup() {
  if [ -n "$errand_pid" ]; then kill -TERM "$errand_pid" 2>/dev/null; wait "$errand_pid" 2>/dev/null || true; fi
  psql "$base/postgres" -Xqc "DROP DATABASE IF EXISTS $db WITH (FORCE)" 2>/dev/null || true
  rm -f "$body"
  errand_stop_private_cluster
}
trap cleanup EXIT
python3 -c "import json,sys; json.dump({'items': [{'n': i} for i in range($items)]}, sys.stdout)" >"$body"
envs=(RUST_LOG=warn "ERRAND_DATABASE__URL=$base/$db?sslmode=disable" "ERRAND_AUTH__JWT_SECRET=$SECRET"
  "ERRAND_BATCHES__MAX_ITEMS=$items" ERRAND_RATE_LIMITS__PER_USER=unlimited ERRAND_RATE_LIMITS__CREATES_PER_USER=unlimited
  ERRAND_RATE_LIMITS__PER_TENANT=unlimited ERRAND_QUOTAS__MAX_UNFINISHED_PER_USER=unlimited
  ERRAND_QUOTAS__MAX_UNFINISHED_PER_TENANT=unlimited)
token=$(env "${envs[@]}" "$errand" token --tenant bench --user bench --ttl 2h)
# Starts errand on a fresh database; sets errand_pid and address.
start() {
  local fifo line
  psql "$base/postgres" -Xqc "CREATE DATABASE $db"
  env "${envs[@]}" "$errand" migrate >/dev/null
  fifo=$(mktemp -u); mkfifo "$fifo"
  env "${envs[@]}" ERRAND_HTTP__BIND=127.0.0.1:0 "$errand" serve >"$fifo" 2>/dev/null &
  errand_pid=$!
  read -r line <"$fifo"; rm -f "$fifo"
  address="http://${line##* }"
}
stop() {
  kill -TERM "$errand_pid"; wait "$errand_pid" 2>/dev/null || true; errand_pid=""
  psql "$base/postgres" -Xqc "DROP DATABASE $db WITH (FORCE)"
}
q() { psql "$base/$db" -XAtqc "$1"; }
batch() {
  local took
  start
  took=$(curl -sS -o /dev/null -w '%{http_code} %{time_total}' -X POST "$address/batches/noop" \
    -H "Authorization: Bearer $token" -H "Idempotency-Key: bench-$RANDOM" -H 'Content-Type: application/json' \
    --data-binary "@$body")
  until [ "$(q "SELECT count(*) FROM notifications WHERE kind = 'batch_completed'")" = 1 ]; do sleep 0.2; done
  q "SELECT format('batch items=%s seconds=%s per_s=%s post=%s', b.total,
        round(extract(epoch FROM n.created_at - b.created_at)::numeric, 3),
        round(b.total / extract(epoch FROM n.created_at - b.created_at)), '$took')
     FROM batches b JOIN notifications n ON n.batch_id = b.id"
  stop
}
jobs() {
  local started
  start
  started=$(q "SELECT clock_timestamp()")
  psql "$base/$db" -Xq -v ON_ERROR_STOP=1 -v n="$items" <<'SQL'
WITH recorded AS (
    INSERT INTO jobs (id, tenant_id, user_id, idempotency_key, fingerprint, job_type, params, max_attempts)
    SELECT errand_uuid_v7(), 'bench', 'bench', 'jobs-' || i, '\x00', 'noop', jsonb_build_object('n', i), 3
    FROM generate_series(1, :n) AS i
    RETURNING id, tenant_id, user_id, job_type, run_at
)
INSERT INTO job_queue (job_id, tenant_id, user_id, job_type, run_at, turn)
SELECT id, tenant_id, user_id, job_type, run_at, row_number() OVER (ORDER BY id) - 1 FROM recorded;
NOTIFY errand_jobs;
SQL
  until [ "$(q "SELECT count(*) FROM job_queue")" = 0 ]; do sleep 0.2; done
  q "SELECT format('jobs  items=%s seconds=%s per_s=%s', count(*),
        round(extract(epoch FROM max(finished_at) - '$started'::timestamptz)::numeric, 3),
        round(count(*) / extract(epoch FROM max(finished_at) - '$started'::timestamptz)))
     FROM jobs"
  stop
}
for ((i = 1; i <= pairs; i++)); do
  jobs
  batch
done
