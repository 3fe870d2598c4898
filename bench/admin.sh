#!/usr/bin/env bash
# The operators' console on a large history: how fast the overview and the
# first page of filtered job lists answer with 1,000,000 finished jobs
# (and 10,000 unfinished ones) in the database, beside what the same
# questions cost asked without the cap: a full count of the history by state.
#   bench/admin.sh [errand binary] [finished=1000000] [requests=21]
# Prints, per route, the median and the 90th percentile of `requests` timed
# requests (curl's time_total, after three unmeasured ones), then the
# uncapped counts' medians (psql's \timing, five runs).
#
# The history: 100 tenants, 10 users each, 5 job types; 97% completed, 2%
# failed ("timeout talking to the bank" or "HTTP 502 from the mailer"), 1%
# cancelled; params {"customer": {"id": <0..999>}, "region": ...}.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
errand=${1:-${CARGO_TARGET_DIR:-target}/release/errand} finished=${2:-1000000} requests=${3:-21}
SECRET=bench-secret-that-is-long-enough-0123456789
errand_bench_database_server
# errand reads DATABASE_URL before its own variables: this run's database is its own.
unset DATABASE_URL
base=${ERRAND_PG_SERVER%/postgres}
db=errand_admin_$$
errand_pid=""
cleanup() {
  if [ -n "$errand_pid" ]; then kill -TERM "$errand_pid" 2>/dev/null; wait "$errand_pid" 2>/dev/null || true; fi
  psql "$base/postgres" -Xqc "DROP DATABASE IF EXISTS $db WITH (FORCE)" 2>/dev/null || true
  errand_stop_private_cluster
}
trap cleanup EXIT
envs=(RUST_LOG=warn "ERRAND_DATABASE__URL=$base/$db?sslmode=disable" "ERRAND_AUTH__JWT_SECRET=$SECRET"
  ERRAND_RATE_LIMITS__PER_USER=unlimited ERRAND_RATE_LIMITS__PER_TENANT=unlimited
  # The unfinished backlog must stay put while it is measured: no process here runs jobs.
  ERRAND_WORKERS__GLOBAL_LIMIT=0)
q() { psql "$base/$db" -XAtqc "$1"; }

psql "$base/postgres" -Xqc "CREATE DATABASE $db"
env "${envs[@]}" "$errand" migrate >/dev/null
echo "filling: $finished finished jobs, 10000 unfinished" >&2
q "INSERT INTO jobs (id, tenant_id, user_id, idempotency_key, fingerprint, job_type, params, state, max_attempts,
                     attempt, created_at, finished_at, error_message, result)
   SELECT errand_uuid_v7(), 't' || (g % 100), 'u' || (g % 1000), 'k' || g, '\\x00', 'type_' || abs(hashint4(g)::bigint % 5),
          jsonb_build_object('customer', jsonb_build_object('id', abs(hashint4(g + 1)::bigint % 1000)), 'region', 'eu-' || (g % 3)),
          s.state::job_state, 3, 1, now() - (($finished - g) * interval '10 ms'), now() - (($finished - g) * interval '10 ms'),
          CASE s.state WHEN 'failed' THEN CASE WHEN g % 2 = 0 THEN 'timeout talking to the bank'
                                               ELSE 'HTTP 502 from the mailer' END
                       WHEN 'cancelled' THEN 'cancelled by its owner' END,
          CASE s.state WHEN 'completed' THEN '{\"rows\": 10}'::jsonb END
   FROM generate_series(1, $finished) AS g
   CROSS JOIN LATERAL (SELECT CASE WHEN g % 100 < 2 THEN 'failed' WHEN g % 100 = 2 THEN 'cancelled'
                                   ELSE 'completed' END AS state) s"
q "WITH made AS (
     INSERT INTO jobs (id, tenant_id, user_id, idempotency_key, fingerprint, job_type, params, max_attempts)
     SELECT errand_uuid_v7(), 't' || (g % 100), 'u' || (g % 1000), 'w' || g, '\\x00', 'type_' || (g % 5),
            jsonb_build_object('customer', jsonb_build_object('id', g % 1000)), 3
     FROM generate_series(1, 10000) AS g
     RETURNING id, tenant_id, user_id, job_type)
   INSERT INTO job_queue (job_id, tenant_id, user_id, job_type, turn)
   SELECT id, tenant_id, user_id, job_type, row_number() OVER (PARTITION BY tenant_id, user_id ORDER BY id) - 1 FROM made"
q "VACUUM ANALYZE"

fifo=$(mktemp -u); mkfifo "$fifo"
env "${envs[@]}" ERRAND_HTTP__BIND=127.0.0.1:0 "$errand" serve >"$fifo" 2>/dev/null &
errand_pid=$!
read -r line <"$fifo"; rm -f "$fifo"
address="http://${line##* }"
token=$(env "${envs[@]}" "$errand" token --operator --user bench --ttl 2h)

# Median and 90th percentile, in ms, of `requests` GETs of $1.
measure() {
  local i times=()
  for i in 1 2 3; do curl -sS -o /dev/null -H "Authorization: Bearer $token" "$address$1"; done
  for ((i = 0; i < requests; i++)); do
    times+=("$(curl -sS -o /dev/null -w '%{http_code} %{time_total}' -H "Authorization: Bearer $token" "$address$1")")
  done
  printf '%s\n' "${times[@]}" | python3 -c '
import sys
rows = [line.split() for line in sys.stdin]
bad = [r[0] for r in rows if r[0] != "200"]
if bad: sys.exit(f"{sys.argv[1]}: answered {bad[0]}")
ms = sorted(float(r[1]) * 1000 for r in rows)
print(f"{sys.argv[1]:<55} median {ms[len(ms) // 2]:7.1f} ms   p90 {ms[int(len(ms) * 0.9)]:7.1f} ms")' "$1"
}
echo "errand $("$errand" --version 2>/dev/null || echo "$errand"): $(q "SELECT count(*) FROM jobs") jobs"
measure "/admin/overview"
measure "/admin/queues"
measure "/admin/jobs"
measure "/admin/jobs?status=failed"
measure "/admin/jobs?status=failed&type=type_3"
measure "/admin/jobs?tenant=t42&status=failed"
measure "/admin/jobs?tenant=t42&user=u142"
measure "/admin/jobs?error=timeout"
measure "/admin/jobs?status=failed&error=mailer"
measure "/admin/jobs?param=customer.id=42"
measure "/admin/jobs?status=failed&type=type_3&param=region=eu-1"
measure "/admin/jobs?user=u7"
# The worst case: a filter no job matches walks the whole history (no index
# serves free text); the first page takes as long as the scan.
measure "/admin/jobs?error=no-such-error"
measure "/admin/actions"

# The same questions without a cap: what a page that counts the whole
# history (as riverui did, #106) pays on every refresh.
uncapped() {
  local sql=$1 i out
  out=$(for i in 1 2 3 4 5; do psql "$base/$db" -Xq -c '\timing on' -c "$sql" | grep '^Time:'; done)
  echo "$out" | python3 -c '
import sys
ms = sorted(float(line.split()[1]) for line in sys.stdin)
print(f"uncapped: {sys.argv[1]:<46} median {ms[len(ms) // 2]:7.1f} ms")' "$sql"
}
uncapped "SELECT state, count(*) FROM jobs GROUP BY state"
uncapped "SELECT job_type, state, count(*) FROM jobs GROUP BY 1, 2"
uncapped "SELECT count(*) FROM jobs WHERE state = 'completed'"
