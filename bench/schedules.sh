#!/usr/bin/env bash
# 100,000 schedules due in the same minute: how long until all their jobs
# exist, and what it does to interactive job creation meanwhile. The
# schedules (of 1,000 tenants, 10 users each, `noop`) are written straight
# into a fresh database, all due 20 s after errand starts; while the
# scheduler fires them, one client creates a job through the API every
# 50 ms, from 10 s before the firing until it is done. The jobs are not run
# (`workers.global_limit = 0`): this measures the scheduling, not the work.
#   bench/schedules.sh [errand binary] [schedules=100000]
# Prints: seconds from the due time to the last job recorded (the database's
# clock), jobs per second, and the interactive creates' median and p99 in
# ms before the due time and while firing.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
errand=${1:-${CARGO_TARGET_DIR:-target}/release/errand} count=${2:-100000}
SECRET=bench-secret-that-is-long-enough-0123456789
errand_bench_database_server
# errand reads DATABASE_URL before its own variables: this run's database is its own.
unset DATABASE_URL
base=${ERRAND_PG_SERVER%/postgres}
db=errand_schedules_$$
errand_pid=""
latencies=$(mktemp)
cleanup() {
  if [ -n "$errand_pid" ]; then kill -TERM "$errand_pid" 2>/dev/null; wait "$errand_pid" 2>/dev/null || true; fi
  psql "$base/postgres" -Xqc "DROP DATABASE IF EXISTS $db WITH (FORCE)" 2>/dev/null || true
  rm -f "$latencies"
  errand_stop_private_cluster
}
trap cleanup EXIT
envs=(RUST_LOG=warn "ERRAND_DATABASE__URL=$base/$db?sslmode=disable" "ERRAND_AUTH__JWT_SECRET=$SECRET"
  ERRAND_RATE_LIMITS__PER_USER=unlimited ERRAND_RATE_LIMITS__CREATES_PER_USER=unlimited
  ERRAND_RATE_LIMITS__PER_TENANT=unlimited ERRAND_WORKERS__GLOBAL_LIMIT=0
  ERRAND_JOB_TYPES__NOOP__SCHEDULABLE=true)
q() { psql "$base/$db" -XAtqc "$1"; }

psql "$base/postgres" -Xqc "CREATE DATABASE $db"
env "${envs[@]}" "$errand" migrate >/dev/null
due=$(q "SELECT to_char(now() + interval '40 seconds', 'YYYY-MM-DD\"T\"HH24:MI:SS.USOF')")
q "INSERT INTO schedules (tenant_id, user_id, idempotency_key, fingerprint, job_type, params, cron, timezone,
                          next_run_at, next_local)
   SELECT 't' || (g % 1000), 'u' || (g % 10000), 'k' || g, '\\x00', 'noop', '{}', '0 * * * *', 'UTC',
          '$due'::timestamptz, ('$due'::timestamptz AT TIME ZONE 'UTC')
   FROM generate_series(1, $count) AS g"
q "VACUUM ANALYZE schedules"

fifo=$(mktemp -u); mkfifo "$fifo"
env "${envs[@]}" ERRAND_HTTP__BIND=127.0.0.1:0 "$errand" serve >"$fifo" 2>/dev/null &
errand_pid=$!
read -r line <"$fifo"; rm -f "$fifo"
address="http://${line##* }"
token=$(env "${envs[@]}" "$errand" token --tenant interactive --user bench --ttl 2h)
echo "$count schedules due at $due" >&2

# Until every schedule has made its job: one interactive create every 50 ms,
# each line `<epoch seconds at send> <ms>`.
until [ "$(q "SELECT count(*) FROM jobs WHERE schedule_id IS NOT NULL")" -ge "$count" ]; do
  for _ in $(seq 20); do
    sent=$(date +%s.%N)
    ms=$(curl -sS -o /dev/null -w '%{time_total}' -X POST "$address/jobs/noop" -H "Authorization: Bearer $token" \
      -H "Idempotency-Key: i-$sent" -H 'Content-Type: application/json' -d '{}')
    echo "$sent $ms" >>"$latencies"
    sleep 0.05
  done
done
q "SELECT format('fired %s jobs: %s s from the due time to the last, %s jobs/s', count(*),
        round(extract(epoch FROM max(created_at) - '$due'::timestamptz)::numeric, 2),
        round(count(*) / greatest(extract(epoch FROM max(created_at) - '$due'::timestamptz), 0.001)::numeric))
   FROM jobs WHERE schedule_id IS NOT NULL"
last=$(q "SELECT extract(epoch FROM max(created_at)) FROM jobs WHERE schedule_id IS NOT NULL")
due_epoch=$(q "SELECT extract(epoch FROM '$due'::timestamptz)")
python3 - "$latencies" "$due_epoch" "$last" <<'PY'
import sys
rows = [tuple(map(float, line.split())) for line in open(sys.argv[1])]
due, last = float(sys.argv[2]), float(sys.argv[3])
def report(label, ms):
    ms = sorted(ms)
    if not ms:
        return print(f"{label}: no requests")
    print(f"{label}: {len(ms)} creates, median {ms[len(ms) // 2]:.1f} ms, p99 {ms[min(len(ms) - 1, int(len(ms) * 0.99))]:.1f} ms")
report("interactive creates before the due time", [t * 1000 for s, t in rows if s < due])
report("interactive creates while firing", [t * 1000 for s, t in rows if due <= s <= last])
PY
