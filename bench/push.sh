#!/usr/bin/env bash
# Web Push (issue 45): what writing a push message with every job end costs
# a drain, and how fast messages go out to a local push service
# (bench/sink.py, answering 204 to everything).
#   bench/push.sh [errand binary] [pairs=3] [jobs=40000]
# Drain side, alternating: bench/drain.sh's backlog of <jobs> no-op jobs
# over 32 tenants (each tenant's jobs are one user's), one process; A with
# push off; B with push on and each of the 32 users one device subscribed
# at the sink, every one in quiet hours, so that every end writes a
# push_outbox row and none is sent during the drain (what writing the row
# costs); C as B out of quiet hours, so that the PushSender sends each
# message beside the drain (what the whole of Web Push costs it). Prints
# jobs/s, and how many messages had gone out when the last job ended.
# Delivery side: <jobs> job ends already recorded, each with its message
# due, and an errand process that runs no jobs (global_limit 0): only the
# PushSender works. Timed on the database's clock from just before errand
# starts to the last sent_at.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
errand=${1:-${CARGO_TARGET_DIR:-target}/release/errand} pairs=${2:-3} n=${3:-40000}
SECRET=bench-secret-that-is-long-enough-0123456789
errand_bench_database_server
# errand reads DATABASE_URL before its own variables: this run's databases are its own.
unset DATABASE_URL
base=${ERRAND_PG_SERVER%/postgres}
source bench/drain.sh
db=errand_push_$$
errand_pid="" sink_pid=""
cleanup() {
  if [ -n "$errand_pid" ]; then kill -TERM "$errand_pid" 2>/dev/null; wait "$errand_pid" 2>/dev/null || true; fi
  if [ -n "$sink_pid" ]; then kill -TERM "$sink_pid" 2>/dev/null; wait "$sink_pid" 2>/dev/null || true; fi
  psql "$base/postgres" -Xqc "DROP DATABASE IF EXISTS $db WITH (FORCE)" 2>/dev/null || true
  errand_stop_private_cluster
}
trap cleanup EXIT
fifo=$(mktemp -u); mkfifo "$fifo"
python3 bench/sink.py >"$fifo" &
sink_pid=$!
read -r port <"$fifo"; rm -f "$fifo"
keys=$("$errand" push keys)
vapid() { printf '%s\n' "$keys" | sed -n "s/^$1 = \"\(.*\)\"$/\1/p"; }
# A device's keys: any P-256 point will do (the sink decrypts nothing), and a 16-byte secret.
device_key=$("$errand" push keys | sed -n 's/^vapid_public_key = "\(.*\)"$/\1/p')
push_on=(ERRAND_PUSH__ENABLED=true "ERRAND_PUSH__VAPID_PUBLIC_KEY=$(vapid vapid_public_key)"
  "ERRAND_PUSH__VAPID_PRIVATE_KEY=$(vapid vapid_private_key)" ERRAND_PUSH__SUBJECT=mailto:bench@example.com
  ERRAND_PUSH__ALLOW_HOSTS=127.0.0.1 ERRAND_PUSH__PRIVATE_HOSTS=127.0.0.1)
