# The SQL ceiling of errand's drain: errand's own claim and end statements,
# run by pgbench on a backlog like the drains', with no errand process. Meant
# to be sourced (by scripts/bench, after scripts/lib.sh; it sources
# bench/drain.sh for the backlog if that is not loaded yet). Defines
#
#   errand_ceiling <server-url> <jobs>
#
# which makes a database on the server of <server-url> (any database of it;
# named $ERRAND_CEILING_DB, default errand_sql_ceiling_<pid>), applies the
# files migrations/V<n>__*.sql to it with psql in version order, each in
# one transaction as errand applies them, inserts
# <jobs> no-op jobs round-robin over 32 tenants as bench/drain.sh does, then
# drains them with pgbench (-M prepared, jit off as errand's sessions have
# it), $ERRAND_CEILING_CLIENTS clients (default 2), each transaction:
#
#   1. a claim of up to K jobs: the statement `Queue::claim` prepares (`CLAIM`,
#      a call of errand_claim_due), bound as one errand process at its
#      defaults binds it (K = half the global worker limit, the tenants it
#      walks, tenant limit, lease, job types, the cursor each claim returns;
#      one owner for the run);
#   2. if it got jobs, their end as `completed` with a null result, all in one
#      statement: the one `finish_many_if_running` prepares (`FINISH_FENCED`),
#      as errand's Completer writes a claimed batch of no-op jobs that ended
#      together.
#
# Both statements are read out of the Rust source at each run, and the batch
# sizes out of the code and config.toml, by bench/ceiling_script.py. Two
# clients mirror one process's overlap: its dispatcher claims half the slots
# while the other half's ends are written. (Two clients can also claim at
# the same moment, which one process never does: the second claim then skips
# the tenants the first holds, and may come back with fewer jobs.)
#
# Prints, timed on the database's clock as errand_drain times errand:
#   ceiling claim+end jobs=<N> tenants=32 clients=<C> batch=<K> seconds=<S> jobs_per_s=<R> busy_seconds=<B> busy_jobs_per_s=<Q> claim_to_end_ms=<H> cpu_us_per_job=<U>
# seconds from just before pgbench starts to the last job's finished_at;
# busy_seconds from the first job's started_at (its claim) to the same;
# cpu_us_per_job the machine's CPU time over the drain (pgbench's and
# PostgreSQL's, and the checks' psql) per job, as errand_drain counts it.

ERRAND_CEILING_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
declare -F errand_drain_insert >/dev/null || source "$ERRAND_CEILING_SRC/drain.sh"

errand_ceiling() {
  local server=$1 jobs=$2 tenants=32 clients=${ERRAND_CEILING_CLIENTS:-2}
  local root db query="" url script log settings batch owner started remaining per_client line kv f cpu_at_start cpu failed=""
  local defines=()
  root=$(cd "$ERRAND_CEILING_SRC/.." && pwd)
  db=${ERRAND_CEILING_DB:-errand_sql_ceiling_$$}
  [[ $server == *\?* ]] && query="?${server#*\?}"
  url="${server%%\?*}"; url="${url%/*}/$db$query"
  script=$(mktemp); log=$(mktemp)
  settings=$(python3 "$ERRAND_CEILING_SRC/ceiling_script.py" "$root" "$script") || { rm -f "$script" "$log"; return 1; }
  for kv in $settings; do defines+=(-D "$kv"); done
  batch=$(tr ' ' '\n' <<<"$settings" | sed -n 's/^claim_jobs=//p')

  psql "$server" -Xqc "CREATE DATABASE $db" || { rm -f "$script" "$log"; return 1; }
  # The schema: every V<n>__*.sql of migrations/, by version number.
  for f in $(ls "$root"/migrations/V*__*.sql | sed 's|.*/V\([0-9]*\)__[^/]*$|\1 &|' | sort -n | cut -d' ' -f2-); do
    psql "$url" -Xq -1 -v ON_ERROR_STOP=1 -f "$f" >/dev/null || { errand_log "ceiling: $f failed"; failed=1; break; }
  done
  if [ -n "$failed" ] || ! errand_drain_insert "$url" "$jobs" "$tenants" noop '{}'; then
    psql "$server" -Xqc "DROP DATABASE $db WITH (FORCE)"; rm -f "$script" "$log"; return 1
  fi

  owner=$(psql "$url" -XAtqc "SELECT gen_random_uuid()")
  started=$(psql "$url" -XAtqc "SELECT clock_timestamp()")
  cpu_at_start=$(errand_cpu_seconds)
  # Enough transactions per client for the backlog and some to spare (empty
  # claims at the end cost little, and come after the last end, which the
  # timing stops at); another pass if some jobs are left all the same.
  while remaining=$(psql "$url" -XAtqc "SELECT count(*) FROM job_queue") && [ "$remaining" != 0 ]; do
    per_client=$(( (remaining + clients * batch - 1) / (clients * batch) + 10 ))
    if ! PGOPTIONS="${PGOPTIONS:-} -c jit=off" pgbench -n -M prepared -c "$clients" -j "$clients" -t "$per_client" \
        -D fresh=1 -D owner="$owner" "${defines[@]}" -f "$script" "$url" >"$log" 2>&1; then
      errand_log "ceiling: pgbench failed:"; tail -5 "$log" >&2
      psql "$server" -Xqc "DROP DATABASE $db WITH (FORCE)"; rm -f "$script" "$log"; return 1
    fi
  done
  line=$(errand_drain_timed "$url" "$started" "ceiling claim+end")
  cpu=$(errand_cpu_us_per_job "$cpu_at_start" "$jobs")
  printf '%s cpu_us_per_job=%s\n' "$line" "$cpu" | sed "s/ seconds=/ tenants=$tenants clients=$clients batch=$batch seconds=/"
  psql "$server" -Xqc "DROP DATABASE $db WITH (FORCE)"
  rm -f "$script" "$log"
}
