#!/usr/bin/env bash
# What pruning costs an idle errand whose history is large and one of whose
# tenants keeps its own history short: each binary gets a database of
# <jobs> finished no-op jobs of 100 tenants over the last 60 days (the
# history's retention is 90 days, so none is due), `tenant-0` keeping its
# history for an hour (`tenant_retention`), and runs idle with the Pruner
# every second. After a warm-up (tenant-0's old jobs go), PostgreSQL's CPU is
# read over <seconds>: the steady cost of the passes. Alternating, <pairs>:
#   bench/prune.sh <errand-A> <errand-B> [pairs=2] [jobs=300000] [seconds=30]
# PRUNE_CONFIG_A/B: each side's config.toml (default ./config.toml; an older
# binary needs its own).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
a=$1 b=$2 pairs=${3:-2} jobs=${4:-300000} seconds=${5:-30}
SECRET=bench-secret-that-is-long-enough-0123456789
errand_bench_database_server
unset DATABASE_URL
base=${ERRAND_PG_SERVER%/postgres}
errand_pid="" db=""
cleanup() {
  if [ -n "$errand_pid" ]; then kill -TERM "$errand_pid" 2>/dev/null; wait "$errand_pid" 2>/dev/null || true; fi
  [ -z "$db" ] || psql "$base/postgres" -Xqc "DROP DATABASE IF EXISTS $db WITH (FORCE)" 2>/dev/null || true
  errand_stop_private_cluster
}
trap cleanup EXIT

# A run of binary $2 (side $1) on a database of its own.
run() {
  local side=$1 errand=$2 before after left config=${PRUNE_CONFIG_A:-config.toml}
  [ "$side" = A ] || config=${PRUNE_CONFIG_B:-config.toml}
  db=errand_prune_$$_${side,,}
  psql "$base/postgres" -Xqc "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
  local envs=(RUST_LOG=warn "ERRAND_CONFIG=$config" "ERRAND_DATABASE__URL=$base/$db?sslmode=disable" "ERRAND_AUTH__JWT_SECRET=$SECRET"
    ERRAND_STORAGE__PRUNE_INTERVAL=1s ERRAND_HISTORY__RETENTION=90d)
  env "${envs[@]}" "$errand" migrate >/dev/null
  # Ids are UUID v7s of the time each job was made, as errand's are.
  psql "$base/$db" -Xq -v ON_ERROR_STOP=1 -v n="$jobs" <<'SQL'
INSERT INTO jobs (id, tenant_id, user_id, idempotency_key, fingerprint, job_type, params, max_attempts,
                  state, attempt, created_at, finished_at)
SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
                                      PLACING substring(int8send(floor(extract(epoch FROM at) * 1000)::bigint) FROM 3)
                                      FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid,
       'tenant-' || (i % 100), 'bench', 'prune-' || i, '\x00', 'noop', '{}', 3, 'completed', 1, at, at + interval '1 second'
FROM (SELECT i, now() - interval '60 days' * i / :n AS at FROM generate_series(1, :n) AS i) g;
INSERT INTO tenant_retention (tenant_id, retention, updated_by) VALUES ('tenant-0', interval '1 hour', 'bench');
VACUUM ANALYZE jobs;
SQL
  env "${envs[@]}" "$errand" serve >/dev/null 2>&1 &
  errand_pid=$!
  # Warm-up: until tenant-0's old jobs are gone.
  for _ in $(seq 120); do
    left=$(psql "$base/$db" -XAtqc "SELECT count(*) FROM jobs WHERE tenant_id = 'tenant-0' AND finished_at < now() - interval '1 hour'")
    [ "$left" = 0 ] && break
    sleep 1
  done
  sleep 3
  before=$(errand_postgres_ticks)
  sleep "$seconds"
  after=$(errand_postgres_ticks)
  kill -TERM "$errand_pid"; wait "$errand_pid" 2>/dev/null || true; errand_pid=""
  psql "$base/postgres" -Xqc "DROP DATABASE $db WITH (FORCE)"; db=""
  echo "$side jobs=$jobs tenant0_left=$left postgres_cpu_ms_per_s=$(( (after - before) * 10000 / $(getconf CLK_TCK) / seconds ))"
}

for _ in $(seq "$pairs"); do
  run A "$a"
  run B "$b"
done