url="$base/$db?sslmode=disable"
envs=(RUST_LOG=warn "ERRAND_DATABASE__URL=$url" "ERRAND_AUTH__JWT_SECRET=$SECRET")
q() { psql "$url" -XAtqc "$1"; }
# One device for each of the backlog's 32 users, at the sink.
subscribe_all() {
  psql "$url" -Xq -v ON_ERROR_STOP=1 -v endpoint="http://127.0.0.1:$port/push/" -v key="$device_key" <<'SQL'
INSERT INTO push_subscriptions (tenant_id, user_id, endpoint, p256dh, auth)
SELECT 'tenant-' || t, 'bench', :'endpoint' || t, :'key', 'AAECAwQFBgcICQoLDA0ODw'
FROM generate_series(0, 31) AS t;
SQL
}
# Every bench user in quiet hours from an hour ago to an hour from now.
quiet_all() {
  q "INSERT INTO notification_settings (tenant_id, user_id, timezone, quiet_start, quiet_end)
     SELECT 'tenant-' || t, 'bench', 'UTC', (now() AT TIME ZONE 'UTC' - interval '1 hour')::time,
            (now() AT TIME ZONE 'UTC' + interval '1 hour')::time
     FROM generate_series(0, 31) AS t" >/dev/null
}
# A drain, side $1: A push off; B push on, every user subscribed and quiet; C as B, not quiet.
drain() {
  local side=$1 started line sent settings=()
  psql "$base/postgres" -Xqc "CREATE DATABASE $db"
  env "${envs[@]}" "$errand" migrate >/dev/null
  errand_drain_insert "$url" "$n" 32 noop '{}'
  if [ "$side" != A ]; then subscribe_all; settings=("${push_on[@]}"); fi
  if [ "$side" = B ]; then quiet_all; fi
  started=$(q "SELECT clock_timestamp()")
  env "${envs[@]}" "${settings[@]}" ERRAND_HTTP__BIND=127.0.0.1:0 "$errand" serve >/dev/null 2>&1 &
  errand_pid=$!
  line=$(errand_drain_timed "$url" "$started" "drain $side")
  sent=$(q "SELECT count(*) FILTER (WHERE sent_at <= (SELECT max(finished_at) FROM jobs)) || '/' || count(*) FROM push_outbox")
  kill -TERM "$errand_pid"; wait "$errand_pid" 2>/dev/null || true; errand_pid=""
  echo "$line push_messages_sent_by_then=$sent"
  psql "$base/postgres" -Xqc "DROP DATABASE $db WITH (FORCE)"
}
deliveries() {
  local started
  psql "$base/postgres" -Xqc "CREATE DATABASE $db"
  env "${envs[@]}" "$errand" migrate >/dev/null
  subscribe_all
  psql "$url" -Xq -v ON_ERROR_STOP=1 -v n="$n" <<'SQL'
WITH ended AS (
    INSERT INTO jobs (id, tenant_id, user_id, idempotency_key, fingerprint, job_type, params, max_attempts,
                      state, attempt, finished_at)
    SELECT errand_uuid_v7(), 'tenant-' || (i % 32), 'bench', 'push-' || i, '\x00', 'noop', '{}', 3,
           'completed', 1, now()
    FROM generate_series(1, :n) AS i
    RETURNING id, tenant_id, user_id, run
)
INSERT INTO push_outbox (subscription_id, job_id, run, tenant_id, user_id, job_type, job_status)
SELECT s.id, j.id, j.run, j.tenant_id, j.user_id, 'noop', 'completed'
FROM ended j JOIN push_subscriptions s USING (tenant_id, user_id);
VACUUM ANALYZE jobs;
VACUUM ANALYZE push_outbox;
SQL
  started=$(q "SELECT clock_timestamp()")
  env "${envs[@]}" "${push_on[@]}" ERRAND_WORKERS__GLOBAL_LIMIT=0 ERRAND_HTTP__BIND=127.0.0.1:0 "$errand" serve >/dev/null 2>&1 &
  errand_pid=$!
  until [ "$(q "SELECT count(*) FROM push_outbox WHERE state <> 'sent'")" = 0 ]; do sleep 0.2; done
  kill -TERM "$errand_pid"; wait "$errand_pid" 2>/dev/null || true; errand_pid=""
  q "SELECT format('push deliveries n=%s seconds=%s per_s=%s', count(*),
        round(extract(epoch FROM max(sent_at) - '$started'::timestamptz)::numeric, 3),
        round(count(*) / extract(epoch FROM max(sent_at) - '$started'::timestamptz)))
     FROM push_outbox"
  psql "$base/postgres" -Xqc "DROP DATABASE $db WITH (FORCE)"
}
for ((i = 1; i <= pairs; i++)); do
  drain A
  drain B
  drain C
done
for ((i = 1; i <= pairs; i++)); do
  deliveries
done
