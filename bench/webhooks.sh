#!/usr/bin/env bash
# Webhook delivery throughput to a local endpoint (bench/sink.py, answering
# 204), beside its peer in the same run: the drain rate of as many no-op
# jobs. Deliveries that keep up with the fastest drain never pile up.
#   bench/webhooks.sh [errand binary] [pairs=3] [deliveries=20000]
# Delivery side: <deliveries> job ends already recorded, each with a
# delivery due to its tenant's endpoint (32 tenants, one endpoint each, all
# at the sink), and an errand process that runs no jobs (global_limit 0):
# only the WebhookSender works. Timed on the database's clock from just
# before errand starts to the last delivered_at. Drain side: bench/drain.sh's
# backlog of as many jobs, one process, no endpoints.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
errand=${1:-${CARGO_TARGET_DIR:-target}/release/errand} pairs=${2:-3} n=${3:-20000}
SECRET=bench-secret-that-is-long-enough-0123456789
errand_bench_database_server
# errand reads DATABASE_URL before its own variables: this run's databases are its own.
unset DATABASE_URL
base=${ERRAND_PG_SERVER%/postgres}
source bench/drain.sh
db=errand_hooks_$$
errand_pid="" sink_pid=""
cleanup() {
  if [ -n "$errand_pid" ]; then kill -TERM "$errand_pid" 2>/dev/null; wait "$errand_pid" 2>/dev/null || true; fi
  if [ -n "$sink_pid" ]; then kill -TERM "$sink_pid" 2>/dev/null; wait "$sink_pid" 2>/dev/null || true; fi
  errand_stop_drain
  psql "$base/postgres" -Xqc "DROP DATABASE IF EXISTS $db WITH (FORCE)" 2>/dev/null || true
  errand_stop_private_cluster
}
trap cleanup EXIT
fifo=$(mktemp -u); mkfifo "$fifo"
python3 bench/sink.py >"$fifo" &
sink_pid=$!
read -r port <"$fifo"; rm -f "$fifo"
envs=(RUST_LOG=warn "ERRAND_DATABASE__URL=$base/$db?sslmode=disable" "ERRAND_AUTH__JWT_SECRET=$SECRET"
  ERRAND_WEBHOOKS__ALLOW_HOSTS=127.0.0.1)
q() { psql "$base/$db" -XAtqc "$1"; }
deliveries() {
  local started
  psql "$base/postgres" -Xqc "CREATE DATABASE $db"
  env "${envs[@]}" "$errand" migrate >/dev/null
  psql "$base/$db" -Xq -v ON_ERROR_STOP=1 -v n="$n" -v url="http://127.0.0.1:$port/hooks" <<'SQL'
INSERT INTO webhook_endpoints (tenant_id, url, events, secret, created_by)
SELECT 'tenant-' || t, :'url', ARRAY['job.completed'], 'whsec_' || encode(sha256(random()::text::bytea), 'base64'), 'bench'
FROM generate_series(0, 31) AS t;
WITH ended AS (
    INSERT INTO jobs (id, tenant_id, user_id, idempotency_key, fingerprint, job_type, params, max_attempts,
                      state, attempt, finished_at)
    SELECT errand_uuid_v7(), 'tenant-' || (i % 32), 'bench', 'hooks-' || i, '\x00', 'noop', '{}', 3,
           'completed', 1, now()
    FROM generate_series(1, :n) AS i
    RETURNING id, tenant_id, run
)
INSERT INTO webhook_deliveries (endpoint_id, tenant_id, job_id, run, event)
SELECT e.id, j.tenant_id, j.id, j.run, 'job.completed' FROM ended j JOIN webhook_endpoints e USING (tenant_id);
VACUUM ANALYZE jobs;
VACUUM ANALYZE webhook_deliveries;
SQL
  started=$(q "SELECT clock_timestamp()")
  env "${envs[@]}" ERRAND_WORKERS__GLOBAL_LIMIT=0 ERRAND_HTTP__BIND=127.0.0.1:0 "$errand" serve >/dev/null 2>&1 &
  errand_pid=$!
  until [ "$(q "SELECT count(*) FROM webhook_deliveries WHERE state <> 'delivered'")" = 0 ]; do sleep 0.2; done
  kill -TERM "$errand_pid"; wait "$errand_pid" 2>/dev/null || true; errand_pid=""
  q "SELECT format('deliveries n=%s seconds=%s per_s=%s', count(*),
        round(extract(epoch FROM max(delivered_at) - '$started'::timestamptz)::numeric, 3),
        round(count(*) / extract(epoch FROM max(delivered_at) - '$started'::timestamptz)))
     FROM webhook_deliveries"
  psql "$base/postgres" -Xqc "DROP DATABASE $db WITH (FORCE)"
}
drain() {
  local url="$base/$db?sslmode=disable" started
  psql "$base/postgres" -Xqc "CREATE DATABASE $db"
  env "${envs[@]}" "$errand" migrate >/dev/null
  errand_drain_insert "$url" "$n" 32 noop '{}'
  started=$(psql "$url" -XAtqc "SELECT clock_timestamp()")
  env "${envs[@]}" ERRAND_HTTP__BIND=127.0.0.1:0 "$errand" serve >/dev/null 2>&1 &
  errand_pid=$!
  errand_drain_timed "$url" "$started" "drain"
  kill -TERM "$errand_pid"; wait "$errand_pid" 2>/dev/null || true; errand_pid=""
  psql "$base/postgres" -Xqc "DROP DATABASE $db WITH (FORCE)"
}
for ((i = 1; i <= pairs; i++)); do
  drain
  deliveries
done
